"""A citation query unmasked: its facts (:func:`~countercase.citations.run.facts_query`) as the
judgment prints them, section numbers, act names and party names kept, with only its own
citation mentions removed (a mention names a judgment it cites: its relevance label).

Corpus cases and the trees' nodes are unmasked; the learned ranker's ``ltr_unmasked`` reads
these, ``ltr`` the masked queries of the collection's ``topics.tsv``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from countercase.citations.links import REPORTERS
from countercase.citations.run import facts_query
from countercase.extract.run import read_sections
from countercase.ingest.run import read_documents

# a case name as cited, "State of U.P. v. Ram Singh": up to six capitalised words (and of, the,
# and) before the "v.", the other side up to the next clause mark
_CASE_NAME = re.compile(r"(?:(?:[A-Z][\w.&'-]*|of|the|and|&)\s){1,6}?(?:v\.?|vs\.?|Vs\.?|versus)\s"
                        r"[^;:,()\n\[\]]{1,80}")


def strip_citations(text: str) -> tuple[str, int]:
    """``text`` without its reporter citations and cited case names; the mentions removed."""
    spans = sorted([(m.start(), m.end()) for rx in REPORTERS.values() for m in rx.finditer(text)]
                   + [(m.start(), m.end()) for m in _CASE_NAME.finditer(text)])
    out, position, removed = [], 0, 0
    for start, end in spans:
        if start < position:  # overlapping readings of one mention
            position = max(position, end)
            continue
        out.append(text[position:start])
        position, removed = end, removed + 1
    out.append(text[position:])
    return " ".join("".join(out).split()), removed


def unmasked_queries(qids: Iterable[str], documents: Path, extract_dir: Path,
                     query_chars: int) -> dict[str, str]:
    """qid -> the unmasked facts of each citation query ``qids`` names (a corpus judgment)."""
    wanted = set(qids)
    texts = {doc.doc_id: doc.text for doc in read_documents(documents) if doc.doc_id in wanted}
    segments = read_sections(extract_dir / "sections.parquet")
    return {qid: strip_citations(facts_query(texts[qid], segments.get(qid), query_chars))[0]
            for qid in sorted(wanted & set(texts))}

"""The fact channel: every judgment's fact sheet indexed in Lucene as legal-fact tokens.

A sheet becomes a bag of tokens, one per legal fact it states (lower-case letters and digits
only, so the index analyzer keeps each as one term; see :mod:`countercase.index.bm25`):

- a cited section: ``fsecipc302``, its act ``factipc`` and its chapter ``fchapipc16`` (from the
  statute table; sections of acts not in it have no chapter token);
- party types: ``fpetindividual``, ``fresstate`` and, side-blind, ``fpartystate``;
- evidence types: ``fevdyingdeclaration``;
- every number as its side of each legal boundary of :mod:`countercase.factsheet.thresholds`:
  ``fagelt18``/``fagege18`` for an age, ``famtge500000`` for an amount, ``fdurlt90`` for a
  duration (in days).

A node's sheet is queried the same way (BM25 over the tokens), so crossing a threshold, swapping
a section or a party type, or toggling evidence changes the query's terms, by construction. A
sheet without facts has no tokens: its search returns nothing (the index holds it as ``fnone``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from countercase.factsheet.schema import FactSheet
from countercase.index.bm25 import Bm25Searcher, LuceneFilter, build_bm25_index
from countercase.factsheet.thresholds import in_days, load_thresholds, sides

log = logging.getLogger(__name__)

CHAPTERS_FILE = "chapters.json"
LUCENE_DIR = "lucene"  # the Lucene index and its .meta.json, both inside the stage's output
EMPTY_TOKEN = "fnone"
_KIND = re.compile(r"f(sec|act|chap|pet|res|party|ev|age|amt|dur)")


def _alnum(value: str) -> str:
    return re.sub(r"[^0-9a-z]", "", str(value).lower())


def _side_tokens(prefix: str, kind: str, value: float, thresholds) -> list[str]:
    return [f"{prefix}{'ge' if above else 'lt'}{t.value:.0f}"
            for t, above in sides(kind, value, thresholds)]


def fact_tokens(sheet: FactSheet, chapters: dict[str, str] | None = None,
                thresholds=None) -> list[str]:
    """The legal-fact tokens of ``sheet`` in a fixed order (module docstring)."""
    chapters = chapters or {}
    thresholds = thresholds or load_thresholds()
    tokens: list[str] = []
    for cited in sheet.sections_cited:
        act = cited.section_id.split("-", 1)[0]
        tokens += [f"fsec{_alnum(cited.section_id)}", f"fact{_alnum(act)}"]
        if cited.section_id in chapters:
            tokens.append(f"fchap{_alnum(act)}{_alnum(chapters[cited.section_id])}")
    for side, short in (("petitioner", "pet"), ("respondent", "res")):
        kind = getattr(sheet.parties, side).type
        if kind != "Unknown":
            tokens += [f"f{short}{_alnum(kind)}", f"fparty{_alnum(kind)}"]
    tokens += [f"fev{_alnum(e.evidence_type)}" for e in sheet.evidence_items]
    facts = sheet.numerical_facts
    for age in facts.ages:
        tokens += _side_tokens("fage", "ages", age.years, thresholds)
    for amount in facts.amounts:
        tokens += _side_tokens("famt", "amounts", amount.value, thresholds)
    for duration in facts.durations:
        tokens += _side_tokens("fdur", "durations", in_days(duration.value, duration.unit),
                               thresholds)
    return tokens


def statute_chapters(statutes: pd.DataFrame) -> dict[str, str]:
    """section id -> chapter, for the sections of the statute table that have one."""
    rows = statutes.dropna(subset=["chapter"])
    return {sid: str(ch) for sid, ch in zip(rows["section_id"], rows["chapter"]) if str(ch)}


def build_fact_index(sheets: Iterable[FactSheet], years: dict[str, int | None],
                     chapters: dict[str, str], out_dir: Path, threads: int = 2) -> dict:
    """Index every sheet's tokens (with its judgment's year, for leave-one-out searches);
    the chapter map goes beside the index, for queries. Returns counts for the metrics."""
    out_dir = Path(out_dir)
    thresholds = load_thresholds()
    records, empty, per_prefix = [], 0, {}
    for sheet in sheets:
        tokens = fact_tokens(sheet, chapters, thresholds)
        empty += not tokens
        for prefix in {_KIND.match(token).group(1) for token in tokens}:
            per_prefix[prefix] = per_prefix.get(prefix, 0) + 1
        records.append({"id": sheet.case_id, "doc_id": sheet.case_id,
                        "year": years.get(sheet.case_id),
                        "contents": " ".join(tokens) or EMPTY_TOKEN})
    build_bm25_index(records, out_dir / LUCENE_DIR, threads=threads)
    (out_dir / CHAPTERS_FILE).write_text(json.dumps(chapters, indent=0, sort_keys=True) + "\n",
                                         encoding="utf-8")
    return {"judgments": len(records), "without_facts": empty,
            "judgments_with_token_kind": dict(sorted(per_prefix.items()))}


class FactSearcher:
    """BM25 over the fact index, queried with a sheet's tokens."""

    def __init__(self, index_dir: Path | str) -> None:
        index_dir = Path(index_dir)
        self.bm25 = Bm25Searcher(index_dir / LUCENE_DIR)
        self.chapters = json.loads((index_dir / CHAPTERS_FILE).read_text(encoding="utf-8"))
        self.thresholds = load_thresholds()

    def tokens(self, sheet: FactSheet) -> list[str]:
        return fact_tokens(sheet, self.chapters, self.thresholds)

    def search(self, sheet: FactSheet, k: int, exclude: Iterable[str] = (),
               year_to: int | None = None) -> list[tuple[str, float]]:
        """The top ``k`` judgments for ``sheet``'s facts; ``exclude`` and judgments decided
        after ``year_to`` never appear (a corpus case searched leave-one-out)."""
        tokens = self.tokens(sheet)
        if not tokens:
            return []
        exclude = frozenset(exclude)
        filters = None
        if exclude or year_to is not None:
            filters = LuceneFilter(year_to=year_to, exclude_doc_ids=exclude)
        return self.bm25.search(" ".join(tokens), k, filters)

    def close(self) -> None:
        self.bm25.close()

"""Stage ``citations``: the citation collection (:mod:`countercase.datasets.citations`).

Every judgment of the corpus that cites another corpus judgment decided no later than itself
(:func:`~countercase.datasets.citations.decided_by`) becomes a query: its facts (the reranker's
training query, :func:`facts_query`) masked as AILA masks its queries
(:func:`countercase.extract.masking.mask`); the judgments it cites are its relevant documents.
A judgment is not a query when it holds an AILA query's text (the leakage guard: the query's
source and its near-copies), when its year is unknown, when its masked facts are shorter than
``min_query_chars``, or when another query of its near-copy group is kept; each is counted by
reason.

Near-copies: a judgment holding ``leakage_threshold`` or more of a query's facts (word
8-shingles, unmasked) is a copy of it, and queries linked by copies form a group, of which the
first in natural id order is kept (so a group never spans the two halves). A query's copies and
the rest of its group are never candidates for it (``copies.tsv``). The queries are split once by
a seeded shuffle: ``tuning_share`` of them are the tuning half, every parameter and model choice
is made on it; the rest, the held-out half, is scored only to report the system.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.citations.links import cited_pairs, mine_citations
from countercase.config import CitationsParams
from countercase.datasets.citations import PARTS, decided_by
from countercase.datasets.ids import natural_key
from countercase.datasets.leakage import overlapping_documents
from countercase.extract.masking import mask
from countercase.extract.run import read_sections
from countercase.extract.years import read_dates, read_years
from countercase.factsheet.rules import facts_region
from countercase.ingest.run import read_documents

log = logging.getLogger(__name__)


def facts_query(text: str, segments, max_chars: int, facts_fraction: float = 0.2) -> str:
    """The facts of a judgment (the extract stage's Facts run), cut at a word boundary."""
    start, end, _ = facts_region(text, "judgment", segments, facts_fraction)
    facts = " ".join(text[start:end].split())
    if len(facts) < 200:  # a facts run too short to search with: the judgment's opening
        facts = " ".join(text[:max_chars * 2].split())
    return facts[:max_chars].rsplit(" ", 1)[0]


def _write_tsv(path: Path, rows) -> None:
    """Plain ``\t``-separated lines, no quoting: every reader splits on the tab alone."""
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            fields = ["" if v is None else str(v) for v in row]
            if any("\t" in f or "\n" in f or "\r" in f for f in fields):
                raise ValueError(f"{path}: a field holds a tab or a line break: {fields[0]!r}")
            handle.write("\t".join(fields) + "\n")


def near_copy_groups(facts: dict[str, str], texts: dict[str, str],
                     threshold: float) -> tuple[dict[str, set[str]], list[list[str]]]:
    """Each query's copies (the other judgments holding ``threshold`` of its facts' shingles)
    and the groups of queries linked by copies, each in natural id order (singletons left
    out)."""
    copies = {q: {d for d, _ in hits if d != q}
              for q, hits in overlapping_documents(facts, texts.items(), threshold).items()}
    parent = {q: q for q in facts}

    def root(q: str) -> str:
        while parent[q] != q:
            parent[q] = parent[parent[q]]
            q = parent[q]
        return q

    for q in sorted(copies, key=natural_key):
        for d in sorted(copies[q], key=natural_key):
            if d in parent:
                a, b = sorted((root(q), root(d)), key=natural_key)
                parent[b] = a
    members: dict[str, list[str]] = {}
    for q in sorted(facts, key=natural_key):
        members.setdefault(root(q), []).append(q)
    return copies, [m for m in members.values() if len(m) > 1]


def build_collection(texts: dict[str, str], years: dict[str, int | None],
                     dates: dict[str, str | None], segments: dict,
                     aila_queries: dict[str, str], params: CitationsParams, seed: int,
                     out: Path) -> dict[str, Any]:
    """Write the collection's files under ``out``; the counts for ``metrics/citations.json``."""
    out.mkdir(parents=True, exist_ok=True)
    citations, _ = mine_citations((d, t, years.get(d)) for d, t in texts.items())
    links = cited_pairs(citations)
    leaking = overlapping_documents(aila_queries, texts.items(), params.leakage_threshold)
    leaking_docs = {doc for hits in leaking.values() for doc, _ in hits}
    skipped: Counter = Counter()
    facts, topics, qrels, masked = _queries(texts, years, dates, segments, links, leaking_docs,
                                            params, skipped)
    groups, hidden, skipped_links = _hide_copies(facts, texts, topics, qrels, params, skipped)
    order = sorted(topics, key=natural_key)
    random.Random(seed).shuffle(order)
    n_tuning = round(len(order) * params.tuning_share)
    part = {q: PARTS[0] if i < n_tuning else PARTS[1] for i, q in enumerate(order)}
    qids = sorted(topics, key=natural_key)
    _write_tsv(out / "topics.tsv", ([q, topics[q]] for q in qids))
    _write_tsv(out / "cases.tsv", ([q, years[q], part[q]] for q in qids))
    _write_tsv(out / "judgments.tsv", ([d, years.get(d), dates.get(d)]
                                       for d in sorted(texts, key=natural_key)))
    _write_tsv(out / "copies.tsv", ([q, d] for q in qids for d in hidden[q]))
    _write_tsv(out / "links.tsv", ([a, b] for a in sorted(links, key=natural_key)
                                   for b in links[a]))
    with (out / "qrels.txt").open("w", encoding="utf-8") as handle:
        for q in qids:
            handle.writelines(f"{q} 0 {doc} 1\n" for doc in qrels[q])
    relevant = [len(qrels[q]) for q in qids]
    report = {
        "citing_judgments": len(links), "links": sum(len(v) for v in links.values()),
        "queries": {p: sum(part[q] == p for q in qids) for p in PARTS},
        "relevant_per_query": {"mean": round(sum(relevant) / max(len(relevant), 1), 2),
                               "max": max(relevant, default=0)},
        "skipped": dict(sorted(skipped.items())),
        "links_dropped": dict(sorted(skipped_links.items())),
        "leaking_documents": {d: [q for q, hits in leaking.items() if d in dict(hits)]
                              for d in sorted(leaking_docs, key=natural_key)},
        "near_copies": {"groups": [g for g in groups],
                        "queries_with_copies_hidden": sum(bool(hidden[q]) for q in qids),
                        "copies_hidden": sum(len(hidden[q]) for q in qids)},
        "dates_known": round(sum(dates.get(d) is not None for d in texts) / max(len(texts), 1), 4),
        "masked_mentions": dict(sorted(masked.items())),
        "query_chars_mean": round(sum(map(len, topics.values())) / max(len(topics), 1)),
    }
    log.info("citation collection: %s queries, %s skipped", report["queries"], dict(skipped))
    return report


def _queries(texts: dict[str, str], years: dict[str, int | None], dates: dict[str, str | None],
             segments: dict, links: dict[str, list[str]], leaking_docs: set[str],
             params: CitationsParams, skipped: Counter) -> tuple[dict, dict, dict, Counter]:
    """Each citing judgment's facts, its masked query and the judgments it cites that were
    decided no later than itself, and the mentions masked; each judgment left out is counted
    in ``skipped`` by why."""
    facts, topics, qrels, masked = {}, {}, {}, Counter()
    for doc in tqdm(sorted(links, key=natural_key), desc="citation queries", unit="judgment"):
        year = years.get(doc)
        cited = [c for c in links[doc] if year is not None
                 and decided_by(years.get(c), dates.get(c), year, dates.get(doc))]
        if year is None:
            skipped["year unknown"] += 1
        elif doc in leaking_docs:
            skipped["holds an AILA query's text"] += 1
        elif not cited:
            skipped["cites no judgment decided no later than itself"] += 1
        else:
            title = texts[doc].lstrip().split("\n", 1)[0]
            facts[doc] = facts_query(texts[doc], segments.get(doc), params.query_chars)
            found = mask(facts[doc], title)
            text = " ".join(found.text.split())
            if len(text) < params.min_query_chars:
                skipped["masked facts too short"] += 1
                del facts[doc]
                continue
            topics[doc], qrels[doc] = text, cited
            masked.update(statutes=found.statutes, acts=found.acts, parties=found.parties)
    return facts, topics, qrels, masked


def _hide_copies(facts: dict, texts: dict[str, str], topics: dict, qrels: dict,
                 params: CitationsParams, skipped: Counter,
                 ) -> tuple[list, dict[str, list[str]], Counter]:
    """Near-copy queries dropped but the first of each group (``topics`` and ``qrels`` changed
    in place), and each query's near-copies hidden from its candidates and its relevant
    judgments: the groups, each query's hidden judgments, the links dropped by why."""
    skipped_links: Counter = Counter()
    copies, groups = near_copy_groups(facts, texts, params.leakage_threshold)
    for group in groups:
        for q in group[1:]:
            skipped["a near-copy of another query"] += 1
            del topics[q], qrels[q]
    group_of = {q: set(group) for group in groups for q in group}
    hidden = {q: sorted((copies.get(q, set()) | group_of.get(q, set())) - {q}, key=natural_key)
              for q in topics}
    # a cited copy (an earlier judgment of the same matter) is never a candidate, so not relevant
    for q in list(topics):
        kept = [c for c in qrels[q] if c not in hidden[q]]
        skipped_links["cited near-copies"] += len(qrels[q]) - len(kept)
        if not kept:
            skipped["cites only its near-copies"] += 1
            del topics[q], qrels[q], hidden[q]
        else:
            qrels[q] = kept
    return groups, hidden, skipped_links

def run_citations(params: CitationsParams, seed: int, documents: Path, extract_dir: Path,
                  aila_queries: dict[str, str], out: Path) -> dict[str, Any]:
    texts = {doc.doc_id: doc.text for doc in read_documents(documents)}
    years = read_years(extract_dir / "metadata.parquet")
    dates = read_dates(extract_dir / "metadata.parquet")
    segments = read_sections(extract_dir / "sections.parquet")
    return build_collection(texts, years, dates, segments, aila_queries, params, seed, out)

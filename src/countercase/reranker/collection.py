"""Stage ``citations``: the citation collection (:mod:`countercase.datasets.citations`).

Every judgment of the corpus that cites another corpus judgment decided no later than itself
becomes a query: its facts (the reranker's training query, :func:`facts_query`) masked as AILA
masks its queries (:func:`countercase.extract.masking.mask`); the judgments it cites are its
relevant documents. A judgment is not a query when it holds an AILA query's text (the leakage
guard: the query's source and its near-copies), when its year is unknown, or when its masked
facts are shorter than ``min_query_chars``; each is counted by reason. The queries are split
once by a seeded shuffle: ``tuning_share`` of them are the tuning half, every parameter and
model choice is made on it; the rest, the held-out half, is scored only to report the system.
"""

from __future__ import annotations

import csv
import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import CitationsParams
from countercase.datasets.citations import PARTS
from countercase.datasets.ids import natural_key
from countercase.datasets.leakage import overlapping_documents
from countercase.extract.masking import mask
from countercase.reranker.citations import cited_pairs, mine_citations
from countercase.reranker.pairs import facts_query

log = logging.getLogger(__name__)


def _write_tsv(path: Path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter="\t", lineterminator="\n").writerows(rows)


def build_collection(texts: dict[str, str], years: dict[str, int | None], segments: dict,
                     aila_queries: dict[str, str], params: CitationsParams, seed: int,
                     out: Path) -> dict[str, Any]:
    """Write the collection's files under ``out``; the counts for ``metrics/citations.json``."""
    out.mkdir(parents=True, exist_ok=True)
    citations, _ = mine_citations((d, t, years.get(d)) for d, t in texts.items())
    links = cited_pairs(citations)
    leaking = overlapping_documents(aila_queries, texts.items(), params.leakage_threshold)
    leaking_docs = {doc for hits in leaking.values() for doc, _ in hits}
    skipped: Counter = Counter()
    topics, qrels, masked = {}, {}, Counter()
    for doc in tqdm(sorted(links, key=natural_key), desc="citation queries", unit="judgment"):
        year = years.get(doc)
        cited = [c for c in links[doc] if years.get(c) is not None and year is not None
                 and years[c] <= year]
        if year is None:
            skipped["year unknown"] += 1
        elif doc in leaking_docs:
            skipped["holds an AILA query's text"] += 1
        elif not cited:
            skipped["cites no judgment decided no later than itself"] += 1
        else:
            title = texts[doc].lstrip().split("\n", 1)[0]
            found = mask(facts_query(texts[doc], segments.get(doc), params.query_chars), title)
            text = " ".join(found.text.split())
            if len(text) < params.min_query_chars:
                skipped["masked facts too short"] += 1
                continue
            topics[doc], qrels[doc] = text, cited
            masked.update(statutes=found.statutes, acts=found.acts, parties=found.parties)
    order = sorted(topics, key=natural_key)
    random.Random(seed).shuffle(order)
    n_tuning = round(len(order) * params.tuning_share)
    part = {q: PARTS[0] if i < n_tuning else PARTS[1] for i, q in enumerate(order)}
    qids = sorted(topics, key=natural_key)
    _write_tsv(out / "topics.tsv", ([q, topics[q]] for q in qids))
    _write_tsv(out / "cases.tsv", ([q, years[q], part[q]] for q in qids))
    _write_tsv(out / "years.tsv", ([d, "" if years.get(d) is None else years[d]]
                                   for d in sorted(texts, key=natural_key)))
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
        "leaking_documents": {d: [q for q, hits in leaking.items() if d in dict(hits)]
                              for d in sorted(leaking_docs, key=natural_key)},
        "masked_mentions": dict(sorted(masked.items())),
        "query_chars_mean": round(sum(map(len, topics.values())) / max(len(topics), 1)),
    }
    log.info("citation collection: %s queries, %s skipped", report["queries"], dict(skipped))
    return report


def run_citations(params: CitationsParams, seed: int, documents: Path, extract_dir: Path,
                  aila_queries: dict[str, str], out: Path) -> dict[str, Any]:
    from countercase.extract.run import read_sections
    from countercase.extract.years import read_years
    from countercase.ingest.run import read_documents

    texts = {doc.doc_id: doc.text for doc in read_documents(documents)}
    years = read_years(extract_dir / "metadata.parquet")
    segments = read_sections(extract_dir / "sections.parquet")
    return build_collection(texts, years, segments, aila_queries, params, seed, out)

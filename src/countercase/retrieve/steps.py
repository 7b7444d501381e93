"""The steps a system of the registry is composed of (:mod:`countercase.retrieve.compose`):
ranking functions ``topics -> run``.

- :func:`pipeline_system`: the chunk pipeline (:class:`~countercase.retrieve.pipeline.Retriever`)
  under one configuration, its chunks pooled to judgments by max;
- :func:`bm25_docs_system`: BM25 (``k1``, ``b``) over whole judgments;
- :func:`fact_system`: the fact channel alone;
- :func:`fused`: several systems' runs fused by weighted reciprocal rank fusion;
- :func:`~countercase.retrieve.pooling.passage_system`: chunk BM25 pooled by another rule;
- :func:`~countercase.retrieve.prior.with_prior`: a run fused with the citation prior.

Each applies the topics' limits (:mod:`countercase.datasets.limits`) inside its search.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tqdm import tqdm

from countercase.config import RetrieveParams
from countercase.datasets.limits import Limit, limit_of
from countercase.factsheet.rules import extract_rules
from countercase.index.bm25 import Bm25Searcher
from countercase.index.facts import FactSearcher
from countercase.retrieve.filters import SearchFilter, lucene_filter
from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.runs import Run, System, ranked
from countercase.retrieve.searchers import Searchers


def pipeline_system(searchers: Searchers, params: RetrieveParams, depth: int,
                    exclude: Mapping[str, list[str]] | None = None, label: str = "rank"):
    """The pipeline under ``params`` over ``searchers``' indexes: ``depth`` documents per
    query; ``exclude``: per query, judgments the statute bridge must not read."""
    search = searchers.search(params)

    def rank(topics: Mapping[str, str]) -> Run:
        return {qid: ranked([h.doc_id for h in search(
                    text, depth, (exclude or {}).get(qid, ()),
                    SearchFilter.of_limit(limit_of(topics, qid))).documents])
                for qid, text in tqdm(topics.items(), desc=label, unit="query")}
    return rank


def bm25_docs_system(index: Path, depth: int, label: str = "bm25_docs", k1: float = 0.9,
                     b: float = 0.4):
    """BM25 (``k1``, ``b``) over whole documents (``index``: a document-level Lucene index)."""
    def rank(topics: Mapping[str, str]) -> Run:
        with Bm25Searcher(index, k1=k1, b=b) as searcher:
            return {qid: searcher.search(text, depth, lucene_filter(limit_of(topics, qid)))
                    for qid, text in tqdm(topics.items(), desc=label, unit="query")}
    return rank


def fact_system(index: Path, depth: int, label: str = "fact_channel"):
    """The fact channel alone: each topic's rule fact sheet against the judgments' sheets."""
    def rank(topics: Mapping[str, str]) -> Run:
        searcher = FactSearcher(index)
        try:
            found = {}
            for qid, text in tqdm(topics.items(), desc=label, unit="query"):
                limit = limit_of(topics, qid) or Limit()
                found[qid] = searcher.search(extract_rules(text, qid, "query"), depth,
                                             limit.exclude, limit.year_to)
            return found
        finally:
            searcher.close()
    return rank


def fused(systems: Mapping[str, tuple[System, float]], k: int, depth: int) -> System:
    """The runs of ``systems`` (name -> (system, weight)) fused by weighted RRF."""
    def rank(topics: Mapping[str, str]) -> Run:
        runs = {name: system(topics) for name, (system, _) in systems.items()}
        weights = {name: weight for name, (_, weight) in systems.items()}
        return {qid: reciprocal_rank_fusion(
                    {name: [d for d, _ in run.get(qid, [])] for name, run in runs.items()},
                    k, weights)[:depth]
                for qid in topics}
    return rank

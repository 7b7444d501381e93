"""Systems built from the retrieval pipeline: ranking functions ``topics -> run``.

Each applies the topics' limits (:mod:`countercase.datasets.limits`) inside its search.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tqdm import tqdm

from countercase.config import RetrieveParams
from countercase.datasets.limits import Limit, limit_of
from countercase.experiment.runs import Run, ranked
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.searchers import Searchers


def lucene_filter(limit: Limit | None):
    """The Lucene filter of a query's limit (None: no limit)."""
    if limit is None:
        return None
    from countercase.index.bm25 import LuceneFilter

    return LuceneFilter(year_to=limit.year_to, exclude_doc_ids=limit.exclude)


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
        from countercase.index.bm25 import Bm25Searcher

        with Bm25Searcher(index, k1=k1, b=b) as searcher:
            return {qid: searcher.search(text, depth, lucene_filter(limit_of(topics, qid)))
                    for qid, text in tqdm(topics.items(), desc=label, unit="query")}
    return rank


def fact_system(index: Path, depth: int, label: str = "fact_channel"):
    """The fact channel alone: each topic's rule fact sheet against the judgments' sheets."""
    def rank(topics: Mapping[str, str]) -> Run:
        from countercase.factsheet.rules import extract_rules
        from countercase.index.facts import FactSearcher

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

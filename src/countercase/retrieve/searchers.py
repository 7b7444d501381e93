"""The indexes of one task opened once, searched under any retrieval configuration.

:class:`Searchers` loads both retrievers of a task (BM25 and dense, whatever the configuration
switches) and, for the statute task, the precedents the statute bridge reads; ``system(params)``
is then a search under ``params`` that shares them, so every condition of an
experiment costs one load of the indexes, and a query's BM25 hits and vector are computed once
for every condition.
"""

from __future__ import annotations

from collections.abc import Mapping

from countercase.config import RetrieveParams
from countercase.datasets.leakage import overlapping_documents
from countercase.layout import IndexPaths
from countercase.retrieve.load import configured_reranker, open_retriever, statute_search


class Searchers:
    def __init__(self, task: str, base: RetrieveParams, paths: IndexPaths,
                 dense: bool = True, rerank: bool | None = None, facts: bool = False) -> None:
        self.task, self.paths = task, paths
        # one reranker (and score cache) for every condition; none (a warning) when untrained
        # (rerank None: as base runs step rerank)
        reranker = configured_reranker(base, rerank)
        # both retrievers loaded (dense too, when its embeddings exist), whatever base runs
        full = base.without("dense", "rerank").with_steps(
            "bm25", *(("dense",) if dense else ()), *(("rerank",) if reranker else ()))
        # every condition searches the same queries: BM25 hits and query vectors kept
        self.precedents = open_retriever("precedents", full, paths, reranker=reranker,
                                         facts=facts, cache=True) \
            if task == "precedents" or base.running("bridge") else None
        self.statutes = (open_retriever("statutes", full, paths, reranker=reranker, cache=True)
                         if task == "statutes" else None)

    def corpus_copies(self, topics: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:
        """qid -> [(judgment, share)] of the corpus judgments holding a query's text (the
        leakage guard: the statute bridge must not read a copy of the query)."""
        if self.precedents is None:
            return {}
        chunks = self.precedents.chunks
        return overlapping_documents(topics, zip(chunks["doc_id"], chunks["text"]))

    def search(self, params: RetrieveParams):
        """``search(text, k, exclude, filters) -> RetrievalResult`` under ``params``;
        ``exclude``: judgments the statute bridge must not read; ``filters``: a
        :class:`~countercase.retrieve.filters.SearchFilter` of the precedents searched."""
        if self.task == "precedents":
            retriever = self.precedents.with_params(params)
            return lambda text, k, exclude=(), filters=None: retriever.search(text, filters, k=k)
        search = statute_search(self.statutes.with_params(params),
                                self.precedents.with_params(params) if self.precedents else None,
                                params, self.paths)
        return lambda text, k, exclude=(), filters=None: search.search(text, k=k, exclude=exclude)

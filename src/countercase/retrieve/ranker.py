"""One shape of a system, whatever it is composed of (issue 60): :class:`Ranker`.

- ``rank(topics) -> Run``: an experiment's topics ranked at once (the evaluate stage, the
  learned rankers' training, a fusion's components);
- ``search(query, filters, k, sheet, kind) -> RetrievalResult``: one query, each judgment with
  its passage (``countercase search``, ``serve``, a tree node, the ``Case`` facade).

Only :class:`~countercase.retrieve.compose.Composer` builds one. A pipeline over the built
indexes and a learned ranker search with their own passages and filters; any other system
(whole judgments, the fact channel, a fusion, the prior, the served route) searches by ranking
the one query, and each judgment it ranks stands with its best passage by BM25.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from countercase.datasets.limits import Limit, Topics, limit_of
from countercase.index.bm25 import LuceneFilter
from countercase.index.query_terms import EmptyQueryError
from countercase.retrieve.filters import FilterError, SearchFilter
from countercase.retrieve.pipeline import Hit, RetrievalResult, Retriever
from countercase.retrieve.runs import Run, System, ranked

Search = Callable[..., RetrievalResult]  # (query, filters, k, sheet, kind) -> result

@dataclass(frozen=True)
class Ranker:
    """System ``name`` of the registry: ``rank`` for topics, ``search`` for one query."""

    name: str
    rank: System
    _search: Search
    _ranking: Callable[..., list[tuple[str, float]]] | None = None  # without passages

    def __call__(self, topics: Mapping[str, str]) -> Run:
        return self.rank(topics)

    def search(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
               sheet=None, kind: str = "description") -> RetrievalResult:
        """The top ``k`` judgments for ``query`` (a ``kind`` of query: the served route's
        choice), each with its passage; ``sheet`` (a fact sheet) for the systems that read
        one, else the rule sheet of the text. A filter the system cannot honour is an error
        that names it."""
        if not query or not query.strip():
            raise EmptyQueryError("empty query: give the facts of a case to search with")
        return self._search(query, filters or SearchFilter(), k, sheet, kind)

    def ranking(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
                sheet=None, kind: str = "description") -> list[tuple[str, float]]:
        """The judgments :meth:`search` returns and their scores, without reading a passage
        where the system can rank without one (a learned system: cheaper)."""
        if self._ranking is not None:
            return self._ranking(query, filters, k, sheet)
        return [(hit.doc_id, hit.scores.get(self.name, 0.0))
                for hit in self.search(query, filters, k, sheet, kind).documents]


def ranked_search(name: str, rank: System, table: Callable[[], Retriever]) -> Search:
    """``search`` for system ``name`` that ranks whole queries: the query ranked as a topic
    under the filter's limit, each judgment at its best passage in the chunks of ``table()``
    by its BM25 (its first chunk when none holds a query term)."""
    def search(query: str, filters: SearchFilter, k: int | None, sheet, kind: str):
        asked = filters.beyond_limit()
        if asked:
            raise FilterError(f"system {name} ranks whole queries under a year bound and "
                              f"exclusions only, not {', '.join(asked)}; use --system full")
        started = time.perf_counter()
        limit = filters.limit
        topics = Topics({"query": query}, {"query": limit} if limit != Limit() else None, kind)
        chunks = table()
        found = rank(topics).get("query", [])[:k or chunks.params.k]
        hits = best_passages(chunks, chunks.bm25, query, found, limit, name)
        return RetrievalResult(query, hits, hits, limit != Limit(),
                               {"total": (time.perf_counter() - started) * 1000})
    return search


def retriever_ranker(name: str, retriever, depth: int) -> Ranker:
    """System ``name`` over an opened pipeline (``retriever``, a
    :class:`~countercase.retrieve.pipeline.Retriever`): its search, and its ranking of topics
    at ``depth`` judgments each under their limits."""
    def rank(topics: Mapping[str, str]) -> Run:
        return {qid: ranked([h.doc_id for h in retriever.search(
                    text, SearchFilter.of_limit(limit_of(topics, qid)), k=depth).documents])
                for qid, text in topics.items()}

    def search(query: str, filters: SearchFilter, k: int | None, sheet, kind: str):
        return retriever.search(query, filters, k, sheet)
    return Ranker(name, rank, search)


def best_passages(table: Retriever, bm25, query: str, ranking: list[tuple[str, float]],
                  limit: Limit, label: str) -> list[Hit]:
    """Each judgment of ``ranking`` at its best chunk of ``table`` by ``bm25`` for ``query`` (its
    first chunk when none holds a query term), scored ``label``; a judgment missing from the
    chunk table is left out."""
    docs = [doc for doc, _ in ranking]
    best: dict[str, str] = {}
    if docs:
        only = LuceneFilter(doc_ids=frozenset(docs), exclude_doc_ids=limit.exclude)
        try:
            found = bm25.search(query, 20 * len(docs), only)
        except EmptyQueryError:
            found = []
        doc_of = table.doc_of
        for chunk, _ in found:
            best.setdefault(doc_of(chunk), chunk)
    hits = []
    for doc, score in ranking:
        row = table.row_of[best[doc]] if doc in best else table.first_row(doc)
        if row is None:
            continue
        hits.append(table.hit_at(row, len(hits) + 1, {label: score}))
    return hits

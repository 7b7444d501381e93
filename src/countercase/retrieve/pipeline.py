"""The retrieval pipeline every perturbation-tree node calls (plan section 6).

(query reduction) -> pre-filter -> BM25 top N + dense top N -> RRF -> MMR -> rerank -> post-filter
-> attribution, the steps a system runs named in :attr:`~countercase.config.RetrieveParams.steps`.
Results come at two levels: chunks (with page, section type and every stage's score) and judgments
(chunk hits pooled by max: a judgment ranks where its best chunk ranks).

With ``fact_weight`` above 0 (precedents), the judgments are then fused by weighted RRF with the
fact channel's ranking (:mod:`countercase.index.facts`): the fact sheet given with the query, or
the rule sheet read from the query text. A judgment only the fact channel finds stands with its
first chunk.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from countercase.config import RetrieveParams
from countercase.errors import CountercaseError
from countercase.factsheet.rules import extract_rules
from countercase.index.encoders import embed
from countercase.index.query_terms import EmptyQueryError
from countercase.retrieve.fact_sentences import reduce_query
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.fusion import fuse_with_facts, reciprocal_rank_fusion
from countercase.retrieve.mmr import mmr
from countercase.retrieve.rerank import blend, rerank

log = logging.getLogger(__name__)

# Case metadata shown with every hit (attribution).
CASE_FIELDS = ("case_id", "year", "bench_type", "act_sections", "outcome_label")


class NoMatchError(CountercaseError, ValueError):
    """The filter leaves no judgment to search."""


@dataclass
class Hit:
    rank: int
    chunk_id: str
    doc_id: str
    text: str
    source_path: str
    page_number: int
    section_type: str
    metadata: dict[str, Any]
    scores: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def at(self, rank: int, scores: dict[str, float] | None = None) -> "Hit":
        """This hit at ``rank`` (with ``scores``), its dicts copied, not shared."""
        return replace(self, rank=rank, metadata=dict(self.metadata),
                       scores=dict(self.scores if scores is None else scores))


@dataclass
class RetrievalResult:
    query: str
    chunks: list[Hit]
    documents: list[Hit]  # the best chunk of each judgment, ranked by it
    prefiltered: bool
    timings_ms: dict[str, float]


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return None if isinstance(value, float) and np.isnan(value) else value


class _Table:
    """The chunk table and what is read from it, shared by a retriever and its
    :meth:`Retriever.with_params` copies, so that an experiment's conditions read one table;
    with ``cache_queries`` on (an experiment's conditions, never a latency benchmark), a query
    embedded under one condition is not embedded again under the next."""

    VECTORS = 4096  # query vectors (and fact rankings) kept, least recently used dropped

    def __init__(self, chunks: pd.DataFrame, cache_queries: bool = False) -> None:
        self.chunks = chunks.reset_index(drop=True)
        self.row_of = {cid: i for i, cid in enumerate(self.chunks["chunk_id"])}
        self.first_chunk: dict[str, int] | None = None
        self.vectors: OrderedDict[str, np.ndarray] | None = OrderedDict() if cache_queries else None
        self.facts: OrderedDict[tuple, list] | None = OrderedDict() if cache_queries else None
        self._columns: tuple[list[str], list[list]] | None = None
        self._rows: list[dict[str, Any] | None] = [None] * len(self.chunks)
        self._dense_rows: tuple[Any, np.ndarray] | None = None

    def row(self, index: int) -> dict[str, Any]:
        """Row ``index`` as plain Python values, not to be changed (a row read column by column:
        ``iloc`` on a table of mixed types costs more than the search that found it; the
        columns are made plain once, as a search reads a thousand rows)."""
        if self._columns is None:
            names = list(self.chunks.columns)
            self._columns = names, [[_plain(v) for v in self.chunks[name].array]
                                    for name in names]
        found = self._rows[index]
        if found is None:  # kept: the conditions of an experiment read the same rows again
            names, columns = self._columns
            found = self._rows[index] = dict(zip(names, (column[index] for column in columns)))
        return found

    def dense_rows(self, dense, mask: np.ndarray) -> np.ndarray:
        """The rows of ``dense`` (a :class:`~countercase.index.dense.DenseIndex`) whose chunks
        pass ``mask`` (over this table's rows); the table-to-index row map is built once per
        index."""
        if self._dense_rows is None or self._dense_rows[0] is not dense:
            self._dense_rows = dense, dense.rows_or_missing(list(self.chunks["chunk_id"]))
        rows = self._dense_rows[1][mask]
        if rows.size and rows.min() < 0:
            missing = self.chunks["chunk_id"][mask].iloc[int(np.argmin(rows))]
            raise KeyError(f"id {missing!r} is not in the dense index")
        return rows

    def vector(self, query: str, embed) -> np.ndarray:
        """``embed(query)``, from the cache when it is on."""
        return self.cached(self.vectors, query, lambda: embed(query))

    def fact_ranking(self, key: tuple, search) -> list[tuple[str, float]]:
        """``search()``, the fact channel's ranking for ``key`` (a query and its filter), from
        the cache when it is on: the fact weight's grid fuses one ranking five ways."""
        return self.cached(self.facts, key, search)

    def cached(self, cache: OrderedDict | None, key, compute):
        if cache is None:
            return compute()
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        value = cache[key] = compute()
        if len(cache) > self.VECTORS:
            cache.popitem(last=False)
        return value


class Retriever:
    """Holds the indexes and the chunk table; ``search`` is cheap to call many times."""

    def __init__(self, chunks: pd.DataFrame | _Table, params: RetrieveParams, bm25=None,
                 dense=None, encoder=None, reranker=None, task: str = "precedents",
                 precision: str = "float32", facts=None, cache_queries: bool = False) -> None:
        self._table = chunks if isinstance(chunks, _Table) else _Table(chunks, cache_queries)
        self.chunks, self.row_of = self._table.chunks, self._table.row_of
        self.params = params
        self.bm25, self.dense, self.encoder, self.reranker = bm25, dense, encoder, reranker
        self.facts = facts  # countercase.index.facts.FactSearcher, or None
        self.task = task
        self.precision = precision  # of the query embedding: the one the passages were embedded in
        if params.running("bm25") and bm25 is None:
            raise ValueError("step bm25 runs but no BM25 index was given")
        if params.reads_vectors(task) and (dense is None or encoder is None):
            raise ValueError("the search reads the chunks' vectors (step dense at a weight above "
                             "0, or mmr) but no dense index or encoder was given")
        if params.fact_weight > 0 and task == "precedents" and facts is None:
            raise ValueError("fact_weight is above 0 but no fact index was given "
                             "(stage `index_facts`)")

    def with_params(self, params: RetrieveParams) -> "Retriever":
        """The same indexes and chunk table under other steps and settings (an ablation
        condition)."""
        if params.reads_vectors(self.task) and self.dense is None:  # opened without embeddings
            raise CountercaseError(f"the {self.task} search was opened without embeddings "
                                   "(stage `embed`); a condition with dense search cannot run")
        return Retriever(self._table, params, bm25=self.bm25, dense=self.dense,
                         encoder=self.encoder, reranker=self.reranker, task=self.task,
                         precision=self.precision, facts=self.facts)

    def _query_vector(self, query: str) -> np.ndarray:
        return self._table.vector(query, lambda text: embed(
            self.encoder, [text], show_progress=False, precision=self.precision)[0])

    def search(self, query: str, filters: SearchFilter | None = None,
               k: int | None = None, sheet=None) -> RetrievalResult:
        """The top ``k`` chunks and judgments for ``query``; ``sheet`` (a
        :class:`~countercase.factsheet.schema.FactSheet`) queries the fact channel, when on."""
        p = self.params
        k = k or p.k
        if not query or not query.strip():
            raise EmptyQueryError("empty query: give the facts of a case to search with")
        filters = filters or SearchFilter()
        timings: dict[str, float] = {}
        t0 = time.perf_counter()

        mask = filters.indexed_mask(self.chunks) if filters.has_indexed else None
        share = 1.0 if mask is None else float(mask.mean())
        if mask is not None and not mask.any():
            raise NoMatchError("the filter matches no judgment in the corpus; widen it")
        # excluded judgments (a leave-one-out query's own) are cut inside the search whatever
        # the share: their chunks would otherwise fill the candidates a post-filter keeps
        prefilter = mask is not None and ((1.0 - share) > p.prefilter_threshold
                                          or bool(filters.exclude_doc_ids))
        timings["filter"] = (time.perf_counter() - t0) * 1000

        # the retrievers read the reduced query; the reranker and the fact channel the whole one
        searched = (reduce_query(query, p.query_reduction) if self.task == "precedents"
                    else query)

        rankings, stage_scores = self._first_stage(searched, filters, mask, share, prefilter,
                                                   timings)
        ids = self._second_stage(query, rankings, stage_scores, timings)

        t = time.perf_counter()
        hits = []
        for cid in ids:
            row = self._row(self.row_of[cid])
            if not filters.post_ok(row):
                continue
            hits.append(self._hit(row, len(hits) + 1, {
                stage: float(s[cid]) for stage, s in stage_scores.items() if cid in s}))
        documents, seen = [], set()
        for hit in hits:  # max pooling: the first (best) chunk of a judgment stands for it
            if hit.doc_id not in seen:
                seen.add(hit.doc_id)
                documents.append(hit.at(len(documents) + 1))
        timings["attribution"] = (time.perf_counter() - t) * 1000
        if p.fact_weight > 0 and self.task == "precedents":
            t = time.perf_counter()
            documents = self._with_facts(documents, query, sheet, filters, mask)
            timings["facts"] = (time.perf_counter() - t) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        return RetrievalResult(query, hits[:k], documents[:k], prefilter, timings)

    def _first_stage(self, searched: str, filters: SearchFilter, mask: np.ndarray | None,
                     share: float, prefilter: bool, timings: dict[str, float],
                     ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
        """BM25's and the dense index's candidates for the (reduced) query ``searched``, each
        cut to its depth after the post-filter ``mask`` (a search ``prefilter`` restricts in
        the index; one that does not reads deeper by the ``share`` of chunks the mask keeps)."""
        p = self.params

        def passes(chunk_id: str) -> bool:
            return mask is None or bool(mask[self.row_of[chunk_id]])

        rankings: dict[str, list[str]] = {}
        stage_scores: dict[str, dict[str, float]] = {}
        retrievers = p.retrievers(self.task)
        if "bm25" in retrievers:
            t = time.perf_counter()
            depth = p.bm25_depth if prefilter or mask is None else int(np.ceil(p.bm25_depth / share))
            hits = self.bm25.search(searched, depth, filters.lucene() if prefilter else None)
            hits = [(cid, s) for cid, s in hits if passes(cid)][:p.bm25_depth]
            rankings["bm25"] = [cid for cid, _ in hits]
            stage_scores["bm25"] = dict(hits)
            timings["bm25"] = (time.perf_counter() - t) * 1000
        if "dense" in retrievers:
            t = time.perf_counter()
            vector = self._query_vector(searched)
            allowed = self._table.dense_rows(self.dense, mask) if prefilter else None
            depth = p.dense_depth if prefilter or mask is None else int(np.ceil(p.dense_depth / share))
            hits = self.dense.search(vector, depth, allowed_rows=allowed)
            hits = [(cid, s) for cid, s in hits if passes(cid)][:p.dense_depth]
            rankings["dense"] = [cid for cid, _ in hits]
            stage_scores["dense"] = dict(hits)
            timings["dense"] = (time.perf_counter() - t) * 1000
        return rankings, stage_scores

    def _second_stage(self, query: str, rankings: dict[str, list[str]],
                      stage_scores: dict[str, dict[str, float]],
                      timings: dict[str, float]) -> list[str]:
        """The candidates fused by RRF, diversified by MMR and reranked (each when on), their
        scores added to ``stage_scores``: the chunk ids in their final order."""
        p = self.params
        t = time.perf_counter()
        task_weights = p.fusion_weights.get(self.task, {})
        # (a lone retriever with weight 0 keeps its own order: weight it 1)
        weights = {name: task_weights.get(name, 1.0) or 1.0 for name in rankings}
        fused = reciprocal_rank_fusion(rankings, k=p.rrf_k, weights=weights)
        stage_scores["rrf"] = dict(fused)
        timings["rrf"] = (time.perf_counter() - t) * 1000

        ordered = fused
        if p.running("mmr") and self.task in p.mmr_tasks and self.dense is not None and fused:
            t = time.perf_counter()
            ordered = mmr(fused, self.dense.vectors([cid for cid, _ in fused]), lambda_=p.mmr_lambda)
            stage_scores["mmr"] = dict(ordered)
            timings["mmr"] = (time.perf_counter() - t) * 1000
        ids = [cid for cid, _ in ordered]

        if p.running("rerank") and self.reranker is not None and ids:
            t = time.perf_counter()
            head = ids[:p.rerank_depth]
            passages = [(cid, self.chunks.at[self.row_of[cid], "text"]) for cid in head]
            reranked = rerank(head, blend(self.reranker.score(query, passages),
                                          p.rerank_first_stage_weight))
            stage_scores["rerank"] = dict(reranked)
            ids = [cid for cid, _ in reranked] + ids[p.rerank_depth:]
            timings["rerank"] = (time.perf_counter() - t) * 1000
        return ids

    def _row(self, row_index: int) -> dict[str, Any]:
        return self._table.row(row_index)

    def doc_of(self, chunk_id: str) -> str:
        """The judgment of chunk ``chunk_id``."""
        return self._row(self.row_of[chunk_id])["doc_id"]

    def first_row(self, doc_id: str) -> int | None:
        """The row of the first chunk of judgment ``doc_id`` (None: it has none here)."""
        return self._first_chunks().get(doc_id)

    def _first_chunks(self) -> dict[str, int]:
        if self._table.first_chunk is None:
            first: dict[str, int] = {}
            for i, doc_id in enumerate(self.chunks["doc_id"]):
                first.setdefault(doc_id, i)
            self._table.first_chunk = first
        return self._table.first_chunk

    def hit_at(self, row: int, rank: int, scores: dict[str, float]) -> Hit:
        """Chunk row ``row`` as the hit at ``rank`` with ``scores``."""
        return self._hit(self._row(row), rank, scores)

    def _hit(self, row: dict[str, Any], rank: int, scores: dict[str, float]) -> Hit:
        return Hit(rank=rank, chunk_id=row["chunk_id"], doc_id=row["doc_id"], text=row["text"],
                   source_path=row["source_path"], page_number=int(row["page_number"]),
                   section_type=row["section_type"],
                   metadata={name: row.get(name) for name in CASE_FIELDS}, scores=scores)

    def _with_facts(self, documents: list[Hit], query: str, sheet, filters: SearchFilter,
                    mask: np.ndarray | None = None) -> list[Hit]:
        """``documents`` fused by weighted RRF with the fact channel's ranking; ``mask``: the
        search's indexed filter over the chunk rows (None: no indexed filter)."""
        def search(sheet=sheet):
            if sheet is None:
                sheet = extract_rules(query, "query", "query")
            return self.facts.search(sheet, self.params.fact_depth,
                                     exclude=filters.exclude_doc_ids, year_to=filters.year_to)

        found = search() if sheet is not None else self._table.fact_ranking(
            (query, self.params.fact_depth, filters.exclude_doc_ids,
             filters.year_to), search)
        first_chunk = self._first_chunks()
        by_doc = {h.doc_id: h for h in documents}
        fact_score = dict(found)
        fact_ids = []
        for doc_id, _ in found:
            if doc_id in by_doc or doc_id not in first_chunk:
                fact_ids.append(doc_id)
                continue
            row = first_chunk[doc_id]
            if mask is not None and not mask[row]:  # the search's own filter mask
                continue
            record = self._row(row)
            if filters.post_ok(record):
                by_doc[doc_id] = self._hit(record, 0, {})
                fact_ids.append(doc_id)
        fused = fuse_with_facts([h.doc_id for h in documents], fact_ids, self.params.fact_weight,
                                self.params.rrf_k)
        out = []
        for rank, (doc_id, score) in enumerate(fused, start=1):
            hit = by_doc[doc_id]
            scores = {**hit.scores, "fused_facts": float(score)}
            if doc_id in fact_score:
                scores["facts"] = float(fact_score[doc_id])
            out.append(hit.at(rank, scores))
        return out

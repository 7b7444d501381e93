"""Runs of every condition over a collection, their scores, and the significance tests.

Outputs under ``out/<collection>/``: ``<condition>.run`` (TREC run files, ``depth`` documents
per query), ``per_query.csv`` (every measure of every condition on every test query) and
``significance.json``; the returned summary feeds ``metrics/retrieval.json``.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import EvaluateParams, Params, RetrieveParams
from countercase.evaluate.collection import (AILA_TASKS, Collection, aila_collection, read_qrels,
                                             read_tsv_topics, unretrievable)
from countercase.evaluate.conditions import Condition
from countercase.evaluate.leakage import overlapping_documents
from countercase.evaluate.measures import Run, aggregate, per_query, write_trec_run
from countercase.evaluate.significance import compare_all
from countercase.evaluate.trec import CollectionError, index_collection
from countercase.evaluate.variants import chunk_variant
from countercase.retrieve.load import IndexPaths, open_retriever

log = logging.getLogger(__name__)

# every condition is tested against these (rerank: when the trained reranker exists; rerank
# against no_rerank is the reranker's gain, whichever of them the configured `full` is)
REFERENCES = ("full", "bm25_docs", "no_rerank", "rerank")


class _Searchers:
    """The indexes of one collection, opened once and shared by every condition."""

    def __init__(self, task: str, base: RetrieveParams, paths: IndexPaths,
                 dense: bool = True, rerank: bool = False) -> None:
        self.task, self.paths = task, paths
        # both retrievers loaded (dense too, when its embeddings exist), whatever base switches
        full = base.model_copy(update={"use_bm25": True, "use_dense": dense})
        reranker = None
        if rerank or base.use_rerank:  # one reranker (and score cache) for every condition
            from countercase.retrieve.rerank import load_reranker

            reranker = load_reranker(base.rerank_model, base.rerank_backend)
        self.precedents = open_retriever("precedents", full, paths, reranker=reranker) \
            if task == "precedents" or base.statute_bridge else None
        self.statutes = (open_retriever("statutes", full, paths, reranker=reranker)
                         if task == "statutes" else None)

    def corpus_copies(self, topics: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
        """qid -> [(judgment, share)] of the corpus judgments holding a query's text (the
        leakage guard: the statute bridge must not read a copy of the query)."""
        if self.precedents is None:
            return {}
        chunks = self.precedents.chunks
        return overlapping_documents(topics, zip(chunks["doc_id"], chunks["text"]))

    def for_condition(self, params: RetrieveParams):
        """``search(text, k, exclude) -> RetrievalResult`` under ``params``."""
        if self.task == "precedents":
            retriever = self.precedents.with_params(params)
            return lambda text, k, exclude: retriever.search(text, k=k)
        from countercase.retrieve.load import statute_search

        search = statute_search(self.statutes.with_params(params),
                                self.precedents.with_params(params) if self.precedents else None,
                                params, self.paths)
        return lambda text, k, exclude: search.search(text, k=k, exclude=exclude)


def run_condition(condition: Condition, collection: Collection, paths: IndexPaths,
                  base: RetrieveParams, evaluate: EvaluateParams, searchers: _Searchers | None = None,
                  exclude: dict[str, list[str]] | None = None) -> Run:
    """One run: ``evaluate.depth`` documents per topic. ``exclude``: per query, judgments the
    statute bridge must not read (the leakage guard's finds)."""
    qids = list(collection.topics)
    run: Run = {}
    if condition.level == "docs":
        from countercase.index.bm25 import Bm25Searcher

        with Bm25Searcher(paths.index_dir / f"{collection.task}_docs") as searcher:
            for qid in tqdm(qids, desc=condition.name, unit="query"):
                run[qid] = searcher.search(collection.topics[qid], evaluate.depth)
        return run
    params = condition.params(base, evaluate.chunk_depth)
    searchers = searchers or _Searchers(collection.task, base, paths,
                                        dense=condition.chunking is None)
    search = searchers.for_condition(params)
    for qid in tqdm(qids, desc=condition.name, unit="query"):
        result = search(collection.topics[qid], evaluate.depth, (exclude or {}).get(qid, ()))
        # scores that fall with the rank: a pooled hit carries its best chunk's scores, which
        # differ in kind between conditions, and trec_eval orders by score
        run[qid] = [(hit.doc_id, float(evaluate.depth - i))
                    for i, hit in enumerate(result.documents)]
    return run


@dataclass(frozen=True)
class VariantSource:
    """What a chunking variant is cut from: the ingest stage's documents and the extract
    stage's folder (sections, metadata)."""

    documents: Path
    extract_dir: Path


def evaluate_collection(collection: Collection, conditions: list[Condition], paths: IndexPaths,
                        base: RetrieveParams, evaluate: EvaluateParams,
                        out: Path, doc_ids: set[str],
                        variants: VariantSource | None = None) -> dict[str, Any]:
    out = out / collection.name
    out.mkdir(parents=True, exist_ok=True)
    test = collection.test_qids()
    conditions = [c for c in conditions if collection.task in c.tasks
                  and (c.chunking is None or variants is not None)]
    reranks = [c for c in conditions if c.overrides.get("use_rerank")]
    model = Path(base.rerank_model)
    if (reranks or base.use_rerank) and not model.is_dir():
        # a collection can be evaluated before (or without) the reranker's training: the
        # conditions that need it are left out, the others run with the first stage alone
        log.warning("no trained reranker in %s (stage train_reranker): condition(s) %s skipped"
                    "%s", model, ", ".join(c.name for c in reranks) or "none",
                    "; the configured pipeline runs without it" if base.use_rerank else "")
        conditions = [c for c in conditions if c not in reranks]
        reranks = []
        base = base.model_copy(update={"use_rerank": False})
    tables, seconds = {}, {}
    searchers = (_Searchers(collection.task, base, paths, rerank=bool(reranks))
                 if any(c.level == "chunks" for c in conditions) else None)
    overlaps = (searchers.corpus_copies({q: collection.topics[q] for q in test})
                if searchers is not None else {})
    exclude = {qid: [doc for doc, _ in docs] for qid, docs in overlaps.items()}
    for condition in conditions:
        started = time.perf_counter()
        if condition.chunking:
            size, overlap = condition.chunking
            variant = chunk_variant(variants.documents, variants.extract_dir, size, overlap,
                                    out.parent / "chunkings")
            run = run_condition(condition, collection, variant, base, evaluate)
        else:
            run = run_condition(condition, collection, paths, base, evaluate, searchers, exclude)
        seconds[condition.name] = round(time.perf_counter() - started, 2)
        write_trec_run(run, out / f"{condition.name}.run", condition.name)
        tables[condition.name] = per_query(collection.qrels, run, test)
    long = pd.concat({name: t for name, t in tables.items()}, names=["condition"]).reset_index()
    long.to_csv(out / "per_query.csv", index=False, float_format="%.6f")
    significance = {
        measure: {ref: compare_all({n: t[measure].to_numpy() for n, t in tables.items()}, ref)
                  for ref in REFERENCES if ref in tables}
        for measure in ("MAP", "P@10", "BPREF", "RR")}
    (out / "significance.json").write_text(json.dumps(significance, indent=2) + "\n")
    return {"scores": {name: aggregate(t) for name, t in tables.items()},
            "significance": significance, "seconds": seconds,
            "n_test_queries": len(test), "queries_with_a_corpus_copy": overlaps,
            "unretrievable_relevant": unretrievable(
                {q: collection.qrels[q] for q in test if q in collection.qrels}, doc_ids)}



Job = tuple[Collection, IndexPaths, set[str]]  # a collection, its indexes, its document ids


def aila_jobs(names: list[str], aila_dir: Path, paths: IndexPaths) -> list[Job]:
    """The AILA 2019 tasks asked for (default both)."""
    unknown = [n for n in names if n not in AILA_TASKS]
    if unknown:
        raise CollectionError(f"unknown collection(s) {', '.join(unknown)}: "
                              f"use {', '.join(AILA_TASKS)}")
    jobs = []
    for name in names or list(AILA_TASKS):
        collection = aila_collection(name, aila_dir)
        table = paths.chunk_table(collection.task)
        doc_ids = set(pd.read_parquet(table, columns=["doc_id"])["doc_id"]) if table.exists() \
            else set()
        jobs.append((collection, paths, doc_ids))
    return jobs


def trec_job(docs: Path, topics: Path, qrels: Path, index_out: Path, params: Params) -> list[Job]:
    """Another collection in TREC form, indexed here (:mod:`countercase.evaluate.trec`)."""
    paths, doc_ids = index_collection(docs, index_out, params.index, params.extract)
    return [(Collection(topics.stem, "precedents", read_tsv_topics(topics), read_qrels(qrels)),
             paths, doc_ids)]

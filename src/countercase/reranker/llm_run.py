"""Stage ``rerank_llm``: the local LLM as a pointwise reranker of the configured pipeline.

For AILA 2019 Task 1 (precedents) and Task 2 (statutes), on the first ``queries`` test queries:
the ranking the evaluate stage's ``no_rerank`` condition gives (the configured first stage,
whether or not the domain reranker is on; the same searchers, condition and
leakage guard), its top ``depth`` documents reordered by
:class:`~countercase.reranker.llm.LlmRelevanceReranker` over each document's best chunk, the
tail kept as it was. Both rankings are compared in one :func:`~countercase.experiment.Experiment`.

Outputs under ``out/<collection>/``: ``no_rerank.run`` and ``llm.run`` (TREC run files),
``per_query.csv``, ``significance.json`` and ``scores.jsonl`` (every pair's P(yes), its rank
before and after).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.config import Params
from countercase.datasets import AILA_COLLECTIONS, Dataset, load
from countercase.datasets.aila import TEST
from countercase.experiment import Experiment, ranked
from countercase.layout import IndexPaths
from countercase.reranker.llm import LlmRelevanceReranker
from countercase.retrieve.registry import candidate_params
from countercase.retrieve.rerank import rerank
from countercase.retrieve.searchers import Searchers
from countercase.runtime.recording import Recording

log = logging.getLogger(__name__)

MEASURES = ("MAP", "P@10", "nDCG@10", "RR")
KIND = {"precedents": "precedent", "statutes": "statute"}


def test_queries(n: int) -> tuple[str, ...]:
    """The first ``n`` test queries (all 40 when ``n`` is 0): a deterministic prefix of TEST."""
    return TEST[:n] if n else TEST


def _candidates(dataset: Dataset, params: Params, paths: IndexPaths):
    """Per query, the ``no_rerank`` condition's ranked document hits (the evaluate stage's
    configured first stage, with its leakage guard)."""
    # the first stage only: the domain reranker is neither run nor loaded
    base = params.retrieve.without("rerank")
    searchers = Searchers(dataset.task, base, paths)
    exclude: dict[str, list[str]] = {}
    if dataset.task == "statutes":  # only the statute bridge reads the exclusions
        overlaps = searchers.corpus_copies(dataset.queries)
        exclude = {q: [doc for doc, _ in docs] for q, docs in overlaps.items()}
    search = searchers.search(candidate_params(base, params.evaluate.chunk_depth))
    return {q: search(text, params.evaluate.depth, exclude.get(q, ())).documents
            for q, text in tqdm(dataset.queries.items(), desc=f"{dataset.collection} no_rerank",
                                unit="query")}


def rerank_collection(name: str, params: Params, aila_dir: Path, paths: IndexPaths, out: Path,
                      recording: Recording, cache_dir: Path | None = None) -> dict[str, Any]:
    p = params.rerank_llm
    qids = test_queries(p.queries)
    dataset = load(f"{name.replace('-', '/')}/test", aila_dir).subset(qids, "llm")
    t = time.perf_counter()
    hits = _candidates(dataset, params, paths)
    retrieval_seconds = time.perf_counter() - t
    reranker = LlmRelevanceReranker(recording, KIND[dataset.task], p.query_chars,
                                    p.passage_chars, cache_dir, p.threads, p.n_ctx, params.seed)
    load_average = [os.getloadavg()[0]]
    rows, seconds = [], {}

    def first_stage(topics):
        return {qid: ranked([h.doc_id for h in hits[qid]]) for qid in topics}

    def llm(topics):
        run = {}
        for qid in tqdm(topics, desc=f"{name} LLM", unit="query"):
            head = hits[qid][:p.depth]
            started = time.perf_counter()
            scores = reranker.score(topics[qid], [(h.chunk_id, h.text) for h in head])
            seconds[qid] = time.perf_counter() - started
            order = [doc for doc, _ in rerank([h.doc_id for h in head], scores)]
            run[qid] = ranked(order + [h.doc_id for h in hits[qid][p.depth:]])
            after = {doc: i for i, doc in enumerate(order, start=1)}
            rows.extend({"qid": qid, "doc_id": h.doc_id, "chunk_id": h.chunk_id,
                         "rank_before": i, "rank_after": after[h.doc_id], "p_yes": round(s, 6),
                         "relevant": dataset.qrels.get(qid, {}).get(h.doc_id, 0)}
                        for i, (h, s) in enumerate(zip(head, scores), start=1))
        return run

    folder = out / name
    result = Experiment({"no_rerank": first_stage, "llm": llm}, dataset,
                        baselines=["no_rerank"], tested=MEASURES, out=folder)
    load_average.append(os.getloadavg()[0])
    with (folder / "scores.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    cost = reranker.cost
    pairs = cost.model_calls + cost.cache_hits
    scores = result.aggregate()
    return {
        "task": dataset.task, "queries": list(qids), "depth": p.depth,
        "scores": {run: {m: scores[run][m] for m in MEASURES} for run in scores},
        "significance": {m: result.significance[m]["no_rerank"]["llm"] for m in MEASURES},
        "pairs": pairs, "relevant_in_head": sum(r["relevant"] > 0 for r in rows),
        "cost": {**cost.as_dict(),
                 # this run's wall clock (near 0 when the cache answers) ...
                 "seconds_per_query": round(sum(seconds.values()) / len(qids), 3),
                 # ... and the model's, as recorded when each pair was scored
                 "model_seconds_per_pair": (round(cost.recorded_seconds / pairs, 3)
                                            if pairs else None),
                 "model_seconds_per_query": round(cost.recorded_seconds / len(qids), 3),
                 "prompt_tokens_per_pair": round(cost.recorded_prompt_tokens / pairs, 1)
                 if pairs else None,
                 "evaluated_tokens_per_pair": round(cost.recorded_evaluated_tokens / pairs, 1)
                 if pairs else None,
                 "retrieval_seconds": round(retrieval_seconds, 1),
                 "load_average_1min": [round(x, 2) for x in load_average]},
        "model": reranker.model_name,
    }


def run_rerank_llm(params: Params, aila_dir: Path, paths: IndexPaths, out: Path,
                   recording: Recording, cache_dir: Path | None = None) -> dict[str, Any]:
    """The stage; ``recording``: the LLM's P(yes) answers (replayed where it holds them)."""
    p = params.rerank_llm
    started = time.perf_counter()
    tasks = {name: rerank_collection(name, params, aila_dir, paths, out, recording, cache_dir)
             for name in AILA_COLLECTIONS}
    models = {t.pop("model") for t in tasks.values()}
    n = len(test_queries(p.queries))
    return {
        "model": models.pop(), "depth": p.depth, "query_chars": p.query_chars,
        "passage_chars": p.passage_chars, "threads": p.threads,
        "test_queries": n,
        "test_queries_note": ("all 40 test queries (AILA_Q11..Q50)" if n == len(TEST) else
                              f"the first {n} of the 40 test queries ({TEST[0]}..{TEST[n - 1]}): "
                              "all 40 do not fit the stage's time budget on 2 cores"),
        "candidates": "the evaluate stage's `no_rerank` condition (params.yaml retrieve, the "
                      "domain reranker off); the top "
                      "depth documents reordered by P(yes) of their best chunk, the tail kept",
        "tasks": tasks, "seconds": round(time.perf_counter() - started, 1),
        "recording": recording.counts.as_dict(),
    }

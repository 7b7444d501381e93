"""The latency benchmark of the retrieval pipeline: the 50 AILA queries through each task,
each stage's p50 and p95 in milliseconds (``metrics/latency.json``).

Conditions: both tasks with the configured pipeline (reranker off); precedents with a year
filter narrow enough to pre-filter and one wide enough to post-filter; precedents with the
reranker on the top ``rerank_depth``, run twice to show that a warm score cache makes the second
pass cost no model call; and the served system when it is no pipeline (a learned ranker), one
query at a time as ``countercase search`` serves it, its features computed cold. Each is a
system of the registry the composer builds. The reranker is the domain reranker
(``retrieve.rerank_model``, stage ``train_reranker``) when it exists; until then it is its
architecture with an untrained head
(:func:`~countercase.retrieve.rerank.untrained_minilm_cross_encoder`): the same cost, scores
that mean nothing, so this benchmark reports time only, never quality.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from countercase.config import RetrieveParams
from countercase.datasets.limits import Topics
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.ranker import Ranker
from countercase.retrieve.rerank import (CachedReranker, CrossEncoderReranker, load_reranker,
                                         untrained_minilm_cross_encoder)

log = logging.getLogger(__name__)

# Year ranges that keep about a tenth (pre-filter path) and about three quarters (post-filter
# path) of the AILA chunks.
FILTERED = {"precedents_years_1950_1975": (1950, 1975), "precedents_years_1990_2020": (1990, 2020)}
PLAIN = "no_rerank"  # the configured pipeline, its reranker off: the stages timed without it
RERANKED = "rerank"  # the configured pipeline with the domain reranker: the reranker's cost


def summarise(samples: list[float]) -> dict[str, float]:
    values = np.asarray(samples, dtype=float)
    return {"p50": round(float(np.percentile(values, 50)), 2),
            "p95": round(float(np.percentile(values, 95)), 2),
            "mean": round(float(values.mean()), 2), "n": int(values.size)}


def time_queries(retriever, queries: list[str], label: str,
                 filters: SearchFilter | None = None) -> dict[str, Any]:
    retriever.search(queries[0], filters)  # warm-up: JIT, caches, lazy loads
    stages: dict[str, list[float]] = defaultdict(list)
    prefiltered = 0
    for query in tqdm(queries, desc=f"latency {label}", unit="query"):
        result = retriever.search(query, filters)
        prefiltered += result.prefiltered
        for stage, ms in result.timings_ms.items():
            stages[stage].append(ms)
    return {"stages_ms": {stage: summarise(v) for stage, v in stages.items()},
            "n_prefiltered": prefiltered}


def time_system(rank: Callable, queries: list[str], label: str,
                kind: str = "description") -> dict[str, Any]:
    """A system of the registry (``topics -> run``) on one query at a time, each under a new
    id (nothing of an earlier query is reused), the queries read as ``kind``."""
    rank(Topics({"warm-up": queries[0]}, kind=kind))  # the indexes and the model opened
    totals = []
    for i, query in enumerate(tqdm(queries, desc=f"latency {label}", unit="query")):
        started = time.perf_counter()
        rank(Topics({f"latency-{i}": query}, kind=kind))
        totals.append((time.perf_counter() - started) * 1000)
    return {"stages_ms": {"total": summarise(totals)}}


def run_latency(queries: list[str], params: RetrieveParams, plain: Mapping[str, Ranker],
                reranked: Callable[[Any], Ranker],
                served: dict[str, tuple[str, Callable]] | None = None) -> dict[str, Any]:
    """Every condition of the module docstring; ``plain``: per task, system :data:`PLAIN` as
    the composer builds it; ``reranked``: a reranker -> system :data:`RERANKED` as the composer
    builds it around that reranker; ``served``: per kind of query, the system that serves it
    and its ranking function, when the served system is no pipeline."""
    import torch

    report: dict[str, Any] = {"n_queries": len(queries), "torch_threads": torch.get_num_threads(),
                              "conditions": {}}
    conditions = report["conditions"]
    for task in ("precedents", "statutes"):
        conditions[task] = time_queries(plain[task], queries, task)
    for label, years in FILTERED.items():
        conditions[label] = time_queries(plain["precedents"], queries, label,
                                         SearchFilter.build(*years))

    with tempfile.TemporaryDirectory() as tmp:
        trained = Path(params.rerank_model).is_dir()
        cached = (load_reranker(params.rerank_model, params.rerank_backend) if trained else
                  CachedReranker(CrossEncoderReranker(untrained_minilm_cross_encoder(tmp))))
        retriever = reranked(cached)
        label = f"precedents_rerank_top{params.rerank_depth}"
        conditions[label] = time_queries(retriever, queries, label)
        cold = cached.stats.as_dict()
        conditions[f"{label}_warm_cache"] = time_queries(retriever, queries, f"{label} again")
        warm = cached.stats.as_dict()
        conditions[f"{label}_warm_cache"]["model_calls"] = warm["model_calls"] - cold["model_calls"]
        conditions[f"{label}_warm_cache"]["cache_hits"] = warm["cache_hits"] - cold["cache_hits"]
        conditions[label]["reranker"] = (
            f"the domain reranker ({params.rerank_backend}, stage train_reranker)" if trained
            else "MiniLM-L6 cross-encoder, untrained head (cost only)")
    for kind, (name, rank) in (served or {}).items():
        conditions[f"served_{kind}"] = {"system": name, **time_system(
            rank, queries, f"served {kind} ({name})", kind)}
    return report

"""The tuning grids behind the ``retrieve`` defaults, chosen by MAP on AILA_Q1..Q10 only.

Every grid point is scored on the tuning queries and, for the record, on the test queries
AILA_Q11..Q50; ``best`` is the first point in grid order whose tuning MAP is within
:data:`TIE_MARGIN` of the highest. The choice is copied into ``params.yaml`` by hand, so a change of data or code that
moves the optimum shows in ``metrics/tuning.json`` without silently changing the system.

- precedents: the dense ranking's fusion weight (BM25's is 1) and MMR on or off; then, on the
  configured pipeline, the fact channel's weight in its fusion with the judgments (0: off);
- statutes: the statute texts' dense weight and MMR, and the bridge's depth, rank offset and
  weight of the statute texts' ranking against the bridge's (1).
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

from tqdm import tqdm

from countercase.config import Params
from countercase.datasets import Dataset
from countercase.datasets.aila import TEST, TUNING
from countercase.datasets.leakage import overlapping_documents
from countercase.experiment import Run, ranked, score_run
from countercase.retrieve.load import IndexPaths, bridge_inputs, open_retriever
from countercase.retrieve.statute_bridge import StatuteBridge, fuse_statute_rankings

log = logging.getLogger(__name__)

# Ten tuning queries with 24 relevant judgments (Task 1) separate grid points by less than one
# relevant document moving a few ranks: within this margin of the top tuning MAP the first
# point in grid order wins, and every grid lists the simpler setting first.
TIE_MARGIN = 0.001
DENSE_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)
STATUTE_DENSE_WEIGHTS = (0.0, 0.5, 1.0)
BRIDGE_DEPTHS = (10, 20, 50)
BRIDGE_OFFSETS = (0.0, 5.0)
DIRECT_WEIGHTS = (0.0, 0.1, 0.25, 0.5)
FACT_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)


def _maps(collection: Dataset, run: Run) -> dict[str, float]:
    """MAP on the tuning queries (the choice) and, for the record, on the test queries."""
    return {f"{part}_MAP": round(float(score_run(run, collection.subset(qids, part),
                                                 ["MAP"])["MAP"].mean()), 4)
            for part, qids in (("tuning", TUNING), ("test", TEST))}


def _best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    top = max(row["tuning_MAP"] for row in rows)
    return next(row for row in rows if row["tuning_MAP"] >= top - TIE_MARGIN)


def _weights(task: str, dense: float, params: Params) -> dict[str, dict[str, float]]:
    return {**params.retrieve.fusion_weights, task: {"bm25": 1.0, "dense": dense}}


def tune_precedents(collection: Dataset, params: Params, paths: IndexPaths) -> dict[str, Any]:
    depth = params.evaluate.chunk_depth
    base = open_retriever("precedents", params.retrieve.model_copy(
        update={"bm25_depth": depth, "dense_depth": depth, "use_rerank": False}), paths,
        facts=True)
    rows = []
    for dense, mmr in tqdm(list(itertools.product(DENSE_WEIGHTS, (False, True))), desc="tune task 1"):
        retriever = base.with_params(base.params.model_copy(update={
            "use_mmr": mmr, "mmr_tasks": ["precedents"],
            "fusion_weights": _weights("precedents", dense, params)}))
        run = {q: ranked([h.doc_id for h in retriever.search(text, k=params.evaluate.depth).documents])
               for q, text in collection.queries.items()}
        rows.append({"dense_weight": dense, "use_mmr": mmr, **_maps(collection, run)})
    facts = []
    for weight in tqdm(FACT_WEIGHTS, desc="tune task 1: fact channel"):
        retriever = base.with_params(base.params.model_copy(update={"fact_weight": weight}))
        run = {q: ranked([h.doc_id for h in retriever.search(text, k=params.evaluate.depth).documents])
               for q, text in collection.queries.items()}
        facts.append({"fact_weight": weight, **_maps(collection, run)})
    return {"grid": rows, "best": _best(rows),
            "facts": {"grid": facts, "best": _best(facts),
                      "on": "the configured retrieve section (its dense weight and MMR)"}}


def tune_statutes(collection: Dataset, params: Params, paths: IndexPaths) -> dict[str, Any]:
    depth = params.evaluate.chunk_depth
    configured = params.retrieve.model_copy(
        update={"bm25_depth": depth, "dense_depth": depth, "use_rerank": False})
    precedents = open_retriever("precedents", configured, paths)
    statutes = open_retriever("statutes", configured, paths)
    exclude = {q: [d for d, _ in found] for q, found in overlapping_documents(
        collection.queries, zip(precedents.chunks["doc_id"], precedents.chunks["text"])).items()}
    read = max(BRIDGE_DEPTHS) + max((len(v) for v in exclude.values()), default=0)
    cited = {q: [h.doc_id for h in precedents.search(text, k=read).documents]
             for q, text in tqdm(collection.queries.items(), desc="tune task 2: precedents")}
    direct = {}
    for dense, mmr in itertools.product(STATUTE_DENSE_WEIGHTS, (False, True)):
        retriever = statutes.with_params(configured.model_copy(update={
            "use_mmr": mmr, "mmr_tasks": ["statutes"],
            "fusion_weights": _weights("statutes", dense, params)}))
        direct[dense, mmr] = {q: [h.doc_id for h in retriever.search(text, k=1000).documents]
                              for q, text in collection.queries.items()}
    mapping, sections = bridge_inputs(paths)
    rows = []
    for (dense, mmr), bridge_depth, offset, weight in itertools.product(
            direct, BRIDGE_DEPTHS, BRIDGE_OFFSETS, DIRECT_WEIGHTS):
        bridge = StatuteBridge(mapping, sections, bridge_depth, offset)
        run = {}
        for q in collection.queries:
            bridged = [s for s, _ in bridge.rank(cited[q], exclude.get(q, ()))]
            run[q] = fuse_statute_rankings(direct[dense, mmr][q], bridged,
                                           {"direct": weight, "precedents": 1.0}, configured.rrf_k)
        rows.append({"dense_weight": dense, "use_mmr": mmr, "bridge_depth": bridge_depth,
                     "bridge_rank_offset": offset, "direct_weight": weight,
                     **_maps(collection, run)})
    return {"grid": rows, "best": _best(rows), "excluded_near_copies": exclude}

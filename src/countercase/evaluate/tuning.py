"""Stage ``tune``: the grids behind the retrieval configuration, and the choice, written down
before any test query is scored.

**Precedents** are tuned on the citation collection's tuning half (``citations/tuning``: several
hundred corpus judgments as masked queries, searched leave-one-out); every grid point is also
scored on AILA_Q1..Q10, reported beside it and never used to choose. **Statutes** have no such
collection and are tuned on AILA_Q1..Q10 (Task 2). No grid point is scored on AILA_Q11..Q50 or on
the citation collection's held-out half: those are the evaluate stage's, after the choice.

The rule (:data:`RULE`): the highest tuning MAP wins, but a point within ``TIE_MARGIN`` of
it that comes earlier in grid order is taken instead (every grid lists the simpler setting
first). The grids' points are data, ``params.yaml``'s ``tune`` section. Each grid is walked on
the choices before it (3 and 4 read none of 1 and 2, so they walk in a second process beside
them):

1. ``pipeline``: the dense ranking's fusion weight (BM25's is 1) and MMR on or off;
2. ``facts``: the fact channel's weight in its fusion with the judgments (0: off);
   then ``reduction``: the query as written, its fact-bearing sentences alone, or both
   (:mod:`countercase.retrieve.fact_sentences`);
3. ``passages``: BM25 over the chunks alone, the chunks' scores pooled by max, the best two or
   three summed, the best three averaged, or the first passage; then BM25's ``k1`` and ``b``
   for that pooling;
4. ``docs``: BM25's ``k1`` and ``b`` over whole judgments;
5. ``docs_fusion``: the configured pipeline fused by RRF with the judgment-level run, at a weight;
6. ``prior``: that run fused with a citation prior (how often the corpus cites a judgment), at
   a weight.

The choice goes to ``configs/tuning_choice.yaml`` (committed before the test is scored); the
stages that retrieve read their ``retrieve`` values from it (:data:`countercase.config.CHOICES`),
each declaring it as a DVC dependency, so a change of data or code that moves the optimum
reruns them. The systems of the registry built on grids 3 to 6 (passages_tuned, docs_tuned,
full_docs, full_docs_prior) name the chosen values in that file.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import Params, tuned_retrieve
from countercase.datasets import Dataset
from countercase.datasets.leakage import overlapping_documents
from countercase.datasets.limits import merged
from countercase.experiment import Run, score_run
from countercase.experiment.choice import TIE_MARGIN, best
from countercase.layout import IndexPaths
from countercase.retrieve.fact_sentences import MODES as REDUCTIONS
from countercase.retrieve.load import bridge_inputs, open_retriever
from countercase.retrieve.pooling import POOLS, ChunkSearches, passage_system
from countercase.retrieve.prior import citation_counts, with_prior
from countercase.retrieve.registry import candidate_params
from countercase.retrieve.searchers import Searchers
from countercase.retrieve.statute_bridge import StatuteBridge, fuse_statute_rankings
from countercase.retrieve.steps import bm25_docs_system, fused, pipeline_system
from countercase.runtime.processes import Apart

log = logging.getLogger(__name__)

RULE = (f"highest MAP on the tuning queries; a point within {TIE_MARGIN} of it that comes "
        "earlier in grid order (the simpler setting) is taken instead; grids walked in order, "
        "each on the choices before it")
SYSTEM_RULE = ("the tuned system is the configured pipeline (pipeline, facts and reduction "
               "grids) with every lever whose chosen weight is above 0: full_docs_prior "
               "when the prior's is, else full_docs when the judgment-level fusion's is, else full")

System = Callable[[Mapping[str, str]], Run]


class Scorer:
    """Runs a system once over the tuning queries and the reported ones; MAP on each."""

    def __init__(self, tuning: Dataset, reported: Dataset) -> None:
        self.tuning, self.reported = tuning, reported
        self.topics = merged(tuning.topics, reported.topics)

    def run(self, system: System) -> Run:
        return system(self.topics)

    def maps(self, run: Run) -> dict[str, float]:
        return {name: round(float(score_run(run, data, ["MAP"])["MAP"].mean()), 4)
                for name, data in (("tuning_MAP", self.tuning), ("reported_MAP", self.reported))}


def _frozen(run: Run) -> System:
    return lambda topics: {q: run[q] for q in topics}


class _Grids:
    """Walks grids on one :class:`Scorer`: ``grid(name, points, system_of)`` scores each point,
    keeps the rows and the chosen point in ``found[name]`` and returns the chosen point's run."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer, self.found = scorer, {}

    def __call__(self, name: str, points: list[dict[str, Any]], system_of) -> Run:
        rows, runs = [], []
        for point in tqdm(points, desc=f"tune task 1: {name}"):
            runs.append(self.scorer.run(system_of(**point)))
            rows.append({**point, **self.scorer.maps(runs[-1])})
        chosen = best(rows)
        self.found[name] = {"grid": rows, "best": chosen}
        return runs[rows.index(chosen)]


def lexical_grids(tuning: Dataset, reported: Dataset, params: Params,
                  paths: IndexPaths) -> tuple[dict[str, Any], Run]:
    """Grids 3 and 4, the BM25 ones that read no pipeline choice: their rows and chosen points,
    and the chosen judgment-level run. Their searches are Lucene's, one core each, so
    :func:`tune_precedents` walks them in a second process beside grids 1 and 2."""
    grid = _Grids(Scorer(tuning, reported))
    depth, chunk_depth = params.evaluate.depth, params.evaluate.chunk_depth
    chunks = pd.read_parquet(paths.chunks, columns=["chunk_id", "doc_id", "index"])
    passages = ChunkSearches(paths.index_dir / "precedents_chunks", chunk_depth)

    def passage(pool: str, k1: float = 0.9, b: float = 0.4) -> System:
        return passage_system(passages, chunks, chunk_depth, depth, pool, k1, b)

    grid("passages", [{"pool": pool} for pool in POOLS], passage)
    pool = grid.found["passages"]["best"]["pool"]
    grid("passages_bm25", [{"pool": pool, "k1": k1, "b": b}
                           for k1, b in itertools.product(params.tune.k1, params.tune.b)], passage)

    def docs(k1: float, b: float) -> System:
        return bm25_docs_system(paths.index_dir / "precedents_docs", depth, "docs", k1, b)

    docs_run = grid("docs", [{"k1": k1, "b": b}
                             for k1, b in itertools.product(params.tune.k1, params.tune.b)], docs)
    return grid.found, docs_run


def tune_precedents(tuning: Dataset, reported: Dataset, params: Params, paths: IndexPaths,
                    links: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The precedent grids (module docstring) on ``tuning``, ``reported`` beside it; grids 3
    and 4 in a second process when ``tune.workers`` is 2 (the rows are the same with 1)."""
    scorer = Scorer(tuning, reported)
    depth, chunk_depth, k = params.evaluate.depth, params.evaluate.chunk_depth, params.retrieve.rrf_k
    base = candidate_params(params.retrieve.without("rerank"), chunk_depth, fact_weight=0.0)
    grid = _Grids(scorer)

    def pipeline(dense: float, mmr: bool, facts: float = 0.0, reduction: str = "none") -> System:
        weights = {**base.fusion_weights, "precedents": {"bm25": 1.0, "dense": dense}}
        steps = base.steps if mmr else base.without("mmr").steps
        return pipeline_system(searchers, base.model_copy(update={
            "steps": steps, "mmr_tasks": ["precedents"], "fusion_weights": weights,
            "fact_weight": facts, "query_reduction": reduction}), depth, label="pipeline")

    with Apart(params.tune.workers) as apart:
        # without their documents' readers (closures a process cannot be sent; no grid reads them)
        lexical = apart.submit(lexical_grids, replace(tuning, docs=None),
                               replace(reported, docs=None), params, paths)
        searchers = Searchers("precedents", base, paths, facts=True)
        grid("pipeline", [{"dense": d, "mmr": m} for d, m in
                          itertools.product(params.tune.dense_weights, (False, True))], pipeline)
        chosen = {key: grid.found["pipeline"]["best"][key] for key in ("dense", "mmr")}
        grid("facts", [{**chosen, "facts": w} for w in params.tune.fact_weights], pipeline)
        chosen["facts"] = grid.found["facts"]["best"]["facts"]
        text_run = grid("reduction", [{**chosen, "reduction": m} for m in REDUCTIONS], pipeline)
        found, docs_run = lexical.result()
    grid.found |= found  # after grids 1 and 2, as walked in one process

    def fusion(weight: float) -> System:
        return fused({"pipeline": (_frozen(text_run), 1.0), "docs": (_frozen(docs_run), weight)},
                     k, depth)

    fused_run = grid("docs_fusion", [{"weight": w} for w in params.tune.docs_fusion_weights],
                    fusion)
    exclude = {q: [d for d, _ in hits] for q, hits in overlapping_documents(
        scorer.topics, zip(searchers.precedents.chunks["doc_id"],
                           searchers.precedents.chunks["text"])).items()}
    counts = {**citation_counts(links, tuning.qids, tuning.admits, exclude),
              **citation_counts(links, reported.qids, reported.admits, exclude)}

    def prior(weight: float) -> System:
        return with_prior(_frozen(fused_run), counts, weight, k, depth)

    grid("prior", [{"weight": w} for w in params.tune.prior_weights], prior)
    return grid.found


def tune_statutes(collection: Dataset, params: Params, paths: IndexPaths,
                  precedents: dict[str, Any]) -> dict[str, Any]:
    """The statute grids on AILA_Q1..Q10 (Task 2): dense weight and MMR of the statute texts,
    the bridge's depth, rank offset and the texts' weight against it; the bridge reads the
    precedents ranked by the pipeline ``precedents`` (:func:`tune_precedents`'s grids) chose."""
    depth = params.evaluate.chunk_depth
    pick = {"precedents": {name: found["best"] for name, found in precedents.items()}}
    configured = params.retrieve.without("rerank").model_copy(update={
        **tuned_retrieve(pick)["retrieve"], "bm25_depth": depth, "dense_depth": depth})
    precedents = open_retriever("precedents", configured, paths)
    statutes = open_retriever("statutes", configured, paths)
    exclude = {q: [d for d, _ in found] for q, found in overlapping_documents(
        collection.queries, zip(precedents.chunks["doc_id"], precedents.chunks["text"])).items()}
    read = max(params.tune.bridge_depths) + max((len(v) for v in exclude.values()), default=0)
    cited = {q: [h.doc_id for h in precedents.search(text, k=read).documents]
             for q, text in tqdm(collection.queries.items(), desc="tune task 2: precedents")}
    direct = {}
    for dense, mmr in itertools.product(params.tune.statute_dense_weights, (False, True)):
        weights = {**params.retrieve.fusion_weights, "statutes": {"bm25": 1.0, "dense": dense}}
        retriever = statutes.with_params(configured.model_copy(update={
            "steps": configured.steps if mmr else configured.without("mmr").steps,
            "mmr_tasks": ["statutes"], "fusion_weights": weights}))
        direct[dense, mmr] = {q: [h.doc_id for h in retriever.search(text, k=1000).documents]
                              for q, text in collection.queries.items()}
    mapping, sections = bridge_inputs(paths)
    rows = []
    for (dense, mmr), bridge_depth, offset, weight in itertools.product(
            direct, params.tune.bridge_depths, params.tune.bridge_rank_offsets,
            params.tune.direct_weights):
        bridge = StatuteBridge(mapping, sections, bridge_depth, offset)
        run = {}
        for q in collection.queries:
            bridged = [s for s, _ in bridge.rank(cited[q], exclude.get(q, ()))]
            run[q] = fuse_statute_rankings(direct[dense, mmr][q], bridged,
                                           {"direct": weight, "precedents": 1.0},
                                           configured.rrf_k)
        rows.append({"dense": dense, "mmr": mmr, "bridge_depth": bridge_depth,
                     "bridge_rank_offset": offset, "direct_weight": weight,
                     "tuning_MAP": round(float(score_run(run, collection, ["MAP"])["MAP"].mean()), 4)})
    return {"grid": rows, "best": best(rows), "excluded_near_copies": exclude}


def tuned_system(pick: dict[str, dict[str, Any]]) -> str:
    """The evaluate condition the precedent choice amounts to (:data:`SYSTEM_RULE`)."""
    if pick.get("prior", {}).get("weight", 0) > 0:
        return "full_docs_prior"
    if pick.get("docs_fusion", {}).get("weight", 0) > 0:
        return "full_docs"
    return "full"


def choice(report: dict[str, Any], tuning: Dataset, statutes: Dataset) -> dict[str, Any]:
    """What ``configs/tuning_choice.yaml`` records: each grid's chosen point, the rule, and the
    tuned system the test will name."""
    pick = {name: {k: v for k, v in found["best"].items() if not k.endswith("_MAP")}
            for name, found in report["precedents"].items()}
    return {"rule": RULE, "tuned_system": tuned_system(pick), "system_rule": SYSTEM_RULE,
            "tuned_on": {"precedents": f"{tuning.id} ({len(tuning.queries)} queries)",
                         "statutes": f"{statutes.id} ({len(statutes.queries)} queries)"},
            "precedents": pick,
            "statutes": {k: v for k, v in report["statutes"]["best"].items()
                         if not k.endswith("_MAP")},
            "tuning_MAP": {name: found["best"]["tuning_MAP"]
                           for name, found in report["precedents"].items()}}

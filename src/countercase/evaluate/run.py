"""Stage ``evaluate``: every condition on a dataset, one :func:`~countercase.experiment.Experiment`.

Outputs under ``out/<collection>/``: ``<condition>.run`` (TREC run files, ``depth`` documents
per test query), ``per_query.csv`` (every measure of every condition on every test query) and
``significance.json``; the returned summary feeds ``metrics/retrieval.json``.

With ``resume`` (a folder outside the outputs and the key of everything the runs depend on),
each condition's run is kept there as soon as it is ranked, and an interrupted stage run on the
same inputs reads those back instead of ranking again (the caller clears the folder when done).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from countercase.config import EvaluateParams, RetrieveParams
from countercase.datasets import Dataset, unretrievable
from countercase.evaluate.conditions import Condition
from countercase.evaluate.levers import FT_LEVERS, LeverSource, lever_system
from countercase.evaluate.variants import chunk_variant
from countercase.experiment import Experiment, System
from countercase.experiment.runs import read_trec_run
from countercase.experiment.systems import (bm25_docs_system, candidate_params, fact_system,
                                            pipeline_system)
from countercase.retrieve.load import IndexPaths
from countercase.retrieve.searchers import Searchers

log = logging.getLogger(__name__)

# every condition is tested against these (rerank: when the trained reranker exists; rerank
# against no_rerank is the reranker's gain, whichever of them the configured `full` is;
# full_aila_tuned: the configuration before the citation collection's tuning)
REFERENCES = ("full", "bm25_docs", "full_aila_tuned", "no_rerank", "rerank")


@dataclass(frozen=True)
class VariantSource:
    """What a chunking variant is cut from: the ingest stage's documents and the extract
    stage's folder (sections, metadata)."""

    documents: Path
    extract_dir: Path
    out: Path  # where the variants' chunk tables and indexes are built


def condition_paths(condition: Condition, paths: IndexPaths) -> IndexPaths:
    """The indexes ``condition`` searches: ``paths``, with another encoder's embeddings when it
    names them."""
    return paths if condition.dense_dir is None else replace(paths, dense_dir=condition.dense_dir)


def condition_system(condition: Condition, task: str, paths: IndexPaths, base: RetrieveParams,
                     evaluate: EvaluateParams, searchers: Searchers | None = None,
                     exclude: dict[str, list[str]] | None = None,
                     variants: VariantSource | None = None, levers: LeverSource | None = None,
                     admits=None) -> System:
    """The ranking function of ``condition``: ``evaluate.depth`` documents per topic;
    ``admits``: the dataset's rule of what a search may return (the citation prior's)."""
    if condition.level == "docs":
        return bm25_docs_system(paths.index_dir / f"{task}_docs", evaluate.depth, condition.name)
    if condition.level == "facts":
        return fact_system(paths.fact_index, evaluate.depth, condition.name)
    if condition.level == "lever":
        searchers = searchers or Searchers(task, base, condition_paths(condition, paths))
        full = pipeline_system(searchers, candidate_params(
            base, evaluate.chunk_depth, **levers.pipeline(condition.lever, base)),
            evaluate.depth, exclude, "full_ft" if condition.lever in FT_LEVERS else "full")
        return lever_system(condition.lever, levers, full, paths, evaluate.depth,
                            evaluate.chunk_depth, base.rrf_k, admits, exclude or {})
    params = condition.params(base, evaluate.chunk_depth)
    if condition.chunking:  # built when it runs (its time counts), BM25 only, no exclusions
        def rank(topics):
            variant = chunk_variant(variants.documents, variants.extract_dir,
                                    *condition.chunking, variants.out)
            return pipeline_system(Searchers(task, base, variant, dense=False), params,
                                   evaluate.depth, None, condition.name)(topics)
        return rank
    searchers = searchers or Searchers(task, base, condition_paths(condition, paths))
    return pipeline_system(searchers, params, evaluate.depth, exclude, condition.name)


def runnable(conditions: list[Condition], task: str, base: RetrieveParams,
             variants: VariantSource | None,
             levers: LeverSource | None = None) -> tuple[list[Condition], RetrieveParams]:
    """The conditions that can run here, and the base configuration they run on: a collection
    can be evaluated before (or without) the reranker's training; the conditions that need it
    are then left out, and the others run with the first stage alone."""
    conditions = [c for c in conditions if task in c.tasks
                  and (c.chunking is None or variants is not None)]
    if levers is None and any(c.level == "lever" for c in conditions):
        log.warning("no tuning choice (configs/tuning_choice.yaml, stage tune): condition(s) "
                    "%s skipped", ", ".join(c.name for c in conditions if c.level == "lever"))
        conditions = [c for c in conditions if c.level != "lever"]
    unchosen = [c for c in conditions if c.lever in FT_LEVERS and not (levers and levers.ft_weight)]
    if unchosen:
        log.warning("the fine-tuned encoder has no weight above 0 (configs/tuning_ft_choice.yaml, "
                    "stage tune_ft: %s): condition(s) %s skipped",
                    "not run" if levers is None or levers.ft_weight is None else "weight 0",
                    ", ".join(c.name for c in unchosen))
        conditions = [c for c in conditions if c not in unchosen]
    unembedded = [c for c in conditions if c.dense_dir is not None
                  and not (c.dense_dir / task / "meta.json").is_file()]
    if unembedded:
        log.warning("no embeddings of the fine-tuned encoder in %s (stages train_biencoder, "
                    "embed_ft): condition(s) %s skipped", unembedded[0].dense_dir,
                    ", ".join(c.name for c in unembedded))
        conditions = [c for c in conditions if c not in unembedded]
    reranks = [c for c in conditions if c.overrides.get("use_rerank")]
    model = Path(base.rerank_model)
    if (reranks or base.use_rerank) and not model.is_dir():
        log.warning("no trained reranker in %s (stage train_reranker): condition(s) %s skipped"
                    "%s", model, ", ".join(c.name for c in reranks) or "none",
                    "; the configured pipeline runs without it" if base.use_rerank else "")
        conditions = [c for c in conditions if c not in reranks]
        base = base.model_copy(update={"use_rerank": False})
    return conditions, base


def _keyed(system, key: str, seconds: Path):
    """``system`` with the key its run is kept under (Experiment's ``cache_key``); the seconds
    its ranking took are kept in ``seconds``, so that a run that reads the ranking back can
    count them as its earlier runs' (stage_times)."""
    def rank(topics):
        started = time.perf_counter()
        found = system(topics)
        seconds.parent.mkdir(parents=True, exist_ok=True)
        seconds.write_text(json.dumps({"key": key, "seconds": time.perf_counter() - started}),
                           encoding="utf-8")
        return found
    rank.cache_key = key
    return rank


def _seconds_before(seconds_dir: Path, read_back: list[str], key: str) -> float:
    """The ranking seconds of the systems read back (0 for one whose seconds were not kept)."""
    total = 0.0
    for name in read_back:
        try:
            kept = json.loads((seconds_dir / f"{name}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(kept, dict) and kept.get("key") == f"{key}/{name}":
            total += float(kept.get("seconds", 0.0))
    return round(total, 3)  # a quick ranking read back still counts (not rounded to 0)


def evaluate_dataset(dataset: Dataset, conditions: list[Condition], paths: IndexPaths,
                     base: RetrieveParams, evaluate: EvaluateParams, out: Path | None,
                     doc_ids: set[str], variants: VariantSource | None = None,
                     levers: LeverSource | None = None,
                     resume: tuple[Path, str] | None = None,
                     compare_runs: Path | None = None) -> dict[str, Any]:
    """Every runnable condition of ``conditions`` on ``dataset``; the runs, per-query table and
    tests written under ``out/<collection>/`` (nothing written when ``out`` is None).
    ``compare_runs``: another evaluation's folder (the default pipeline's, for the opt-in
    conditions), whose reference runs are read back to test against and not scored again."""
    conditions, base = runnable(conditions, dataset.task, base, variants, levers)
    if not paths.fact_index.is_dir():  # a collection without fact sheets (a TREC folder)
        facty = [c for c in conditions if c.level == "facts" or c.overrides.get("fact_weight")]
        if facty:
            log.warning("no fact index at %s: condition(s) %s skipped", paths.fact_index,
                        ", ".join(c.name for c in facty))
        conditions = [c for c in conditions if c not in facty]
    rerank = any(c.overrides.get("use_rerank") for c in conditions)
    facts = any(c.overrides.get("fact_weight") for c in conditions) or base.fact_weight > 0
    searchers = (Searchers(dataset.task, base, paths, rerank=rerank, facts=facts)
                 if any(c.level in ("chunks", "lever") for c in conditions) else None)
    # a collection with its own rule (the citation queries are corpus judgments) needs no guard
    overlaps = (searchers.corpus_copies(dataset.queries)
                if searchers is not None and not dataset.limits else {})
    exclude = {qid: [doc for doc, _ in docs] for qid, docs in overlaps.items()}
    # the conditions of another encoder share one opening of its embeddings (and its caches)
    encoders: dict[Path, Searchers] = {}
    for c in conditions:
        if c.dense_dir is not None and c.dense_dir not in encoders:
            encoders[c.dense_dir] = Searchers(dataset.task, base, condition_paths(c, paths))
    systems = {c.name: condition_system(c, dataset.task, paths, base, evaluate,
                                        encoders.get(c.dense_dir, searchers), exclude, variants,
                                        levers, dataset.admits)
               for c in conditions}
    cache_dir = resume[0] / dataset.collection if resume is not None else None
    if resume is not None:
        systems = {name: _keyed(system, f"{resume[1]}/{name}",
                                cache_dir / "seconds" / f"{name}.json")
                   for name, system in systems.items()}
    stored = ({name: path for name in REFERENCES if name not in systems
               and (path := compare_runs / dataset.collection / f"{name}.run").is_file()}
              if compare_runs is not None else {})
    systems |= {name: (lambda topics, path=path: read_trec_run(path))
                for name, path in stored.items()}
    result = Experiment(systems, dataset, baselines=REFERENCES, cache_dir=cache_dir,
                        out=out / dataset.collection if out is not None else None)
    earlier = (_seconds_before(cache_dir / "seconds", result.read_back, resume[1])
               if resume is not None else 0.0)
    scores = {name: found for name, found in result.aggregate().items() if name not in stored}
    return {"scores": scores, "significance": result.significance,
            "seconds": result.seconds, "read_back_from_an_interrupted_run": result.read_back,
            "seconds_in_earlier_runs": earlier,
            "reference": {c.name: c.reference for c in conditions},
            "n_test_queries": len(dataset.queries),
            "queries_with_a_corpus_copy": overlaps,
            "unretrievable_relevant": unretrievable(dataset.qrels, doc_ids)}


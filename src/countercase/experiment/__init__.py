"""One comparison of systems on one dataset (the PyTerrier ``Experiment`` idea).

``Experiment(systems, dataset, baselines=[...])`` ranks the dataset's queries with every system
(a named retrieval configuration or any callable ``topics -> run``), scores each run per query,
and tests every system against each named baseline (paired t-test and Wilcoxon, Holm-corrected
over the family, Cohen's d). This is the one scoring loop of the package: the evaluate and tune
stages, the reranker's validation, the LLM reranker, the perturb stage's comparison of query
constructions, the notebooks and the paper all go through it.

Each system receives the dataset's :class:`~countercase.datasets.Topics`: the queries with what
a search for each may return (the citation collection's leave-one-out rule), which the package's
systems apply inside their searches; every run is also checked against the same rule
(:func:`admitted`), so a system that ignores the limits is still scored only on what it may
return.

A system with a ``cache_key`` attribute (a string that changes whenever its rankings would) has
its run kept under ``cache_dir`` and read back instead of ranking again (the result names the
systems read back: their seconds are the reading's).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.datasets import Dataset
from countercase.errors import CountercaseError
from countercase.experiment.measures import MEASURES, aggregate, per_query
from countercase.retrieve.runs import Run, System, ranked, write_trec_run
from countercase.experiment.significance import compare_all

__all__ = ["Experiment", "ExperimentError", "ExperimentResult", "MEASURES", "Run", "System",
           "TESTED_MEASURES", "admitted", "ranked", "score_run"]

TESTED_MEASURES = ("MAP", "P@10", "BPREF", "RR")  # the track's measures: tested by default


class ExperimentError(CountercaseError, ValueError):
    """An experiment that cannot be run as asked (an unknown baseline or measure)."""


def score_run(run: Run, dataset: Dataset, measures: Sequence[str] | None = None) -> pd.DataFrame:
    """Per-query scores of ``run`` on ``dataset``'s queries (one row per judged query), over
    what the dataset admits."""
    return per_query(dataset.qrels, admitted(run, dataset), dataset.qids, tuple(measures) if measures else None)


@dataclass
class ExperimentResult:
    dataset: Dataset
    runs: dict[str, Run]
    per_query: dict[str, pd.DataFrame]  # system -> qid x measure
    significance: dict[str, dict[str, dict[str, Any]]]  # measure -> baseline -> system -> test
    seconds: dict[str, float] = field(default_factory=dict)
    read_back: list[str] = field(default_factory=list)  # systems whose run came from cache_dir

    def aggregate(self) -> dict[str, dict[str, float]]:
        """system -> measure -> mean over the queries (4 decimals)."""
        return {name: aggregate(table) for name, table in self.per_query.items()}

    def long_table(self) -> pd.DataFrame:
        """One row per (system, query): ``condition``, ``qid`` and every measure."""
        return pd.concat(self.per_query, names=["condition"]).reset_index()

    def write(self, out: Path) -> None:
        """``<system>.run`` files, ``per_query.csv`` and ``significance.json`` under ``out``."""
        out.mkdir(parents=True, exist_ok=True)
        for name, run in self.runs.items():
            write_trec_run(run, out / f"{name}.run", name)
        self.long_table().to_csv(out / "per_query.csv", index=False, float_format="%.6f")
        (out / "significance.json").write_text(json.dumps(self.significance, indent=2) + "\n")


def Experiment(systems: Mapping[str, System], dataset: Dataset,  # noqa: N802 (PyTerrier's name)
               measures: Sequence[str] | None = None, baselines: Sequence[str] = (),
               tested: Sequence[str] = TESTED_MEASURES, cache_dir: Path | None = None,
               out: Path | None = None) -> ExperimentResult:
    """Rank, score and compare ``systems`` on ``dataset`` (see the module docstring).

    ``baselines``: systems every other is tested against (those not among ``systems`` are
    skipped, so one list serves experiments with and without them); ``tested``: the measures
    tested; ``out``: where to write the runs, the per-query table and the tests."""
    names = list(measures or MEASURES)
    unknown = [m for m in [*names, *tested] if m not in MEASURES]
    if unknown:
        raise ExperimentError(f"unknown measure(s) {', '.join(unknown)}: use "
                              f"{', '.join(MEASURES)}")
    runs, tables, seconds, read_back = {}, {}, {}, []
    for name, system in systems.items():
        started = time.perf_counter()
        run, cached = _cached_run(name, system, dataset, cache_dir)
        runs[name] = admitted(run, dataset)
        if cached:
            read_back.append(name)
        seconds[name] = round(time.perf_counter() - started, 2)
        tables[name] = score_run(runs[name], dataset, names)
    significance = {
        measure: {base: compare_all({n: t[measure].to_numpy() for n, t in tables.items()}, base)
                  for base in baselines if base in tables}
        for measure in tested if measure in names}
    result = ExperimentResult(dataset, runs, tables, significance, seconds, read_back)
    if out is not None:
        result.write(out)
    return result


def admitted(run: Run, dataset: Dataset) -> Run:
    """``run`` without what ``dataset`` does not admit for each query (a citation query's own
    judgment and those decided after it): the collection's rule, applied to every system."""
    if not dataset.limits:
        return run
    return {qid: [(doc, score) for doc, score in ranking if dataset.admits(qid, doc)]
            if qid in dataset.queries else ranking for qid, ranking in run.items()}


def _cached_run(name: str, system: System, dataset: Dataset,
                cache_dir: Path | None) -> tuple[Run, bool]:
    """The system's run, and whether it was read back from ``cache_dir``."""
    key = getattr(system, "cache_key", None)
    if cache_dir is None or key is None:
        return system(dataset.topics), False
    digest = hashlib.sha256(json.dumps([key, dataset.id, list(dataset.qids)]).encode())
    # JSON, not a TREC run file: its scores come back exactly (a run file's six decimals could
    # tie two scores and let trec_eval order them otherwise)
    path = Path(cache_dir) / f"{name}-{digest.hexdigest()[:16]}.json"
    if path.exists():
        return {qid: [(doc, score) for doc, score in ranking]
                for qid, ranking in json.loads(path.read_text(encoding="utf-8")).items()}, True
    run = system(dataset.topics)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")  # a run killed while writing leaves no cached run
    partial.write_text(json.dumps(run), encoding="utf-8")
    partial.replace(path)
    return run, False

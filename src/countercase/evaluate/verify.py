"""``countercase regress``: score the regressions' conditions (again, or from the evaluate
stage's run files) and compare them with the committed expected scores, or record new ones."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.config import Params
from countercase.datasets import AILA_COLLECTIONS, load
from countercase.evaluate import regressions as reg
from countercase.evaluate.run import VariantSource, evaluate_dataset, unmasked_source
from countercase.experiment import Experiment
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.load import MissingIndexError
from countercase.retrieve.registry import BY_NAME
from countercase.retrieve.runs import read_trec_run

log = logging.getLogger(__name__)


def scores(records: list[dict[str, Any]], params: Params, paths: IndexPaths,
           variants: VariantSource | None = None, runs: Path | None = None,
           aila_root: Path | None = None, choices: Choices | None = None,
           citations: Path | None = None) -> reg.Scores:
    """(collection, condition) -> scores of each regression record: its condition run again on
    its dataset, or (``runs``) the run file the evaluate stage wrote, ``runs/<collection>/
    <condition>.run``, scored. ``choices``: the chosen values the systems name; ``citations``:
    the citation collection (the prior's links). A condition that cannot run here is left out
    (and logged)."""
    found: reg.Scores = {}
    for dataset_id in dict.fromkeys(r["dataset"] for r in records):
        chosen = [r for r in records if r["dataset"] == dataset_id]
        dataset = _load(dataset_id, aila_root)
        if runs is not None:  # the evaluate stage's runs, read back as systems
            files = {r["condition"]: runs / r["collection"] / f"{r['condition']}.run"
                     for r in chosen}
            for path in (p for p in files.values() if not p.exists()):
                log.warning("no run file %s", path)
            stored = {name: (lambda topics, path=path: read_trec_run(path))
                      for name, path in files.items() if path.exists()}
            ran = Experiment(stored, dataset).aggregate()
            found.update({(dataset.collection, name): s for name, s in ran.items()})
            continue
        conditions = [BY_NAME[r["condition"]] for r in chosen if r["condition"] in BY_NAME]
        # the citation queries' unmasked texts, as the evaluate stage gives them
        unmasked = (unmasked_source(params, paths) if dataset.collection == "citations"
                    else None)
        ran = evaluate_dataset(dataset, conditions, paths, params.retrieve, params.evaluate,
                               None, set(), variants, choices, citations=citations,
                               unmasked=unmasked)["scores"]
        found.update({(dataset.collection, name): s for name, s in ran.items()})
    return found


def index_statistics(paths: IndexPaths, task: str) -> dict[str, int]:
    """Documents and chunks of a task's chunk table (what its indexes hold)."""
    path = paths.chunk_table(task)
    if not path.exists():
        raise MissingIndexError(f"{task} chunk table not found: {path} (stage `extract` or "
                                "`index`): the regression records the index's statistics")
    table = pd.read_parquet(path, columns=["doc_id"])
    return {"documents": int(table["doc_id"].nunique()), "chunks": len(table)}


def verify(records: list[dict[str, Any]], params: Params, paths: IndexPaths,
           variants: VariantSource | None, runs: Path | None,
           aila_root: Path | None, choices: Choices | None = None,
           citations: Path | None = None) -> list[reg.Drift]:
    return reg.verify(records, scores(records, params, paths, variants, runs, aila_root, choices,
                                      citations), params, choices)


def update(records: list[dict[str, Any]], root: Path, params: Params, paths: IndexPaths,
           variants: VariantSource | None, runs: Path | None, aila_root: Path | None,
           reason: str, choices: Choices | None = None,
           citations: Path | None = None, cpu: str | None = None) -> list[Path]:
    """Score ``records`` and write them as expected scores, with ``reason`` (with ``cpu``: as
    that CPU class's own records); nothing is written unless every record could be scored."""
    if not reason.strip():
        raise reg.RegressionError("--update needs --reason: say why the expected scores change")
    planned = []
    for r in records:
        dataset = _load(r["dataset"], aila_root)
        condition = BY_NAME[r["condition"]]
        index = index_statistics(paths, dataset.task)
        if condition.level == "docs" or condition.chunking:  # not the main chunk table
            index = {"documents": index["documents"]}
        planned.append((r, dataset, condition, index))
    found = scores(records, params, paths, variants, runs, aila_root, choices, citations)
    missing = [f"{r['collection']}/{r['condition']}" for r in records
               if (r["collection"], r["condition"]) not in found]
    if missing:
        raise reg.RegressionError(f"{', '.join(missing)} could not be scored here (see the log)")
    written = [reg.update(root, r["collection"], r["dataset"], condition, params,
                          found[r["collection"], r["condition"]], _topics(dataset.qids), index,
                          reason, choices, cpu=cpu)
               for r, dataset, condition, index in planned]
    reg.write_matrix(root)
    return written


def new_record(ref: str) -> dict[str, str]:
    """What ``--update`` needs of a regression named ``collection/condition`` (new or not)."""
    collection, _, condition = ref.rpartition("/")
    if collection not in (*AILA_COLLECTIONS, "citations") or condition not in BY_NAME:
        raise reg.RegressionError(f"--update names a collection and a condition, e.g. "
                                  f"aila2019-task1/bm25 or citations/full; got {ref!r}")
    dataset = ("citations/heldout" if collection == "citations"
               else f"{collection.replace('-', '/')}/test")
    return {"collection": collection, "condition": condition, "dataset": dataset}


def _load(dataset_id: str, aila_root: Path | None):
    """A regression's dataset: ``aila_root`` is the AILA folder; the citation collection is
    read from its stage's folder."""
    return load(dataset_id, None if dataset_id.startswith("citations") else aila_root)


def _topics(qids: tuple[str, ...]) -> str:
    return f"{qids[0]}..{qids[-1]} ({len(qids)} queries)"

"""Regressions in the manner of Anserini's: committed inputs that a run is checked against.

``regressions/<collection>/<condition>.yaml`` holds the dataset, the command that checks it, the
configuration and the expected scores with their tolerance, and the history of why they were
set. Only ``countercase regress --update <ref> --reason "..."`` writes them (the evaluate stage
never does); ``countercase regress --verify`` scores the condition again (or reads the run file
the evaluate stage wrote) and reports every measure that moved beyond the tolerance, and every
setting of the configuration that is no longer what the scores were recorded with.
``README.md`` beside the files is the reproduction matrix generated from them.

A file's ``expected`` and ``config`` are the reference build's. A build on another CPU class
whose trained models differ in their bytes (docs/reproducing.md) is checked against that class's
own record, ``by_cpu: {<class>: {config, expected, updates}}``, where ``countercase regress
--update --cpu-class`` made one; the reference stays as it was.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from countercase import layout
from countercase.config import Params
from countercase.errors import CountercaseError
from countercase.experiment.measures import MEASURES
from countercase.index.dense import read_meta
from countercase.index.encoders import INT8
from countercase.retrieve.choices import Choices
from countercase.retrieve.registry import BY_NAME, SystemSpec, candidate_params
from countercase.runtime.cpu import cpu_class
from countercase.runtime.digests import sha256_files

TOLERANCE = 1e-4
# the index settings that only onnx-int8 reads (configs/int8_rule.yaml)
INT8_SETTINGS = ("int8_method", "int8_calibration_texts", "int8_tasks")
# (collection, condition) -> measure -> score
Scores = dict[tuple[str, str], dict[str, float]]


class RegressionError(CountercaseError, ValueError):
    """An unknown regression, or a regression file that cannot be read."""


def regression_path(root: Path, collection: str, condition: str) -> Path:
    return Path(root) / collection / f"{condition}.yaml"


def command(collection: str, condition: str) -> str:
    return f"countercase regress --verify {collection}/{condition}"


def read_regression(path: Path) -> dict[str, Any]:
    try:
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        # YAML's messages span lines (with a caret): one line on the terminal
        raise RegressionError(f"cannot read regression file {path}: "
                              f"{' '.join(str(error).split())}") from None
    missing = [k for k in ("collection", "dataset", "condition", "expected", "tolerance")
               if not isinstance(record, dict) or k not in record]
    if missing:
        raise RegressionError(f"{path}: missing {', '.join(missing)}")
    return record


def read_regressions(root: Path) -> list[dict[str, Any]]:
    return [read_regression(p) for p in sorted(Path(root).glob("*/*.yaml"))]


def for_cpu(record: dict[str, Any], cpu: str) -> dict[str, Any]:
    """What a run on CPU class ``cpu`` is checked against: that class's own record where one
    was made (``by_cpu``), else the reference."""
    own = (record.get("by_cpu") or {}).get(cpu)
    return {**record, **own} if own else record


def select(root: Path, refs: Iterable[str], opt_in: bool = False) -> list[dict[str, Any]]:
    """The regression records named by ``refs`` (``collection/condition``, or a condition of
    every collection that has it); when ``refs`` is empty, all of the default pipeline's
    conditions, or with ``opt_in`` all of the opt-in pipeline's (:attr:`SystemSpec.opt_in`)."""
    records = read_regressions(root)
    if not records:
        raise RegressionError(f"no regression files in {root} (regressions/<collection>/"
                              "<condition>.yaml)")
    refs = list(refs)
    if not refs:
        return [r for r in records
                if (r["condition"] in BY_NAME and BY_NAME[r["condition"]].opt_in) == opt_in]
    chosen = []
    for ref in refs:
        found = [r for r in records if ref in (r["condition"], f"{r['collection']}/{r['condition']}")]
        if not found:
            known = ", ".join(f"{r['collection']}/{r['condition']}" for r in records)
            raise RegressionError(f"no regression {ref!r} in {root}: use one of {known}")
        chosen += [r for r in found if r not in chosen]
    return chosen


def configuration(condition: SystemSpec, params: Params,
                  choices: Choices | None = None) -> dict[str, Any]:
    """What a condition's scores depend on beyond the data: its level and parameters, its
    step's settings as chosen, and its components' configurations."""
    choices = choices or Choices()
    config: dict[str, Any] = {"level": condition.level, "evaluate": params.evaluate.model_dump()}
    if condition.level == "chunks":
        # which system is served changes no system's scores
        config["retrieve"] = candidate_params(
            params.retrieve, params.evaluate.chunk_depth,
            **condition.updates(choices, strict=False)).model_dump(mode="json",
                                                                   exclude={"system"})
        config["index"] = params.index.model_dump()
        if params.index.precision != INT8:  # int8's calibration settings govern nothing then
            for name in INT8_SETTINGS:
                config["index"].pop(name)
    if condition.dense_dir is not None:  # another encoder: the fine-tuned one and its training
        # the embeddings name the encoder that made them
        meta = read_meta(condition.dense_dir / "precedents") or {}
        config["index"]["encoder"] = meta.get("encoder", str(condition.dense_dir))
        config["biencoder"] = params.biencoder.model_dump()
    step = choices.resolve(condition.step, strict=False)
    if step:
        config["step"] = step
    if condition.level == "ltr":  # the model its scores came from (stage train_ltr)
        model = layout.LTR / f"{step['model']}.txt"
        config["model_sha256"] = sha256_files(model) if model.is_file() else None
    named = [*step.get("fuse", {}), *step.get("replacing", {}).values()]
    if isinstance(step.get("routes"), dict):  # the systems a route may send a kind of query to
        for order in step["routes"].values():
            named += [order] if isinstance(order, str) else list(order)
        named.append(step["fallback"])
    if isinstance(step.get("of"), str):
        named.insert(0, step["of"])
    if named:
        config["components"] = {name: configuration(BY_NAME[name], params, choices)
                                for name in dict.fromkeys(named) if name in BY_NAME}
    return config


@dataclass(frozen=True)
class Drift:
    collection: str
    condition: str
    measure: str  # a measure, or "config: <setting>", or "run" when no run was scored
    expected: Any
    found: Any

    def row(self) -> list[str]:
        def show(v: Any) -> str:
            return f"{v:.4f}" if isinstance(v, float) else str(v)
        diff = (f"{self.found - self.expected:+.4f}" if isinstance(self.found, float)
                and isinstance(self.expected, float) else "")
        return [self.collection, self.condition, self.measure, show(self.expected),
                show(self.found), diff]


def verify(records: list[dict[str, Any]], scores: Scores, params: Params,
           choices: Choices | None = None, cpu: str | None = None) -> list[Drift]:
    """Every measure of ``records`` whose score in ``scores`` moved beyond the tolerance, and
    every configuration setting that differs from the recorded one; each record as CPU class
    ``cpu`` (default: this machine's) reads it (:func:`for_cpu`)."""
    cpu = cpu or cpu_class()
    drifts = []
    for r in (for_cpu(r, cpu) for r in records):
        key = (r["collection"], r["condition"])
        condition = BY_NAME.get(r["condition"])
        if condition is None:
            drifts.append(Drift(*key, "condition", r["condition"], "unknown condition"))
            continue
        drifts += [Drift(*key, f"config: {name}", old, new) for name, old, new in
                   _differences(r.get("config", {}), configuration(condition, params,
                                                                   choices))]
        found = scores.get(key)
        if found is None:
            drifts.append(Drift(*key, "run", "scored", "not run (see the log)"))
            continue
        for measure, expected in r["expected"].items():
            if abs(found[measure] - expected) > r["tolerance"]:
                drifts.append(Drift(*key, measure, expected, found[measure]))
    return drifts


def _differences(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for k in sorted(set(old) | set(new), key=str)
                for d in _differences(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [(prefix.rstrip("."), old, new)]


def update(root: Path, collection: str, dataset: str, condition: SystemSpec, params: Params,
           scores: dict[str, float], topics: str, index: dict[str, int], reason: str,
           choices: Choices | None = None,
           today: Callable[[], dt.date] = dt.date.today, cpu: str | None = None) -> Path:
    """Write (or rewrite) one regression file with ``scores`` as its expected scores; with
    ``cpu``, as that CPU class's own record beside the reference, which stays as it was."""
    if not reason.strip():
        raise RegressionError("--reason is required: say why the expected scores change")
    path = regression_path(root, collection, condition.name)
    found = read_regression(path) if path.exists() else {}
    if cpu is not None and not found:
        raise RegressionError(f"{path}: no reference record to set a CPU class's record beside")
    entry = {"config": configuration(condition, params, choices),
             "expected": {name: scores[name] for name in MEASURES}}
    change = {"date": today().isoformat(), "reason": reason.strip()}
    if cpu is not None:
        by_cpu = dict(found.get("by_cpu") or {})
        by_cpu[cpu] = {**entry, "updates": [*by_cpu.get(cpu, {}).get("updates", []), change]}
        record = {**found, "by_cpu": by_cpu}
    else:
        record = {
            "collection": collection, "dataset": dataset, "condition": condition.name,
            "description": condition.description, "command": command(collection, condition.name),
            "config": entry["config"], "topics": topics, "index": index,
            "expected": entry["expected"], "tolerance": TOLERANCE,
            "updates": [*found.get("updates", []), change],
            **({"by_cpu": found["by_cpu"]} if found.get("by_cpu") else {})}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(record, sort_keys=False, width=100), encoding="utf-8")
    return path


def render_matrix(root: Path) -> str:
    """The reproduction matrix: per collection, one row per condition, its scores, the index
    it searched and the command that checks it."""
    lines = ["# Regressions", "",
             "Expected scores of every condition, committed inputs that a run is checked "
             "against: `countercase regress --verify --all` re-runs them and fails on drift "
             "(the DVC stage `regress` checks the evaluate stage's run files). Only "
             "`countercase regress --update <collection>/<condition> --reason \"...\"` "
             "rewrites a file (with `--cpu-class`, only the record of this machine's CPU "
             "class, `by_cpu`, which a run on that class is checked against instead of the "
             "reference), and this page is generated from the files by it; do not edit "
             "by hand.", ""]
    records = read_regressions(root)
    for collection in dict.fromkeys(r["collection"] for r in records):
        rows = [r for r in records if r["collection"] == collection]
        lines += [f"## {collection}: `{rows[0]['dataset']}` ({rows[0]['topics']})", "",
                  "| condition | " + " | ".join(MEASURES) + " | index | command |",
                  "|---" * (len(MEASURES) + 3) + "|"]
        for r in rows:
            values = " | ".join(f"{r['expected'][m]:.4f}" for m in MEASURES)
            index = ", ".join(f"{v:,} {k}" for k, v in r.get("index", {}).items())
            lines.append(f"| `{r['condition']}` | {values} | {index} | `{r['command']}` |")
        lines += ["", "| condition | what | last update |", "|---|---|---|"]
        for r in rows:
            last = (r.get("updates") or [{}])[-1]
            lines.append(f"| `{r['condition']}` | {r.get('description', '')} | "
                         f"{last.get('date', '')}: {last.get('reason', '')} |")
        own = [(r, cpu, found) for r in rows for cpu, found in (r.get("by_cpu") or {}).items()]
        if own:
            lines += ["", "Recorded for another CPU class (`by_cpu`), checked on that class "
                      "instead of the reference:", "",
                      "| condition | CPU class | MAP | last update |", "|---|---|---|---|"]
            lines += [f"| `{r['condition']}` | {cpu} | {found['expected']['MAP']:.4f} | "
                      f"{found['updates'][-1]['date']}: {found['updates'][-1]['reason']} |"
                      for r, cpu, found in own]
        lines.append("")
    return "\n".join(lines)


def write_matrix(root: Path) -> None:
    (Path(root) / "README.md").write_text(render_matrix(root) + "\n", encoding="utf-8")

"""The pipeline's per-stage timing table, ``metrics/timing/summary.json``.

Every stage command is a ``countercase`` subcommand, and DVC names the stage it runs in the
environment (``DVC_STAGE``): :func:`record` adds that stage's wall time to the table when the
command succeeds. A stage DVC skips keeps the seconds of its last run (with the time it
finished), so the table always reads "what each stage cost the last time it ran" and the total
is what a full run costs. A stage that went on from an interrupted run (a resumable training
or evaluation) calls :func:`carry` with the seconds its earlier runs spent on work this run did
not redo: its row counts them (``carried_seconds``), so a resumed run does not pass for a
quick one. ``python -m countercase.report.stage_times`` prints it as a Markdown table.

The file is committed with the other timings; it is deliberately not a DVC metric of any one
stage, since every stage writes to it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
from contextlib import contextmanager
from pathlib import Path

import yaml

from countercase import layout
from countercase.config import load_params
from countercase.report import calibrate

log = logging.getLogger(__name__)

SUMMARY = layout.timing("summary")
_carried: list[float] = []  # this process's stage: seconds of the interrupted runs it went on from


def begin() -> None:
    """A command starts: nothing carried yet (the CLI runs one stage a process, tests many)."""
    _carried.clear()


def carry(seconds: float) -> None:
    """Count ``seconds`` that earlier, interrupted runs of this process's stage spent on work
    this run took up instead of redoing (recorded with the stage when it succeeds)."""
    if seconds > 0:
        _carried.append(float(seconds))


def read(path: Path = SUMMARY) -> dict:
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"stages": {}}
    return found if isinstance(found.get("stages"), dict) else {"stages": {}}


def record(stage: str, seconds: float, path: Path = SUMMARY,
           now: dt.datetime | None = None, carried: float = 0.0,
           by_cpu: Path | None = None) -> dict:
    """Write ``stage``'s seconds (this run's and ``carried``, those of the interrupted runs it
    went on from) into the table (stages in ``dvc.yaml``'s order) and, under this machine's CPU
    class, into ``by_cpu`` (:data:`countercase.report.calibrate.STAGES_BY_CPU` beside the
    default table), and return the table. Stages that run side by side (``countercase.dag.
    parallel``) take turns: the files are read and written under a lock."""
    path = Path(path)
    if by_cpu is None:
        by_cpu = calibrate.STAGES_BY_CPU if path == SUMMARY else path.with_name(
            calibrate.STAGES_BY_CPU.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        table = read(path)
        finished = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0)
        entry = {"seconds": round(float(seconds) + carried, 1), "finished": finished.isoformat()}
        if carried:
            entry["carried_seconds"] = round(carried, 1)
        table["stages"][stage] = entry
        order = _dvc_order()
        stages = dict(sorted(table["stages"].items(),
                             key=lambda item: (order.get(item[0], len(order)), item[0])))
        table = {"stages": stages,
                 "total_seconds": round(sum(s["seconds"] for s in stages.values()), 1),
                 "total_minutes": round(sum(s["seconds"] for s in stages.values()) / 60, 1)}
        _replace(path, table)
        classes = calibrate.read_json(by_cpu)
        classes.setdefault(calibrate.cpu_class(), {})[stage] = entry["seconds"]
        _replace(Path(by_cpu), classes, sort_keys=True)
    return table


@contextmanager
def _locked(path: Path):
    with open(path.with_name(f".{path.name}.lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _replace(path: Path, data: dict, sort_keys: bool = False) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=sort_keys) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def record_dvc_stage(seconds: float) -> None:
    """:func:`record` for the stage DVC is running, if any (a timing file that cannot be
    written is logged, never fails the stage)."""
    stage = os.environ.get("DVC_STAGE")
    if not stage:
        return
    try:
        record(stage.rpartition(":")[2], seconds, carried=sum(_carried))
    except (OSError, ValueError, ImportError) as error:  # the stage itself succeeded
        log.warning("stage timing not recorded in %s: %s", SUMMARY, error)


def _dvc_order(pipelines: tuple[Path, ...] = (layout.PIPELINE, layout.OPT_IN_PIPELINE)
               ) -> dict[str, int]:
    """Stage -> its place: the default pipeline's stages in order, then the opt-in ones."""
    stages: list[str] = []
    for path in pipelines:
        try:
            stages += list(yaml.safe_load(path.read_text(encoding="utf-8"))["stages"])
        except (OSError, yaml.YAMLError, KeyError, TypeError):
            continue
    return {name: i for i, name in enumerate(stages)}


def markdown(table: dict, budgets: dict[str, float] | None = None) -> str:
    """The table in Markdown; with ``budgets`` (stage -> minutes, ``params.yaml`` budgets) a
    column of them, each stage over its budget marked, and a row for every budgeted stage that
    has not run yet."""
    stages = dict(table["stages"])
    if budgets:
        stages |= {name: None for name in budgets if name not in stages}
        order = _dvc_order()
        stages = dict(sorted(stages.items(), key=lambda item: order.get(item[0], len(order))))
    # the dashes set pandoc's column widths in the paper: the last column holds the long notes
    head = "| stage | seconds | minutes |" + (" budget (min) |" if budgets else "")
    rule = "|--------------|--------:|--------:|" + ("-------:|" if budgets else "")
    rows = [head + " last run (UTC) |", rule + "----------------------------------------|"]
    for name, s in stages.items():
        budget = ""
        if budgets:
            limit = budgets.get(name)
            over = s is not None and limit is not None and s["seconds"] / 60 > limit
            budget = f" {limit:g}{' **over**' if over else ''} |" if limit else " - |"
        if s is None:
            rows.append(f"| `{name}` | - | - |{budget} not run yet |")
            continue
        rows.append(f"| `{name}` | {s['seconds']:,.0f} | {s['seconds'] / 60:.1f} |{budget} "
                    f"{s['finished']}"
                    + (f" (went on from an interrupted run: {s['carried_seconds']:,.0f} s of it "
                       "before)" if s.get("carried_seconds") else "") + " |")
    total = (f"| total | {table.get('total_seconds', 0):,.0f} | "
             f"{table.get('total_minutes', 0):.1f} |")
    rows.append(total + (f" {sum(budgets.values()):g} |" if budgets else "") + " |")
    return "\n".join(rows)


def budgets() -> dict[str, float]:
    """The default pipeline's budgets in minutes (``params.yaml`` budgets, opt-in stages left
    out)."""
    found = load_params().budgets
    return {s: m for s, m in found.minutes.items() if s not in found.opt_in}


if __name__ == "__main__":
    print(markdown(read(), budgets()))

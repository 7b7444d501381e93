"""``make repro``'s own record of what it cost: ``metrics/timing/repro.json``.

``make repro`` calls ``start`` before the set-up (with the system Python: nothing is installed
yet, so this module imports the standard library alone at its top; ``finish`` imports the
package), ``setup-done`` after it and ``finish`` after ``dvc repro`` and the README's tables. ``start`` decides whether the run is
*fresh* from what it finds, never from what anyone types: no stage output under
``data/processed/`` and an empty DVC cache. A fresh run writes ``metrics/timing/repro.json``
(``setup_s``, ``pipeline_s``, ``total_s``, ``cpu``, ``native_bf16``, ``fresh``, ``commit``); any
other run writes ``metrics/timing/repro_rerun.json`` the same way, so a quick second run does
not overwrite the measurement of the whole rebuild.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

STATE = Path("data/interim/repro_clock.json")
PROCESSED = Path("data/processed")
# DVC's cache: the machine's own folder that ``make setup`` configures (the Makefile passes it
# as DVC_CACHE), else the work tree's default
DVC_CACHE = Path(".dvc/cache")
FRESH_RECORD = Path("metrics/timing/repro.json")
RERUN_RECORD = Path("metrics/timing/repro_rerun.json")
# caches of this machine's user that a fresh clone still finds (not the project's: fresh is
# decided by the project's alone); recorded, so a set-up time says what it was given
USER_CACHES = {"pip": "~/.cache/pip", "llm_wheel": "~/.cache/countercase/wheels",
               "llm_model": "~/.cache/countercase/models"}


def _has_files(folder: Path, ignore: tuple[str, ...] = (".gitignore",)) -> bool:
    return folder.is_dir() and any(p.is_file() and p.name not in ignore
                                   for p in folder.rglob("*"))


def dvc_cache(root: Path = Path(".")) -> Path:
    found = os.environ.get("DVC_CACHE")
    return Path(found).expanduser() if found else root / DVC_CACHE


def is_fresh(root: Path = Path(".")) -> dict[str, bool]:
    """What a fresh machine looks like: no stage output, an empty DVC cache."""
    found = {"no_processed_outputs": not _has_files(root / PROCESSED),
             "empty_dvc_cache": not _has_files(dvc_cache(root))}
    return {**found, "fresh": all(found.values())}


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def start(root: Path = Path("."), now: float | None = None) -> dict:
    state = {"started": time.time() if now is None else now, **is_fresh(root),
             "user_caches": {name: _has_files(Path(folder).expanduser())
                             for name, folder in USER_CACHES.items()},
             "commit": _commit()}
    path = root / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state) + "\n", encoding="utf-8")
    return state


def _state(root: Path) -> dict:
    path = root / STATE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise SystemExit(f"error: {path} is missing or unreadable: `make repro` runs "
                         "`python src/countercase/report/repro_clock.py start` first") from None


def setup_done(root: Path = Path("."), now: float | None = None) -> dict:
    state = _state(root)
    state["setup_done"] = time.time() if now is None else now
    (root / STATE).write_text(json.dumps(state) + "\n", encoding="utf-8")
    return state


def finish(root: Path = Path("."), now: float | None = None, cpu: dict | None = None) -> Path:
    """Write the record (``cpu``: :func:`countercase.runtime.cpu.facts` unless given) and return its
    path."""
    # the package, installed by now (``start`` and ``setup-done`` run before it is)
    from countercase.runtime.cpu import facts

    state = _state(root)
    ended = time.time() if now is None else now
    if cpu is None:
        cpu = facts()
    setup = state.get("setup_done", state["started"])
    record = {"setup_s": round(setup - state["started"], 1),
              "pipeline_s": round(ended - setup, 1),
              "total_s": round(ended - state["started"], 1),
              "cpu": cpu.get("model"), "capability": cpu.get("capability"),
              "native_bf16": cpu.get("native_bf16"), "fresh": state["fresh"],
              "found_at_start": {k: state[k] for k in ("no_processed_outputs",
                                                       "empty_dvc_cache")},
              "user_caches": state.get("user_caches"),
              "dvc_cache": str(dvc_cache(root)),
              "predicted": _prediction(root),
              "commit": state.get("commit")}
    path = root / (FRESH_RECORD if state["fresh"] else RERUN_RECORD)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (root / STATE).unlink()
    return path


def _prediction(root: Path) -> dict | None:
    """The calibration's prediction made before the pipeline started
    (``countercase.report.calibrate predict``), or None where it could not run."""
    from countercase.report.calibrate import PREDICTION

    path = root / PREDICTION
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    path.unlink()
    return {"total_s": found.get("total_s"), "wall_s": found.get("wall_s"),
            "jobs": found.get("jobs"), "cpu_class": found.get("cpu_class"),
            "unpredicted": found.get("unpredicted", [])}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    steps = {"start": start, "setup-done": setup_done, "finish": finish}
    if len(args) != 1 or args[0] not in steps:
        raise SystemExit(f"usage: repro_clock.py {{{'|'.join(steps)}}}")
    found = steps[args[0]]()
    print(found if isinstance(found, Path) else json.dumps(found))


if __name__ == "__main__":
    main()

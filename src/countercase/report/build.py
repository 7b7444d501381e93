"""The one build the paper reads: which commit produced each of its inputs (issue 61 item 5).

``make repro`` and ``make repro-extended`` end with ``python -m countercase.report.build record
--pipeline P``, which writes ``metrics/build.json``: the commit the pipeline ran at, each
pipeline's run (when, on which CPU) and the SHA-256 of every file its stages wrote (the file
outs and metrics P's ``dvc.yaml`` declares). A run at another commit starts a new record; a run of the other pipeline at the same commit joins it, so
the default and the opt-in pipeline make one build. A run whose sources differ from the commit
(an edit under ``src/``, ``params.yaml``, the ``dvc.yaml`` files, ``configs/`` or ``data/gold/``
left uncommitted) is refused: its outputs would name a commit that did not produce them.

:func:`provenance` says where each input of the paper came from: the build's commit (an output
of the build with the same bytes, or a committed source equal to the commit's), ``after the
build`` (a stage rerun piecemeal or a file edited since), or ``authored`` (the paper's own text,
bibliography and history, and the committed screenshots, which no build writes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

from countercase.errors import CountercaseError
from countercase.layout import PAPER_MANIFEST
from countercase.report.repro_clock import FRESH_RECORD, RERUN_RECORD
from countercase.runtime.cpu import facts
from countercase.runtime.digests import sha256_files

RECORD = Path("metrics/build.json")
PIPELINES = {"dvc.yaml": "default", "experiments/dvc.yaml": "opt-in"}
# what a build reads and nobody may edit while it runs
SOURCES = ("src", "params.yaml", "dvc.yaml", "experiments/dvc.yaml", "configs", "data/gold")
# written by people, not by a stage: the paper's text and history, the committed screenshots
AUTHORED = ("paper/", "docs/")
AFTER = "after the build"
EARLIER = "an earlier build"


class BuildError(CountercaseError):
    """A build record that cannot be written or read."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def head(root: Path) -> str:
    found = _git(root, "rev-parse", "HEAD")
    if found.returncode:
        raise BuildError(f"{root} is not a git checkout: a build names the commit it ran at")
    return found.stdout.decode().strip()


def written_by(root: Path, pipeline: str) -> list[str]:
    """The files the pipeline's stages declare as outs and metrics (the paper's copies of
    pipeline outputs among them; folders are left to DVC), and for the default pipeline the
    timing record ``make repro`` wrote last."""
    root = Path(root).resolve()
    # what the pipeline declares, whether or not its lock has a stage's run yet; a stage's
    # paths are relative to its wdir (the opt-in pipeline's is the project's root)
    stages = (yaml.safe_load((root / pipeline).read_text(encoding="utf-8")) or {})["stages"]
    found = [(root / Path(pipeline).parent / stage.get("wdir", ".") / out).resolve()
             for stage in stages.values() for kind in ("outs", "metrics", "plots")
             for entry in stage.get(kind, [])
             for out in ([entry] if isinstance(entry, str) else list(entry))]
    if PIPELINES.get(pipeline) == "default":
        timing = [root / p for p in (FRESH_RECORD, RERUN_RECORD) if (root / p).is_file()]
        found += sorted(timing, key=lambda p: p.stat().st_mtime)[-1:]
    return sorted({p.relative_to(root).as_posix() for p in found if p.is_file()})


def edited_sources(root: Path, written: set[str]) -> list[str]:
    """The build's sources that differ from the commit (the pipeline's own outputs, such as
    the choice files under ``configs/``, left out)."""
    found = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *SOURCES)
    paths = [line[3:].strip() for line in found.stdout.decode().splitlines()]
    return sorted(p for p in paths if p and p not in written)


def record(root: Path, pipeline: str, cpu: dict | None = None, now: float | None = None) -> dict:
    """Record the run of ``pipeline`` that just ended at HEAD in :data:`RECORD`, joining the
    record of the same commit; return the record."""
    if pipeline not in PIPELINES:
        raise BuildError(f"unknown pipeline {pipeline!r}: one of {', '.join(PIPELINES)}")
    root = Path(root)
    lock = root / Path(pipeline).with_suffix(".lock")
    if not lock.is_file():
        raise BuildError(f"{lock} is missing: run the pipeline ({pipeline}) before recording it")
    declared = {other: written_by(root, other) for other in PIPELINES
                if (root / other).is_file()}
    written = {p: sha256_files(root / p) for p in declared[pipeline]}
    # what any pipeline writes is an output, not a source (the default pipeline's choice files
    # differ from the commit's when the opt-in pipeline is recorded after it)
    edited = edited_sources(root, {p for paths in declared.values() for p in paths})
    if edited:
        raise BuildError("the build's sources differ from the commit, so its outputs would "
                         f"name a commit that did not produce them: {', '.join(edited)} "
                         "(commit them and run the pipeline again)")
    commit = head(root)
    cpu = facts() if cpu is None else cpu
    found = read(root, required=False)
    if found is None or found.get("commit") != commit:
        found = {"commit": commit, "runs": {}, "outputs": {}}
    found["runs"][PIPELINES[pipeline]] = {
        "pipeline": pipeline, "finished": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now)),
        "cpu": cpu.get("model"), "capability": cpu.get("capability")}
    found["outputs"] = dict(sorted({**found["outputs"], **written}.items()))
    path = root / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return found


def read(root: Path, required: bool = True) -> dict | None:
    path = Path(root) / RECORD
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        if required:
            raise BuildError(f"{path} is missing or unreadable: `make repro` writes it") from None
        return None


def _committed(root: Path, commit: str, path: str) -> bytes | None:
    found = _git(root, "show", f"{commit}:{path}")
    return None if found.returncode else found.stdout


def provenance(paths: list[str], root: Path, found: dict | None = None) -> dict[str, str]:
    """Path -> the build's commit, :data:`AFTER`, :data:`EARLIER` (written by a pipeline the
    build has not run) or ``"authored"``, for each input."""
    root = Path(root)
    found = read(root) if found is None else found
    commit, built = found["commit"], found["outputs"]
    declared = {p for pipeline in PIPELINES if (root / pipeline).is_file()
                for p in written_by(root, pipeline)}
    said = {}
    for path in sorted(paths):
        if path == RECORD.as_posix():
            said[path] = commit
        elif path in built:
            said[path] = commit if sha256_files(root / path) == built[path] else AFTER
        elif path in declared:
            said[path] = EARLIER
        elif path.startswith(AUTHORED):
            said[path] = "authored"
        else:
            committed = _committed(root, commit, path)
            same = committed is not None and _same(committed, (root / path).read_bytes(), path)
            said[path] = commit if same else AFTER
    return said


def _same(committed: bytes, now: bytes, path: str) -> bool:
    """The same source: the same bytes, or for YAML the same values (a comment edited since
    the build changes nothing the build read)."""
    if committed == now:
        return True
    if not path.endswith((".yaml", ".yml")):
        return False
    try:
        return yaml.safe_load(committed) == yaml.safe_load(now)
    except yaml.YAMLError:
        return False


def missing_runs(found: dict) -> list[str]:
    """The pipelines the build has not run at its commit."""
    return [name for name in PIPELINES.values() if name not in found.get("runs", {})]


# what the paper reads of a build's outputs (its own outputs and the timings change on every
# render and every stage, and are not numbers it reports)
REPORTED = ("metrics/", "configs/", "paper/inputs/")


def changed_since(found: dict, root: Path) -> list[str]:
    """The build's reported outputs whose file differs from what the build wrote."""
    return [path for path, digest in found["outputs"].items()
            if path.startswith(REPORTED) and not path.startswith("metrics/timing/")
            and (not (Path(root) / path).is_file() or sha256_files(Path(root) / path) != digest)]


def check(root: Path) -> list[str]:
    """What keeps the committed paper from reading one build: pipelines not run at the build's
    commit, and inputs of the paper's manifest that did not come from it."""
    found = read(root)
    path = Path(root) / PAPER_MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise BuildError(f"{path} is missing or unreadable: `countercase paper` writes "
                         "it") from None
    said = provenance(list(manifest["inputs"]), root, found)
    problems = [f"the {name} pipeline has not run at {found['commit'][:7]}"
                for name in missing_runs(found)]
    problems += [f"{path}: {where}" for path, where in said.items()
                 if where not in (found["commit"], "authored")]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m countercase.report.build",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record", help="record the pipeline run that just ended").add_argument(
        "--pipeline", default="dvc.yaml", choices=sorted(PIPELINES))
    sub.add_parser("check", help="exit 1 unless the paper's inputs all come from one build")
    args = parser.parse_args(argv)
    try:
        if args.command == "record":
            found = record(Path("."), args.pipeline)
            print(f"{RECORD}: {found['commit'][:7]}, runs: {', '.join(sorted(found['runs']))}")
            return 0
        problems = check(Path("."))
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

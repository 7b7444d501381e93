"""``dvc repro`` with independent stages side by side: two cores kept busy.

DVC holds its repository lock for a whole ``dvc repro``, so two of them cannot run at once. This
runner does what ``dvc repro`` does, stage by stage, with up to ``--jobs`` commands running:

1. a stage is ready when every stage it depends on (DVC's own graph) has finished;
2. it runs only if ``dvc status`` calls it changed: one ``dvc status`` of every stage at the
   start, and again for a stage once an upstream stage ran, as ``dvc repro`` decides after its
   upstream stages ran (an upstream stage that rebuilt identical outputs changes nothing);
3. its outputs are removed (persistent ones kept), its command runs in its folder with
   ``DVC_STAGE`` and ``DVC_ROOT`` set as DVC sets them;
4. ``dvc commit`` records it in ``dvc.lock`` and the cache.

Every DVC call (2 and 4) takes the lock in turn, one at a time; only the commands overlap.
Ready stages start in ``dvc.yaml``'s order; a stage of :data:`ALONE` times what it runs, so it
starts only when nothing else runs, and nothing starts beside it. A stage's thread counts come from ``params.yaml``,
never from the load, so what each stage writes is what a sequential ``dvc repro`` writes
(``tests/test_parallel_repro.py`` holds that on a small project). A failing stage stops the run
once the stages already started have finished; its message names it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)
# stages that time what they run: nothing runs beside them (latency ran beside perturb once and
# measured the served path at twice its p50)
ALONE = frozenset({"latency", "explore_bench"})


def _dvc() -> list[str]:
    """DVC beside this interpreter (the project's venv), else the one on PATH."""
    beside = Path(sys.executable).with_name("dvc")
    return [str(beside) if beside.is_file() else (shutil.which("dvc") or "dvc")]


class Plan:
    """The stages of ``pipeline`` and every stage they need, in file order, with their
    upstream stages (from DVC's graph)."""

    def __init__(self, root: Path, pipeline: str = "dvc.yaml",
                 targets: list[str] | None = None) -> None:
        from dvc.repo import Repo

        self.root = Path(root).resolve()
        repo = Repo(str(self.root))
        graph = repo.index.graph
        by_name = {s.addressing: s for s in repo.index.stages}
        wanted = targets or [s.addressing for s in repo.index.stages
                             if s.relpath == pipeline and hasattr(s, "cmd") and s.cmd]
        unknown = [t for t in wanted if t not in by_name]
        if unknown:
            raise SystemExit(f"error: no stage named {', '.join(unknown)} in {self.root}")
        needed: set[str] = set()
        todo = list(wanted)
        while todo:
            name = todo.pop()
            if name not in needed:
                needed.add(name)
                todo += [s.addressing for s in graph.successors(by_name[name])]
        order = [s.addressing for s in repo.index.stages]
        self.stages = [n for n in order if n in needed and getattr(by_name[n], "cmd", None)]
        self.upstream = {n: {s.addressing for s in graph.successors(by_name[n])} & needed
                         for n in self.stages}
        self.commands = {n: by_name[n].cmd for n in self.stages}
        self.wdirs = {n: Path(by_name[n].wdir) for n in self.stages}
        self.outs = {n: [(Path(o.fs_path), bool(o.persist)) for o in by_name[n].outs]
                     for n in self.stages}
        repo.close()


class Runner:
    def __init__(self, plan: Plan, jobs: int = 2, force: bool = False) -> None:
        self.plan, self.jobs, self.force = plan, max(1, jobs), force
        self._dvc_lock = threading.Lock()
        self.ran: list[str] = []
        self.skipped: list[str] = []
        self._initially: set[str] | None = None  # what the first `dvc status` called changed

    def _dvc_call(self, *args: str) -> subprocess.CompletedProcess:
        with self._dvc_lock:
            return subprocess.run([*_dvc(), *args], cwd=self.plan.root, capture_output=True,
                                  text=True)

    def changed(self, stage: str) -> bool:
        if self.force:
            return True
        if self._initially is None:
            done = self._dvc_call("status", "--json", *self.plan.stages)
            try:
                self._initially = set(json.loads(done.stdout or "{}"))
            except ValueError:
                raise StageFailed(f"`dvc status` failed: {done.stderr.strip()}") from None
        if stage in self._initially:
            return True
        if not self.plan.upstream[stage] & set(self.ran):
            return False
        done = self._dvc_call("status", stage, "--quiet")
        return done.returncode != 0

    def _run(self, stage: str) -> None:
        for path, persist in self.plan.outs[stage]:
            if persist:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        commands = self.plan.commands[stage]
        env = {**os.environ, "DVC_STAGE": stage, "DVC_ROOT": str(self.plan.root)}
        started = time.perf_counter()
        log.info("Running stage '%s'", stage)
        for command in commands if isinstance(commands, list) else [commands]:
            done = subprocess.run(command, shell=True, cwd=self.plan.wdirs[stage], env=env)
            if done.returncode != 0:
                raise StageFailed(f"stage '{stage}' failed: `{command}` exited with "
                                  f"{done.returncode}")
        committed = self._dvc_call("commit", "--force", "--quiet", stage)
        if committed.returncode != 0:
            raise StageFailed(f"stage '{stage}' ran but `dvc commit` failed: "
                              f"{committed.stderr.strip()}")
        log.info("stage '%s' done in %.1f s", stage, time.perf_counter() - started)

    def _start_ready(self, pending: list[str], finished: set[str],
                     running: dict[Future, str], pool: ThreadPoolExecutor) -> None:
        """Start every stage whose upstream stages are done, in file order, while a job is
        free; a stage found unchanged counts as done at once, which can ready others."""
        progress = True
        while progress and len(running) < self.jobs:
            progress = False
            for stage in [s for s in pending if self.plan.upstream[s] <= finished]:
                if len(running) >= self.jobs or ALONE & set(running.values()):
                    break
                if stage in ALONE and running and self.changed(stage):
                    continue  # it starts once the stages running now have finished
                pending.remove(stage)
                progress = True
                if not self.changed(stage):
                    self.skipped.append(stage)
                    finished.add(stage)
                    log.info("Stage '%s' didn't change, skipping", stage)
                    continue
                self.ran.append(stage)
                running[pool.submit(self._run, stage)] = stage

    def run(self) -> None:
        pending = list(self.plan.stages)
        finished: set[str] = set()
        running: dict[Future, str] = {}
        failure: StageFailed | None = None
        with ThreadPoolExecutor(self.jobs) as pool:
            while pending or running:
                if failure is None:
                    self._start_ready(pending, finished, running, pool)
                if not running:
                    if pending and failure is None:
                        raise StageFailed(f"stages {pending} wait on stages that never ran")
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    stage = running.pop(future)
                    try:
                        future.result()
                        finished.add(stage)
                    except StageFailed as error:
                        failure = failure or error
        if failure is not None:
            raise failure


class StageFailed(CountercaseError, RuntimeError):
    """A stage's command or its record in DVC failed; the message names the stage."""


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="stages to bring up to date (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="stages run at once")
    parser.add_argument("-f", "--force", action="store_true", help="run every stage")
    parser.add_argument("--pipeline", default="dvc.yaml")
    args = parser.parse_args(argv)
    runner = Runner(Plan(Path.cwd(), args.pipeline, args.targets or None), args.jobs, args.force)
    try:
        runner.run()
    except StageFailed as error:
        raise SystemExit(f"error: {error}") from None
    print(f"ran {len(runner.ran)} stages, {len(runner.skipped)} unchanged")


if __name__ == "__main__":
    main()

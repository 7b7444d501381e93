"""The wall time the runner's schedule predicts, and the floor no number of jobs beats.

:func:`simulate` replays the runner (:mod:`countercase.dag.parallel`) on predicted seconds:
ready stages start in ``dvc.yaml``'s order while a job is free. Two stages side by side each
run at 1/:data:`BESIDE` of their speed alone, so two jobs gain ``2 / BESIDE`` over one at best:
nothing where BESIDE is 2 or more, as measured on the EPYC, where each stage already keeps both
cores busy. :func:`chains` gives the longest chain of stages that wait on one another: the
pipeline takes at least that long on any number of jobs.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from countercase.dag.parallel import ALONE, Plan
from countercase.report.calibrate import PREDICTION

# a stage's seconds beside another over its seconds alone, on the 2-core EPYC (issue 59,
# 2026-11-29): in a fresh build with two jobs, embed read 16-17 passages a second beside
# train_ner and train_ner took 2.3 s a step beside embed; in the next fresh build, one job at a
# time, embed read 60 a second and train_ner took 0.49 s a step (1,186 steps in 9 min 40 s). That
# is 3.6 and 4.7 times as long side by side (some test runs shared the first build's cores, so
# the factor is taken low). Each asks for both cores (params.yaml threads), so side by side they
# contend; above 2, two jobs take longer than one. (The Xeon's 1.5, embed 1,724 s beside a stage
# against 1,100 alone, was the first guess.)
BESIDE = 3.5


def chains(stages: Iterable[str], upstream: Mapping[str, set[str]],
           seconds: Mapping[str, float]) -> dict[str, float]:
    """Each stage's seconds plus the longest chain of seconds of the stages that wait on it."""
    stages = list(stages)
    downstream = {s: [t for t in stages if s in upstream[t]] for s in stages}
    found: dict[str, float] = {}

    def length(stage: str) -> float:
        if stage not in found:
            found[stage] = seconds.get(stage, 0.0) + max(
                (length(t) for t in downstream[stage]), default=0.0)
        return found[stage]

    for stage in stages:
        length(stage)
    return found


def simulate(stages: Iterable[str], upstream: Mapping[str, set[str]],
             seconds: Mapping[str, float], jobs: int = 2, alone: frozenset[str] = frozenset(),
             beside: float = BESIDE) -> float:
    """The predicted wall seconds of the runner's schedule: ready stages start in the order
    given while a job is free, a stage of ``alone`` runs with no other."""
    pending = list(stages)
    left: dict[str, float] = {}
    finished: set[str] = set()
    clock = 0.0
    while pending or left:
        for stage in [s for s in pending if upstream[s] <= finished]:
            if len(left) >= max(1, jobs) or alone & set(left):
                break
            if stage in alone and left:
                continue  # it starts once the stages running now have finished
            pending.remove(stage)
            left[stage] = seconds.get(stage, 0.0)
        if not left:
            raise ValueError(f"stages {pending} wait on stages outside the schedule")
        rate = 1.0 if len(left) == 1 else 1.0 / beside
        step = min(left.values()) / rate
        clock += step
        for stage in list(left):
            left[stage] -= step * rate
            if left[stage] <= 1e-9:
                del left[stage]
                finished.add(stage)
    return clock


def main(argv: list[str] | None = None) -> None:
    """Add the wall time of ``--jobs`` and the longest chain to the prediction that
    ``countercase.report.calibrate predict`` wrote, and print them."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--jobs", type=int, default=2, help="stages side by side (make's JOBS)")
    parser.add_argument("--prediction", type=Path, default=PREDICTION)
    args = parser.parse_args(argv)
    try:
        found = json.loads(args.prediction.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SystemExit(f"error: no stage prediction to schedule in {args.prediction} ({error}): "
                         "run `python -m countercase.report.calibrate predict` first") from None
    plan = Plan(Path.cwd())
    seconds = {s: found["stages"][s]["seconds"] for s in plan.stages if s in found["stages"]}
    wall = simulate(plan.stages, plan.upstream, seconds, args.jobs, ALONE)
    chain = max(chains(plan.stages, plan.upstream, seconds).values(), default=0.0)
    print(f"  {'wall':<16} {wall / 60:6.1f} min with --jobs {args.jobs} (the runner's schedule, "
          f"a stage beside another at 1/{BESIDE} its speed)\n"
          f"  {'longest chain':<16} {chain / 60:6.1f} min (no number of jobs beats it)")
    found.update(wall_s=round(wall, 1), jobs=args.jobs, longest_chain_s=round(chain, 1))
    args.prediction.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n",
                               encoding="utf-8")


if __name__ == "__main__":
    main()

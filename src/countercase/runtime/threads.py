"""How the numeric libraries' threads wait, so that training survives a busy machine.

On a 2-core machine shared with other jobs, a training step of ``train_ner`` took 35 s instead
of 0.47 s. OpenMP's threads (torch's and llama.cpp's libgomp) spin at every barrier while they
wait for their partner; when another process holds a core, the spinning thread burns the time
slice its partner needs to reach the barrier. ``OMP_WAIT_POLICY=PASSIVE`` makes a waiting thread
sleep instead. It changes no number: thread counts stay fixed in ``params.yaml`` and are never
derived from the load, because the count sets the order of floating-point sums and so the model.

``python -m countercase.runtime.threads`` measures a MiniLM-sized training step with each policy, on a
quiet machine and beside busy processes, and writes ``metrics/timing/threads.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

WAIT_POLICY = "PASSIVE"


def configure() -> None:
    """Set the wait policy before torch or llama.cpp load libgomp (it reads it once, at load);
    a policy the user set is kept."""
    os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)


_STEP = """
import time, torch
torch.manual_seed(0)
torch.set_num_threads({threads})
model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(384, 12, 1536,
                                    batch_first=True), 6)  # MiniLM's shape
optimiser = torch.optim.AdamW(model.parameters(), 1e-4)
batch = torch.randn(16, 128, 384)
def step():
    model(batch).sum().backward(); optimiser.step(); optimiser.zero_grad()
step(); step()
started = time.perf_counter()
for _ in range({steps}):
    step()
print((time.perf_counter() - started) / {steps})
"""


def _busy() -> None:
    while True:
        pass


# What libgomp is told: nothing (its default: spin 300,000 times, then sleep), to sleep at once,
# or to spin a short while first.
VARIANTS = {"default": {}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
            "spin_10000": {"GOMP_SPINCOUNT": "10000"}}


def seconds_per_step(variant: dict[str, str], busy: int, threads: int = 2, steps: int = 8) -> float:
    """One measurement in a fresh interpreter (libgomp reads its settings when it loads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    hogs = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(busy)]
    for hog in hogs:
        hog.start()
    try:
        out = subprocess.run([sys.executable, "-c", _STEP.format(threads=threads, steps=steps)],
                             env={**env, **variant}, check=True,
                             capture_output=True, text=True).stdout
    finally:
        for hog in hogs:
            hog.kill()
            hog.join()
    return round(float(out.split()[-1]), 3)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the step")
    parser.add_argument("--out", type=Path, default=Path("metrics/timing/threads.json"))
    args = parser.parse_args(argv)
    result = {"threads": 2, "busy_processes": args.busy, "seconds_per_step": {
        f"{name}_{load}": seconds_per_step(variant, busy) for name, variant in VARIANTS.items()
        for load, busy in (("quiet", 0), ("busy", args.busy))}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

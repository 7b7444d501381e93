"""What this CPU does with bfloat16, and why no stage depends on it.

Every stage trains and encodes in float32 (``index.precision``; DESIGN.md). bfloat16 is fast only
on a CPU with native support (AMX or AVX512-BF16, what oneDNN calls "mkldnn bf16 supported");
elsewhere PyTorch falls back to a reference GEMM: measured on an AVX2 EPYC, a ``train_ner`` step
of 16 full windows took 36.0 s in bfloat16 against 1.9 s in float32, and copying one CPU's
rounding on another (the retired ``countercase.bf16``) still ran about 3 times slower than
float32 and still flipped choices between builds.

``python -m countercase.runtime.cpu`` times a ``train_ner`` step in float32 and in PyTorch's bfloat16,
with every step's loss, and writes ``metrics/timing/cpu.json``: the evidence for the choice on the
CPU at hand. :func:`facts` describes the CPU for the timing files and ``make repro``'s record.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path

from countercase.runtime.models import MINILM, encoder_dir, offline

log = logging.getLogger(__name__)


@cache
def native_bf16() -> bool:
    """True when oneDNN runs bfloat16 products natively on this CPU."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN
        return False


def model_name() -> str:
    """The CPU's model name (standard library only)."""
    cpuinfo = Path("/proc/cpuinfo")
    try:
        lines = cpuinfo.read_text().splitlines()
    except OSError:
        lines = []
    return next((line.split(":", 1)[1].strip() for line in lines
                 if line.startswith("model name")), platform.processor() or "unknown CPU")


def cpu_class() -> str:
    """The CPU's model name and its widest vector extension: the class whose builds give the
    same bytes (the timings' key, and a regression's record per CPU)."""
    try:
        flags = next((set(line.split(":", 1)[1].split()) for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), set())
    except OSError:
        flags = set()
    isa = next((name for flag, name in (("amx_tile", "amx"), ("avx512_bf16", "avx512-bf16"),
                                       ("avx512f", "avx512"), ("avx2", "avx2"))
                if flag in flags), "baseline")
    return f"{model_name()} / {isa}"


def facts() -> dict:
    """The CPU as the numeric libraries see it."""
    import torch

    return {"model": model_name(), "torch": torch.__version__,
            "capability": torch.backends.cpu.get_cpu_capability(), "native_bf16": native_bf16()}


# A train_ner step: the packaged MiniLM with a token-classification head and its word embeddings
# frozen, a batch of 16 windows of 128 word pieces
_STEP = """
import time, torch
from transformers import AutoModelForTokenClassification
torch.manual_seed(0)
torch.set_num_threads({threads})
model = AutoModelForTokenClassification.from_pretrained({backbone!r}, num_labels=29)
model.get_input_embeddings().weight.requires_grad_(False)  # as train_ner does
optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], 1e-4)
ids = torch.randint(1000, 30000, (16, 128))
labels = torch.randint(0, 29, (16, 128))
def step():  # as ner.train._step did before it was float32 only
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled={bf16}):
        loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    optimiser.step()
    optimiser.zero_grad()
    return loss.item()
losses = [step()]
started = time.perf_counter()
losses += [step() for _ in range({steps})]
print((time.perf_counter() - started) / {steps}, *losses)
"""

# name -> bfloat16 autocast
WAYS = {"float32": False, "bfloat16": True}


def run_steps(way: str, threads: int, steps: int) -> dict:
    """A ``train_ner`` step (:data:`_STEP`) done one of the :data:`WAYS`, in a fresh
    interpreter: the seconds of the timed steps and the loss of every step (an untimed first
    one included)."""
    offline()
    code = _STEP.format(threads=threads, bf16=WAYS[way], steps=steps,
                        backbone=str(encoder_dir(MINILM)))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split("\n")[-2].split()
    return {"seconds_per_step": round(float(out[0]), 3),
            "losses": [round(float(x), 6) for x in out[1:]]}


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=_positive, default=2)
    parser.add_argument("--steps", type=_positive, default=3,
                        help="timed steps of each way")
    parser.add_argument("--out", type=Path, default=Path("metrics/timing/cpu.json"))
    args = parser.parse_args(argv)
    ways = {way: run_steps(way, args.threads, args.steps) for way in WAYS}
    result = {"cpu": facts(), "threads": args.threads,
              "seconds_per_step": {way: found["seconds_per_step"] for way, found in ways.items()},
              "losses": {way: found["losses"] for way, found in ways.items()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

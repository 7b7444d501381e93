"""What this CPU does with bfloat16, and what a training step costs in each way of doing it.

The stages ``train_ner``, ``train_biencoder``, ``embed`` and ``embed_ft`` run their matrix
products under bfloat16 autocast (``params.yaml``: ``ner.bf16``, ``biencoder.bf16``,
``index.precision``). On a CPU with native bfloat16 (AMX or AVX512-BF16, what oneDNN calls
"mkldnn bf16 supported") that is about twice as fast as float32. On a CPU without it (an AVX2
EPYC, for one), PyTorch falls back to a reference GEMM: measured on one, a ``train_ner`` step
of 16 full windows took 36.0 s in bfloat16 against 1.9 s in float32. That, more than OpenMP's
spinning (:mod:`countercase.threads`), is how a step became 74 times slower. There the stages
compute the same bfloat16 arithmetic with float32 GEMMs instead (:mod:`countercase.bf16`).

``python -m countercase.cpu`` times a ``train_ner`` step in float32, in PyTorch's bfloat16 and
in :func:`countercase.bf16.bf16_products`, with every step's loss, and writes
``metrics/timing/cpu.json``; ``countercase train-ner --first-window N`` compares the stage's
first steps with the run of record. :func:`check_bf16` says, when such a stage starts, that its
numbers come from the emulation.
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

log = logging.getLogger(__name__)


@cache
def native_bf16() -> bool:
    """True when oneDNN runs bfloat16 products natively on this CPU."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN
        return False


def facts() -> dict:
    """The CPU as the numeric libraries see it."""
    import torch

    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("model name")), model)
    return {"model": model, "torch": torch.__version__,
            "capability": torch.backends.cpu.get_cpu_capability(), "native_bf16": native_bf16()}


def check_bf16(stage: str, enabled: bool, setting: str) -> bool:
    """Say when ``stage`` is to run under bfloat16 on a CPU that only emulates it; True when
    it will be emulated."""
    emulated = enabled and not native_bf16()
    if emulated:
        log.warning(
            "%s runs under bfloat16 (%s) but this CPU (%s) has no native bfloat16: its matrix "
            "products are float32 products of bfloat16 operands rounded to bfloat16 "
            "(countercase.bf16), the same arithmetic as native bfloat16 up to the "
            "order of float32 sums. Its last digits may differ from metrics/, made on AMX; "
            "`python -m countercase.cpu` and `countercase train-ner --first-window 50` measure "
            "how far.", stage, setting, facts()["model"])
    return emulated


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
from countercase.bf16 import bf16_products
def step():  # as ner.train._step does
    with bf16_products({bf16}, emulate={emulate}):
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

# name -> (bfloat16 autocast, bf16_products' emulation)
WAYS = {"float32": (False, False), "bfloat16": (True, False),
        "bfloat16_float32_products": (True, True)}


def run_steps(way: str, threads: int, steps: int) -> dict:
    """A ``train_ner`` step (:data:`_STEP`) done one of the :data:`WAYS`, in a fresh
    interpreter: the seconds of the timed steps and the loss of every step (an untimed first
    one included)."""
    from countercase.models import MINILM, encoder_dir, offline

    offline()
    bf16, emulate = WAYS[way]
    code = _STEP.format(threads=threads, bf16=bf16, emulate=emulate, steps=steps,
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

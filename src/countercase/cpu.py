"""What this CPU does with bfloat16, and what a training step costs in each precision.

The stages ``train_ner``, ``train_biencoder``, ``embed`` and ``embed_ft`` run their matrix
products under bfloat16 autocast (``params.yaml``: ``ner.bf16``, ``biencoder.bf16``,
``index.precision``). On a CPU with native bfloat16 (AMX or AVX512-BF16, what oneDNN calls
"mkldnn bf16 supported") that is about twice as fast as float32. On a CPU without it (an AVX2
EPYC, for one), PyTorch falls back to a reference GEMM: measured on one, a ``train_ner`` step
of 16 full windows took 36.0 s in bfloat16 against 1.9 s in float32, and the real run's first
50 steps (length-bucketed batches) about 15 s against 0.96 s (0.395 s in bfloat16 on the AMX
machine that made ``metrics/``). That, more than OpenMP's spinning (:mod:`countercase.threads`),
is how a step became 74 times slower. The emulation is slow but, to the four decimals recorded,
not different: there, the first 50 steps of ``train_ner`` gave the mean loss 2.1569 that
``metrics/ner.json`` records from the AMX machine (float32 gives 2.1565).

:func:`check_bf16` says so when such a stage starts, before the hours are spent;
``python -m countercase.cpu`` measures both precisions here and writes
``metrics/timing/cpu.json``.
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
    """Warn when ``stage`` is to run under bfloat16 on a CPU that only emulates it; True when
    it will be emulated."""
    emulated = enabled and not native_bf16()
    if emulated:
        log.warning(
            "%s runs under bfloat16 (%s) but this CPU (%s) has no native bfloat16: each matrix "
            "product falls back to PyTorch's reference code, about 15 times slower than "
            "float32 (hours for a stage of minutes), though on the one such CPU measured it "
            "gave the AMX machine's numbers (see countercase.cpu). To be fast, run on a CPU "
            "with AMX or AVX512-BF16; setting %s to float32 is fast here but gives other "
            "numbers than metrics/. `python -m countercase.cpu` measures both here.",
            stage, setting, facts()["model"], setting)
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
def step():
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled={bf16}):
        loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    optimiser.step()
    optimiser.zero_grad()
step()
started = time.perf_counter()
for _ in range({steps}):
    step()
print((time.perf_counter() - started) / {steps})
"""


def seconds_per_step(bf16: bool, threads: int, steps: int) -> float:
    """A ``train_ner`` step (:data:`_STEP`), in a fresh interpreter."""
    from countercase.models import MINILM, encoder_dir, offline

    offline()
    code = _STEP.format(threads=threads, bf16=bf16, steps=steps,
                        backbone=str(encoder_dir(MINILM)))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return round(float(out.split()[-1]), 3)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=_positive, default=2)
    parser.add_argument("--steps", type=_positive, default=3,
                        help="timed steps of each precision")
    parser.add_argument("--out", type=Path, default=Path("metrics/timing/cpu.json"))
    args = parser.parse_args(argv)
    result = {"cpu": facts(), "threads": args.threads, "seconds_per_step": {
        name: seconds_per_step(bf16, args.threads, args.steps)
        for name, bf16 in (("float32", False), ("bfloat16", True))}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

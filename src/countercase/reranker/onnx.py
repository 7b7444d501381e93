"""The trained cross-encoder for inference: ONNX export, parity and speed.

- :func:`export_onnx` writes ``model.onnx`` (float32, dynamic batch and length) with the
  tokenizer next to it. No int8: dynamic quantisation scales activations per batch, so a pair's
  score would depend on the pairs beside it (issue 40: one precision, float32).
- :class:`~countercase.retrieve.rerank.OnnxCrossEncoderReranker` (retrieval's side: it serves
  the pipeline) runs it.
- :func:`parity` compares scores on real pairs (max absolute difference, Spearman's rho);
  :func:`speed` times 50 pairs (the longest validation pairs) on a fixed thread count.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from countercase.retrieve.rerank import FP32, OnnxCrossEncoderReranker

__all__ = ["FP32", "OnnxCrossEncoderReranker", "export_onnx", "parity", "speed", "spearman"]


def export_onnx(model_dir: Path, out_dir: Path, opset: int = 17) -> Path:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir),
                                                               local_files_only=True).eval()
    sample = tokenizer(["a query"], ["a passage"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    with torch.inference_mode():
        torch.onnx.export(model, tuple(sample[n] for n in names), str(out_dir / FP32),
                          input_names=names, output_names=["logits"],
                          dynamic_axes={**axes, "logits": {0: "batch"}}, opset_version=opset,
                          dynamo=False)
    tokenizer.save_pretrained(str(out_dir))
    return out_dir / FP32


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def parity(reference: Sequence[float], other: Sequence[float]) -> dict[str, float]:
    ref, oth = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    return {"max_abs_diff": round(float(np.abs(ref - oth).max()), 5),
            "mean_abs_diff": round(float(np.abs(ref - oth).mean()), 5),
            "spearman": round(spearman(ref, oth), 5), "n_pairs": int(ref.size),
            "score_std": round(float(ref.std()), 5)}


def speed(score_fn, pairs: Sequence[tuple[str, str]], repeats: int = 3) -> dict[str, float]:
    """Seconds to score ``pairs`` once (the median of ``repeats``, after one warm-up)."""
    score_fn(pairs[:4])
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        score_fn(pairs)
        times.append(time.perf_counter() - started)
    return {"seconds_median": round(float(np.median(times)), 3),
            "seconds_min": round(float(min(times)), 3), "n_pairs": len(pairs)}

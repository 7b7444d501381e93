"""The trained cross-encoder for inference: ONNX export, int8 dynamic quantisation, parity and speed.

- :func:`export_onnx` writes ``model.onnx`` (fp32, dynamic batch and length) with the tokenizer
  next to it; :func:`quantize_int8` writes ``model.int8.onnx`` (weights of the MatMuls in int8
  with a scale per output channel, activations quantised on the fly: ONNX Runtime's dynamic
  quantisation, no calibration data).
- :class:`OnnxCrossEncoderReranker` implements the :class:`~countercase.retrieve.rerank.Reranker`
  protocol on either file, truncating pairs as sentence-transformers' ``CrossEncoder`` does
  (longest first), so its scores are the PyTorch model's up to numerics.
- :func:`parity` compares scores on real pairs (max absolute difference, Spearman's rho);
  :func:`speed` times 50 pairs of 256 tokens on a fixed thread count.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

FP32 = "model.onnx"
INT8 = "model.int8.onnx"


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


def quantize_int8(onnx_dir: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # per-channel scales: Spearman to fp32 0.995 against 0.978 per tensor, at the same speed
    quantize_dynamic(str(onnx_dir / FP32), str(onnx_dir / INT8), weight_type=QuantType.QInt8,
                     per_channel=True)
    return onnx_dir / INT8


class OnnxCrossEncoderReranker:
    """A cross-encoder exported by :func:`export_onnx`, run by ONNX Runtime on the CPU."""

    def __init__(self, model_dir: str | Path, file: str = INT8, batch_size: int = 16,
                 max_length: int = 256, threads: int = 2) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        model_dir = Path(model_dir)
        if not (model_dir / file).is_file():
            raise FileNotFoundError(f"no ONNX cross-encoder at {model_dir / file} "
                                    "(stage `train_reranker`)")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_dir / file), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        self.batch_size, self.max_length = batch_size, max_length

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        for i in range(0, len(pairs), self.batch_size):
            batch = pairs[i:i + self.batch_size]
            enc = self.tokenizer([q for q, _ in batch], [p for _, p in batch], padding=True,
                                 truncation="longest_first", max_length=self.max_length,
                                 return_tensors="np")
            feed = {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}
            out.extend(self.session.run(["logits"], feed)[0][:, 0].tolist())
        return out

    def score(self, query: str, passages: Sequence[tuple[str, str]]) -> list[float]:
        return self.score_pairs([(query, text) for _, text in passages]) if passages else []


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

"""The encoder in int8 with static scales, against float32, by the int8 rule's first lines
(configs/int8_rule.yaml): the calibration method chosen on tuning-half texts alone, then speed
and batch independence on the benchmark's seeded sample of all chunks.

``python benchmarks/int8.py --out metrics/timing/int8_encoder.json`` (after stage embed's
inputs exist: the chunks and the citation collection). The quality line (the tune stage's
grids with int8 vectors) is measured by running that stage on them; this script decides nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from countercase import layout
from countercase.config import load_params
from countercase.datasets.citations import read_citations
from countercase.index import encoders
from countercase.index.run import calibration_texts
from countercase.report.calibrate import cpu_class
from countercase.runtime.models import encoder_dir

log = logging.getLogger(__name__)


def tuning_texts(chunks: Path, citations: Path, n: int, seed: int) -> tuple[list[str], list[str]]:
    """Stage embed's calibration set and the method-choice set (tuning-half chunks)."""
    tuning = set(read_citations(citations).qids("tuning"))
    table = pd.read_parquet(chunks, columns=["chunk_id", "doc_id", "text"])
    return calibration_texts(table, tuning, n, seed)


def _timed(model, texts: list[str], precision: str, batch_size: int = 32) -> tuple[np.ndarray, float]:
    encoders.embed(model, texts[:batch_size], batch_size, False, precision)  # warm-up
    started = time.perf_counter()
    vectors = encoders.embed(model, texts, batch_size, False, precision)
    return vectors, len(texts) / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=Path, default=layout.EXTRACT / "chunks.parquet")
    parser.add_argument("--citations", type=Path, default=layout.CITATIONS)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--out", type=Path, default=layout.timing("int8_encoder"))
    args = parser.parse_args(argv)
    params = load_params()
    index, seed = params.index, params.seed
    import torch

    torch.set_num_threads(2)
    calibration, choice = tuning_texts(args.chunks, args.citations, args.n, seed)
    reference = encoders.load_encoder(index.encoder, max_seq_length=index.max_seq_length)
    onnx_dir = encoders.onnx_model_dir(encoder_dir(index.encoder))
    float32 = encoders.embed(reference, choice, 32, False)
    methods = {}
    for method in encoders.CALIBRATION_METHODS:
        path = encoders.quantise_static(onnx_dir, calibration, method, index.max_seq_length)
        model = encoders.OnnxSentenceEncoder(onnx_dir, path.name, threads=2)
        model.max_seq_length = index.max_seq_length
        cosine = (model.encode(choice) * float32).sum(axis=1)
        methods[method] = {"file": path.name, "cosine_mean": round(float(cosine.mean()), 6),
                           "cosine_min": round(float(cosine.min()), 6)}
        log.info("%s: mean cosine %.5f", method, cosine.mean())
    best = max(m["cosine_mean"] for m in methods.values())
    chosen = next(name for name, m in methods.items() if m["cosine_mean"] >= best - 0.001)

    sample = pd.read_parquet(args.chunks, columns=["text"])["text"]
    rows = np.sort(np.random.default_rng(0).choice(len(sample), args.n, replace=False))
    texts = sample.iloc[rows].tolist()  # benchmarks/encoders.py's sample
    ref_vectors, ref_speed = _timed(reference, texts, "float32")
    model = encoders.OnnxSentenceEncoder(onnx_dir, methods[chosen]["file"], threads=2)
    model.max_seq_length = index.max_seq_length
    vectors, speed = _timed(model, texts, "onnx-int8")
    other = model.encode(texts, batch_size=8)
    cosine = (vectors * ref_vectors).sum(axis=1)
    result = {"cpu": cpu_class(),
              "encoder": index.encoder, "max_seq_length": index.max_seq_length, "threads": 2,
              "calibration": {"texts": args.n, "drawn_from": "citations/tuning query judgments' "
                              "chunks", "seed": seed, "methods": methods, "chosen": chosen},
              "float32_passages_per_second": round(ref_speed, 2),
              "int8_passages_per_second": round(speed, 2),
              "speedup": round(speed / ref_speed, 3),
              "cosine_to_float32_mean": round(float(cosine.mean()), 6),
              "cosine_to_float32_min": round(float(cosine.min()), 6),
              "max_abs_diff_batch_8_vs_32": float(np.abs(other - vectors).max())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

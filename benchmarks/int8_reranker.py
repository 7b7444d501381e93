"""The domain cross-encoder in int8 with static scales, against its float32 export, by the int8
rule's cross-encoder lines (configs/int8_rule.yaml), and the latency of reranking a query's top 50
(issue 58: at most 500 ms at p50) in each.

``python benchmarks/int8_reranker.py --out metrics/timing/int8_reranker.json`` after stage
train_reranker. Everything is read on the citation collection's dev third (the queries the
reranker's choice is made on) through the stage's own validation pass
(:class:`countercase.reranker.run.Validation`): calibration pairs and method-choice pairs are two
seeded, disjoint draws of its pairs; speed on its 50 first pairs (the stage's speed pairs); the
quality line is its dev MAP and its choice (:func:`countercase.reranker.choice.decide`) with the
int8 scores in place of float32's. This script decides nothing: configs/int8_choice.yaml does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import time
from pathlib import Path

import numpy as np

from countercase import layout
from countercase.config import load_params
from countercase.datasets import load
from countercase.datasets.citations import read_citations
from countercase.index import encoders
from countercase.report.calibrate import cpu_class
from countercase.reranker.choice import decide
from countercase.reranker.onnx import parity
from countercase.reranker.run import Validation
from countercase.retrieve.load import IndexPaths
from countercase.retrieve.rerank import FP32, OnnxCrossEncoderReranker
from countercase.training.splits import tuning_split

log = logging.getLogger(__name__)
TOP = 50  # the plan's reranking depth for the latency target


def _speed(model: OnnxCrossEncoderReranker, pairs: list[tuple[str, str]]) -> float:
    model.score_pairs(pairs[:16])  # warm-up
    started = time.perf_counter()
    model.score_pairs(pairs)
    return len(pairs) / (time.perf_counter() - started)


def _latency(model: OnnxCrossEncoderReranker, queries: list[tuple[str, list[str]]]) -> dict:
    """p50 and p95 milliseconds to score each query's top ``TOP`` chunks."""
    model.score_pairs([(queries[0][0], queries[0][1][0])])  # warm-up
    times = []
    for query, texts in queries:
        started = time.perf_counter()
        model.score_pairs([(query, text) for text in texts])
        times.append(1000 * (time.perf_counter() - started))
    return {"queries": len(times), "p50_ms": round(float(np.percentile(times, 50)), 1),
            "p95_ms": round(float(np.percentile(times, 95)), 1)}


def _choice(validation: Validation, scores: list[float], weights: list[float],
            select_by: str) -> dict:
    """The reranker's choice (configs/reranker_choice.yaml's rule) on ``scores``."""
    blended = {str(w): validation.measure(scores, first_stage_weight=w) for w in weights}
    best = max(blended, key=lambda w: (blended[w][select_by], -float(w)))
    found = decide({"no_rerank": validation.measure(None), "first_stage_weight": blended,
                    "best_first_stage_weight": float(best),
                    "dataset": validation.dataset.id}, select_by)
    return {"blended_MAP": blended[best]["MAP"], "weight": float(best),
            "use_rerank": found["use_rerank"], "decision": found["decision"]}


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=layout.PROCESSED / "reranker" / "onnx")
    # the int8 files are made beside a copy of the export: the stage's folder stays as it wrote it
    parser.add_argument("--work", type=Path,
                        default=Path.home() / ".cache" / "countercase" / "reranker_int8")
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--latency-queries", type=int, default=40)
    parser.add_argument("--out", type=Path, default=layout.timing("int8_reranker"))
    args = parser.parse_args(argv)
    # one folder per float32 export: an int8 file is never read for other weights
    weights = hashlib.sha256((args.model / FP32).read_bytes()).hexdigest()[:16]
    work = args.work / weights
    work.mkdir(parents=True, exist_ok=True)
    for file in args.model.iterdir():
        if file.is_file() and not (work / file.name).is_file():
            shutil.copy2(file, work / file.name)
    source, args.model = args.model, work
    params = load_params()
    p, seed = params.reranker, params.seed
    _, dev = tuning_split(read_citations(layout.CITATIONS), params.biencoder.dev_share, seed)
    dataset = load("citations/tuning", layout.CITATIONS).subset(dev, "dev")
    validation = Validation(params, dataset, IndexPaths(), params.retrieve.rerank_depth)
    pairs = validation.pairs()
    draw = np.random.default_rng(seed).permutation(len(pairs))
    calibration = [pairs[i] for i in sorted(draw[:args.n])]
    method_choice = [pairs[i] for i in sorted(draw[args.n:2 * args.n])]

    fp32 = OnnxCrossEncoderReranker(args.model, FP32, max_length=p.max_length, threads=p.threads)
    reference = fp32.score_pairs(method_choice)
    methods = {}
    for method in encoders.CALIBRATION_METHODS:
        # four batches of 16 pairs a calibration pass: the histogram methods keep every
        # activation of a pass, and 512 pairs at once did not fit in 24 GB
        path = encoders.quantise_static(args.model, calibration, method, p.max_length, 16, 4)
        model = OnnxCrossEncoderReranker(args.model, path.name, max_length=p.max_length,
                                         threads=p.threads)
        methods[method] = {"file": path.name, **parity(reference,
                                                       model.score_pairs(method_choice))}
        log.info("%s: spearman %.5f", method, methods[method]["spearman"])
    best = max(m["spearman"] for m in methods.values())
    chosen = next(name for name, m in methods.items() if m["spearman"] >= best - 0.001)
    int8 = OnnxCrossEncoderReranker(args.model, methods[chosen]["file"], max_length=p.max_length,
                                    threads=p.threads)
    one = OnnxCrossEncoderReranker(args.model, methods[chosen]["file"], batch_size=1,
                                   max_length=p.max_length, threads=p.threads)

    speed_pairs = pairs[:50]  # the train_reranker stage's speed pairs
    fp32_speed, int8_speed = _speed(fp32, speed_pairs), _speed(int8, speed_pairs)
    batch_diff = float(np.abs(np.array(int8.score_pairs(speed_pairs))
                              - np.array(one.score_pairs(speed_pairs))).max())
    quality = {}
    for name, model in (("float32", fp32), ("int8", int8)):
        scores = model.score_pairs(pairs)
        quality[name] = {"served_MAP": validation.measure(scores)["MAP"],
                         **_choice(validation, scores, p.first_stage_weights, p.select_by)}
    tops = [(dataset.queries[q], [text for _, text in validation.candidates[q][:TOP]])
            for q in validation.qids[:args.latency_queries]]
    result = {
        "cpu": cpu_class(), "model": str(source), "max_length": p.max_length,
        "threads": p.threads, "dataset": dataset.id,
        "calibration": {"pairs": args.n, "drawn_from": "the dev third's validation pairs",
                        "seed": seed, "methods": methods, "chosen": chosen},
        "speed": {"float32_pairs_per_second": round(fp32_speed, 2),
                  "int8_pairs_per_second": round(int8_speed, 2),
                  "speedup": round(int8_speed / fp32_speed, 3)},
        "max_abs_diff_batch_1_vs_16": batch_diff,
        "quality": quality,
        "dev_MAP_blended_diff": round(quality["int8"]["blended_MAP"]
                                      - quality["float32"]["blended_MAP"], 4),
        f"latency_top{TOP}": {"float32": _latency(fp32, tops), "int8": _latency(int8, tops),
                              "pairs_per_query": TOP, "mean_candidates": round(float(np.mean(
                                  [len(t) for _, t in tops])), 1)}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

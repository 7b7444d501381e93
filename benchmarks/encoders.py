"""Each encoder precision side by side on real chunks: passages a second, the cosine of each
vector to the PyTorch float32 one (what the ranking rests on), and how far a vector moves when
the same texts are embedded in batches of another size (a vector must not depend on the texts
that share its batch: a query is embedded alone, passages 32 at a time).

``python benchmarks/encoders.py --chunks data/processed/extract/chunks.parquet
--out metrics/timing/encoder.json`` embeds the same seeded sample of chunks with every precision
of :data:`countercase.index.encoders.PRECISIONS`, on the same thread count, after a warm-up
batch. ``--parity`` also embeds the statutes (Task 2's 197 documents, small enough to embed in
every precision) and scores the dense conditions of AILA Task 2 with each, beside the stored
precedents' embeddings that the statute bridge reads: MAP per precision.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from countercase import layout
from countercase.index import encoders
from countercase.runtime.models import MINILM

log = logging.getLogger(__name__)


def sample_texts(chunks: Path, n: int, seed: int = 0) -> list[str]:
    texts = pd.read_parquet(chunks, columns=["text"])["text"]
    rows = np.sort(np.random.default_rng(seed).choice(len(texts), min(n, len(texts)),
                                                      replace=False))
    return texts.iloc[rows].tolist()


def compare(texts: list[str], encoder: str = MINILM, batch_size: int = 32, threads: int = 2,
            precisions: tuple[str, ...] = tuple(p for p in encoders.PRECISIONS
                                                if p != encoders.INT8)) -> dict[str, dict]:
    """Speed and cosine to float32 of each precision on ``texts``."""
    import torch

    torch.set_num_threads(threads)
    vectors, found = {}, {}
    for precision in ("float32", *[p for p in precisions if p != "float32"]):
        model = encoders.load_encoder(encoder, precision=precision, threads=threads)
        encoders.embed(model, texts[:batch_size], batch_size, False, precision)  # warm-up
        started = time.perf_counter()
        vectors[precision] = encoders.embed(model, texts, batch_size, False, precision)
        seconds = time.perf_counter() - started
        cosine = (vectors[precision] * vectors["float32"]).sum(axis=1)
        # the same texts in batches of another size: a vector should not depend on its batch
        other = encoders.embed(model, texts, max(1, batch_size // 4), False, precision)
        found[precision] = {"passages_per_second": round(len(texts) / seconds, 2),
                            "cosine_to_float32_mean": round(float(cosine.mean()), 6),
                            "cosine_to_float32_min": round(float(cosine.min()), 6),
                            "max_abs_diff_other_batch_size": float(
                                np.abs(other - vectors[precision]).max())}
        log.info("%s: %s", precision, found[precision])
    for precision, entry in found.items():
        entry["speedup_over_float32"] = round(
            entry["passages_per_second"] / found["float32"]["passages_per_second"], 2)
    return found


def statute_parity(precisions: tuple[str, ...] = tuple(p for p in encoders.PRECISIONS
                                                      if p != encoders.INT8),
                   conditions: tuple[str, ...] = ("dense", "hybrid_rrf")) -> dict[str, dict]:
    """MAP of ``conditions`` on AILA Task 2 with the statutes embedded in each precision."""
    from countercase.config import load_params
    from countercase.datasets import load
    from countercase.retrieve.registry import BY_NAME
    from countercase.evaluate.run import evaluate_dataset
    from countercase.index.dense import build_embeddings
    from countercase.retrieve.load import IndexPaths

    params = load_params()
    table = pd.read_parquet(layout.STATUTE_CHUNKS, columns=["chunk_id", "text"])
    dataset = load("aila2019/task2/test", layout.AILA)
    found = {}
    with tempfile.TemporaryDirectory(prefix="encoder-parity-") as tmp:
        for precision in precisions:
            dense = Path(tmp) / precision
            build_embeddings(table["chunk_id"].tolist(), table["text"].tolist(),
                             params.index.encoder, dense / "statutes", show_progress=False,
                             precision=precision)
            (dense / "precedents").symlink_to((layout.DENSE / "precedents").resolve())
            result = evaluate_dataset(dataset, [BY_NAME[c] for c in conditions],
                                      IndexPaths(dense_dir=dense), params.retrieve,
                                      params.evaluate, None, set())
            found[precision] = {c: round(s["MAP"], 4) for c, s in result["scores"].items()}
            log.info("%s: %s", precision, found[precision])
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=Path, default=Path("data/processed/extract/chunks.parquet"))
    parser.add_argument("--out", type=Path, default=Path("metrics/timing/encoder.json"))
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parity", action="store_true",
                        help="Also score AILA Task 2's dense conditions with each precision.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    texts = sample_texts(args.chunks, args.n)
    result = {"encoder": MINILM, "n_chunks": len(texts), "threads": args.threads,
              "batch_size": 32, "precisions": compare(texts, threads=args.threads)}
    if args.parity:
        result["task2_map"] = statute_parity()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Reranking: a cross-encoder scores (query, passage) pairs; a cache makes repeated queries free.

- :class:`Reranker` is the protocol: ``score(query, [(chunk_id, text)]) -> [float]``, one score
  per passage, higher is better.
- :class:`CrossEncoderReranker` runs a sentence-transformers ``CrossEncoder`` loaded from a LOCAL
  folder only (no registry reachable here carries a cross-encoder, so one has to be trained here,
  e.g. from the packaged all-MiniLM-L6-v2, which has the ms-marco-MiniLM-L-6 architecture).
  Scores are the raw logits (no sigmoid): the order is the same, and logits do not saturate into
  float32 ties.
- :class:`OnnxCrossEncoderReranker` runs the domain reranker's ONNX export (stage
  ``train_reranker``), float32 (no int8: ONNX Runtime's dynamic quantisation scales each
  batch's activations by that batch, so a pair's score would depend on its batch).
- :class:`CachedReranker` wraps any reranker with a cache keyed by (SHA-1 of the query text,
  chunk id), so a query asked again, or a counterfactual variant sharing candidates with an
  earlier identical query text, costs no model call for the pairs already scored. The key holds
  the chunk id, not its text: one cache serves one model and one chunk set.
- :func:`rerank` orders candidates by those scores; :func:`blend` first mixes them with the
  first-stage order (score interpolation, as in monoBERT-on-BM25 runs), so that a reranker
  trained on another signal than the test's relevance can only nudge the first stage's order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from countercase.errors import CountercaseError
from countercase.runtime.device import resolve
from countercase.runtime.models import MINILM, encoder_dir

Passage = tuple[str, str]  # (chunk_id, text)
FP32 = "model.onnx"  # the train_reranker stage's ONNX export
MAX_POSITIONS = 512  # a MiniLM cross-encoder's position embeddings


@runtime_checkable
class Reranker(Protocol):
    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """One relevance score per passage, in the passages' order; higher is better."""
        ...


def query_key(query: str) -> str:
    return hashlib.sha1(query.encode("utf-8")).hexdigest()


@dataclass
class CacheStats:
    model_calls: int = 0  # calls of the inner reranker's score()
    pairs_scored: int = 0  # passages sent to the inner reranker
    cache_hits: int = 0  # passages answered from the cache

    def as_dict(self) -> dict[str, int]:
        return {"model_calls": self.model_calls, "pairs_scored": self.pairs_scored,
                "cache_hits": self.cache_hits}


class CachedReranker:
    """A :class:`Reranker` that asks ``inner`` only for (query, chunk id) pairs not seen yet.

    All misses of one ``score`` call go to ``inner`` in one call (so it can batch them); a chunk
    id given twice in one call is scored once.
    """

    def __init__(self, inner: Reranker) -> None:
        self.inner = inner
        self.stats = CacheStats()
        self._cache: dict[tuple[str, str], float] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        self._cache.clear()

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        key = query_key(query)
        misses: dict[str, str] = {}
        for chunk_id, text in passages:
            if (key, chunk_id) not in self._cache and chunk_id not in misses:
                misses[chunk_id] = text
        self.stats.cache_hits += len(passages) - len(misses)
        if misses:
            pairs = list(misses.items())
            scores = list(self.inner.score(query, pairs))
            if len(scores) != len(pairs):
                raise ValueError(f"the inner reranker gave {len(scores)} scores "
                                 f"for {len(pairs)} passages")
            self.stats.model_calls += 1
            self.stats.pairs_scored += len(pairs)
            for (chunk_id, _), value in zip(pairs, scores):
                self._cache[(key, chunk_id)] = float(value)
        return [self._cache[(key, chunk_id)] for chunk_id, _ in passages]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` read from a local folder, on ``device``
    (:func:`countercase.runtime.device.resolve`: a GPU where torch sees one, else the CPU).

    Pairs longer than ``max_length`` word pieces (query and passage together) are truncated by
    the tokenizer (the longer side first, i.e. usually the passage); ``None``: the length the
    model was trained at (:func:`trained_length`).
    """

    def __init__(self, model_dir: str | Path, batch_size: int = 16, max_length: int | None = None,
                 device: str = "auto") -> None:
        model_dir = Path(model_dir)
        if not (model_dir / "config.json").is_file():
            # A missing folder must fail here: a bare name would be looked up on a model hub.
            raise FileNotFoundError(f"no cross-encoder in {model_dir} (config.json missing)")
        max_length = max_length or trained_length(model_dir)
        if batch_size < 1 or max_length < 8:
            raise ValueError(f"batch_size >= 1 and max_length >= 8 needed, "
                             f"got {batch_size}, {max_length}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder

        self.model_dir = model_dir
        self.batch_size = batch_size
        self.max_length = max_length
        self.model = CrossEncoder(str(model_dir), device=resolve(device), max_length=max_length,
                                  local_files_only=True)
        self.model.eval()

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        if not passages:
            return []
        import torch

        pairs = [(query, text) for _, text in passages]
        logits = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False,
                                    activation_fn=torch.nn.Identity(), convert_to_numpy=True)
        return [float(x) for x in logits.reshape(len(pairs), -1)[:, 0]]


class OnnxCrossEncoderReranker:
    """A cross-encoder exported to ONNX (:func:`countercase.reranker.onnx.export_onnx`), run by
    ONNX Runtime on the CPU. Pairs are truncated as sentence-transformers' ``CrossEncoder`` does
    (longest first), so its scores are the PyTorch model's up to numerics; ``max_length``
    ``None``: the length the model was trained at (:func:`trained_length`)."""

    def __init__(self, model_dir: str | Path, file: str = FP32, batch_size: int = 16,
                 max_length: int | None = None, threads: int = 2) -> None:
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
        self.batch_size = batch_size
        self.max_length = max_length or trained_length(model_dir)

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


class RerankerModelError(CountercaseError, ValueError):
    """A reranker model folder is there but cannot be read."""


def trained_length(model_dir: str | Path, default: int = 256) -> int:
    """Word pieces of a (query, passage) pair the model in ``model_dir`` was trained at: its
    tokenizer's ``model_max_length`` (stage ``train_reranker`` saves it so), capped at the
    512 positions of a MiniLM; ``default`` without a tokenizer config."""
    config = Path(model_dir) / "tokenizer_config.json"
    if not config.is_file():
        return default
    try:
        length = json.loads(config.read_text()).get("model_max_length", default)
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as error:
        raise RerankerModelError(
            f"{config}: not a tokenizer config ({error}); run `countercase train-reranker` "
            "again or restore the model folder") from None
    return int(min(length, MAX_POSITIONS)) if isinstance(length, (int, float)) else default


def untrained_minilm_cross_encoder(out_dir: str | Path, seed: int = 0) -> Path:
    """The packaged all-MiniLM-L6-v2 with a fresh one-logit head (fixed seed), saved to
    ``out_dir``: the domain reranker's architecture before training. Its scores mean nothing;
    it serves tests of the reranking mechanics and measurements of the reranker's cost."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(seed)
    model = CrossEncoder(str(encoder_dir(MINILM)), num_labels=1, device="cpu")
    # The default head init (std 0.02) gives logits within about +-0.05; a unit-scale head
    # spreads them so that differences between passages are far above float noise.
    (head,) = [m for name, m in model.named_modules() if name.endswith("classifier")]
    with torch.no_grad():
        head.weight.normal_(0.0, 1.0)
    model.save_pretrained(str(out_dir))
    return Path(out_dir)


def load_reranker(model: str | Path, backend: str = "onnx-fp32", threads: int = 2) -> "Reranker":
    """The domain reranker of stage ``train_reranker``, cached: ``onnx-fp32`` (``model`` is its
    ONNX folder) or ``torch`` (the PyTorch checkpoint in ``model/../model``)."""
    model = Path(model)
    if backend == "torch":
        return CachedReranker(CrossEncoderReranker(model.parent / "model"))
    if backend != "onnx-fp32":
        raise ValueError(f"unknown reranker backend {backend!r}: onnx-fp32 or torch")
    return CachedReranker(OnnxCrossEncoderReranker(model, FP32, threads=threads))


def _standardised(values: Sequence[float]) -> list[float]:
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return [(v - mean) / std if std > 0 else 0.0 for v in values]


def blend(scores: Sequence[float], first_stage_weight: float) -> list[float]:
    """Reranker scores of candidates in first-stage order, mixed with that order:
    ``w * z(-log rank) + (1 - w) * z(score)``, both standardised over the candidates (the
    first stage's own scores are not comparable across its RRF and MMR variants; its ranks are).
    ``w`` 0 keeps the reranker's scores as they are; 1 keeps the first-stage order."""
    if not 0.0 <= first_stage_weight <= 1.0:
        raise ValueError(f"first_stage_weight must be in [0, 1], got {first_stage_weight}")
    values = [float(s) for s in scores]
    if first_stage_weight == 0.0 or not values:
        return values
    prior = _standardised([-math.log(rank) for rank in range(1, len(values) + 1)])
    return [first_stage_weight * p + (1.0 - first_stage_weight) * z
            for p, z in zip(prior, _standardised(values))]


def rerank(candidates: Sequence[Any], scores: Sequence[float]) -> list[tuple[str, float]]:
    """``[(id, score)]`` by score descending; equal scores keep the candidates' order.

    ``candidates`` are ids, or tuples whose first item is the id (``(id, fused score)``,
    ``(chunk_id, text)``).
    """
    if len(candidates) != len(scores):
        raise ValueError(f"{len(candidates)} candidates but {len(scores)} scores")
    ids = [c if isinstance(c, str) else c[0] for c in candidates]
    values = [float(s) for s in scores]
    if any(math.isnan(v) for v in values):
        raise ValueError("NaN rerank score")
    order = sorted(range(len(ids)), key=lambda i: (-values[i], i))
    return [(ids[i], values[i]) for i in order]

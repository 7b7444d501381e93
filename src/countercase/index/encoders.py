"""Sentence encoders for the dense index: loading (from the packaged weights that
:mod:`countercase.models` locates) and embedding.

Nothing here imports torch or sentence-transformers at import time; ``HF_HUB_OFFLINE=1`` is set
before they are (:func:`countercase.models.offline`), so a name that is neither packaged nor a
folder fails instead of downloading.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from countercase.models import encoder_dir, offline

log = logging.getLogger(__name__)
offline()  # before transformers is imported anywhere


def load_encoder(name: str, cache_dir: Path | None = None):
    """A CPU ``SentenceTransformer`` for a packaged encoder name or a local model folder."""
    directory = encoder_dir(name, cache_dir)
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(directory), device="cpu", local_files_only=True)


def embedding_dim(encoder) -> int | None:
    """The output dimension of a SentenceTransformer (renamed in sentence-transformers 6)."""
    getter = getattr(encoder, "get_embedding_dimension", None) or getattr(
        encoder, "get_sentence_embedding_dimension")
    return getter()


PRECISIONS = ("float32", "bfloat16")


def embed(encoder, texts: Sequence[str], batch_size: int = 32,
          show_progress: bool = True, precision: str = "float32") -> np.ndarray:
    """Embeddings of ``texts`` as a C-contiguous float32 array of L2-normalised rows.

    Input longer than the encoder's ``max_seq_length`` is truncated by the encoder.
    ``precision="bfloat16"`` runs the matrix products under CPU autocast: measured here on
    384 corpus chunks, 2.7 times the float32 speed with a cosine to the float32 vector of at
    least 0.9999 (PyTorch's dynamic int8 was 2.2 times faster but only 0.93 on average).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use one of {PRECISIONS}")
    texts = list(texts)
    if not texts:
        dim = embedding_dim(encoder)
        return np.zeros((0, dim or 0), dtype=np.float32)
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
        vectors = encoder.encode(texts, batch_size=batch_size, show_progress_bar=show_progress,
                                 convert_to_numpy=True, normalize_embeddings=True)
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("the encoder returned a zero vector")
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)

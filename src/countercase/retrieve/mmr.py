"""Maximal marginal relevance over a fused list, with the stored embeddings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mmr(candidates: Sequence[tuple[str, float]], vectors: np.ndarray, lambda_: float = 0.6,
        k: int | None = None) -> list[tuple[str, float]]:
    """Greedy MMR: argmax of lambda * rel - (1 - lambda) * max cosine to the selected ones.

    ``vectors`` are L2-normalised rows aligned with ``candidates``. Relevance is min-max
    normalised over the candidates first: RRF scores live near 1/60 while cosines span [-1, 1],
    so raw RRF would let the diversity term swamp relevance for any lambda below 1.
    Ties go to the earlier candidate.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"MMR lambda must be in [0, 1], got {lambda_}")
    n = len(candidates)
    if n == 0:
        return []
    k = n if k is None else min(k, n)
    relevance = np.array([score for _, score in candidates], dtype=np.float64)
    spread = relevance.max() - relevance.min()
    relevance = (relevance - relevance.min()) / spread if spread > 0 else np.ones(n)
    similarity = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    selected: list[int] = []
    max_sim = np.full(n, -np.inf)
    chosen = np.zeros(n, dtype=bool)
    result = []
    for _ in range(k):
        redundancy = np.where(np.isfinite(max_sim), max_sim, 0.0)
        objective = lambda_ * relevance - (1 - lambda_) * redundancy
        objective[chosen] = -np.inf
        best = int(np.argmax(objective))  # first maximum: ties go to the earlier candidate
        chosen[best] = True
        selected.append(best)
        max_sim = np.maximum(max_sim, similarity[best])
        result.append((candidates[best][0], float(objective[best])))
    return result

"""Maximal marginal relevance (Carbonell and Goldstein, SIGIR 1998) over a fused candidate list."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Objectives equal up to this many decimals are ties (broken by candidate order).
_TIE_DECIMALS = 12


def normalise_relevance(scores: Sequence[float]) -> np.ndarray:
    """Min-max normalise to [0, 1]; all-equal scores all become 1."""
    relevance = np.asarray(scores, dtype=np.float64)
    if relevance.size == 0:
        return relevance
    low, high = relevance.min(), relevance.max()
    if high - low <= 0:
        return np.ones_like(relevance)
    return (relevance - low) / (high - low)


def mmr(candidates: Sequence[tuple[str, float]], vectors: np.ndarray, lambda_: float = 0.6,
        k: int | None = None) -> list[tuple[str, float]]:
    """Greedy MMR: repeatedly take ``argmax lambda * rel'(d) - (1 - lambda) * max_s cos(d, s)``.

    ``candidates`` are ``(id, relevance)``; ``vectors`` are their L2-normalised embeddings, row i
    for candidate i, so ``cos`` is a dot product; ``s`` runs over the already selected ones (the
    diversity term is 0 for the first pick). ``rel'`` is the relevance min-max normalised over
    the candidates: the relevance is typically an RRF score, about 1/60 or less and spread over
    a few thousandths, while cosines span [-1, 1]; raw, the diversity term would swamp relevance
    for every lambda below 1, and lambda would mean something different for each score scale.

    Returns up to ``k`` (default all) ``(id, objective at selection)``, in selection order.
    ``lambda_ = 1`` gives relevance order. Ties go to the earlier candidate.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"MMR lambda must be in [0, 1], got {lambda_}")
    n = len(candidates)
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(f"{n} candidates but vectors of shape {vectors.shape}")
    if k is not None and k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    ids = [doc_id for doc_id, _ in candidates]
    if len(set(ids)) != n:
        raise ValueError("candidate ids must be unique")
    k = n if k is None else min(k, n)
    if k == 0:
        return []
    relevance = normalise_relevance([score for _, score in candidates])
    if not np.all(np.isfinite(relevance)):
        raise ValueError("candidate relevance scores must be finite")
    similarity = vectors @ vectors.T
    redundancy = np.zeros(n)  # max cosine to the selected ones; nothing selected yet
    chosen = np.zeros(n, dtype=bool)
    result: list[tuple[str, float]] = []
    for step in range(k):
        objective = lambda_ * relevance - (1.0 - lambda_) * redundancy
        ranked = np.where(chosen, -np.inf, np.round(objective, _TIE_DECIMALS))
        best = int(np.argmax(ranked))  # the first maximum: ties go to the earlier candidate
        chosen[best] = True
        result.append((ids[best], float(objective[best])))
        redundancy = similarity[best] if step == 0 else np.maximum(redundancy, similarity[best])
    return result

"""Reciprocal rank fusion: rank positions, not incommensurable scores, are combined."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[str]], k: int = 60,
                           weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """score(d) = sum over lists of weight / (k + rank of d), rank 1-based.

    Ties: higher score, then the better (smaller) rank in any list, then the id.
    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
            best_rank[doc_id] = min(best_rank.get(doc_id, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best_rank[item[0]], item[0]))

"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009).

Rank positions, not scores, are combined: BM25 scores and cosines are on incommensurable scales.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# Scores equal up to this many decimals are ties. Sums of the same terms in another order can
# differ in the last bit; distinct RRF scores of lists up to 1,000 deep differ by > 1e-7.
_TIE_DECIMALS = 12


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[str]], k: int = 60,
                           weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse ranked id lists: ``score(d) = sum over lists L of weight_L / (k + rank_L(d))``.

    ``rankings`` maps a list name (``"bm25"``, ``"dense"``) to ids, best first; ranks are
    1-based and a list that lacks ``d`` adds nothing. An id repeated within one list counts once,
    at its best rank. ``weights`` maps every list name to a weight >= 0 (default: all 1).
    Order: score descending, then the best (smallest) rank ``d`` has in any list, then the id.
    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    if weights is not None:
        if set(weights) != set(rankings):
            raise ValueError(f"weights name the lists {sorted(weights)}, "
                             f"the rankings are {sorted(rankings)}")
        if any(not math.isfinite(w) or w < 0 for w in weights.values()):
            raise ValueError(f"RRF weights must be finite and >= 0, got {dict(weights)}")
    terms: dict[str, list[float]] = {}
    best_rank: dict[str, int] = {}
    for name, ranking in rankings.items():
        if isinstance(ranking, str):
            raise ValueError(f"ranking {name!r} is a string, not a list of ids")
        weight = 1.0 if weights is None else float(weights[name])
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            terms.setdefault(doc_id, []).append(weight / (k + rank))
            best_rank[doc_id] = min(best_rank.get(doc_id, rank), rank)
    # fsum: the correctly rounded sum, so equal terms in any order give identical scores.
    scores = {doc_id: math.fsum(parts) for doc_id, parts in terms.items()}
    return sorted(scores.items(),
                  key=lambda item: (-round(item[1], _TIE_DECIMALS), best_rank[item[0]], item[0]))


def fuse_with_facts(text_ids: Sequence[str], fact_ids: Sequence[str], weight: float,
                    k: int = 60) -> list[tuple[str, float]]:
    """Judgments of the text retrievers fused with the fact channel's (weight 1 and ``weight``)."""
    return reciprocal_rank_fusion({"text": list(text_ids), "facts": list(fact_ids)}, k=k,
                                  weights={"text": 1.0, "facts": weight})

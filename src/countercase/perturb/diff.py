"""How a ranking changed between a parent node and its child (the plan's section 7 measures).

With K the depth of the rankings compared, a case's rank is its 1-based position, or K + 1 when
it is absent; its displacement is ``|r_parent - r_child|``. Dropped: in the parent's top K, not
in the child's; new: the reverse; stable: in both with a displacement under ``stable_below``.
Rank-biased overlap (Webber et al. 2010: ``rbo``, extrapolated beyond the depth seen, their
equation 32, so that two identical lists score 1; ``rbo_truncated``, the sum
``(1-p) * sum p^(d-1) A_d`` to the depth seen, a lower bound) and Kendall's tau over the union,
absent cases at K + 1, sit beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from scipy import stats


@dataclass(frozen=True)
class RankDiff:
    dropped: list[str]
    new: list[str]
    stable: list[str]
    displacement: dict[str, int]  # every case of either top K
    mean_displacement: float
    rbo: float  # extrapolated
    rbo_truncated: float
    kendall_tau: float | None  # None when either ranking is constant over the union

    def to_dict(self) -> dict:
        return asdict(self)


def rank_biased_overlap(a: Sequence[str], b: Sequence[str], p: float = 0.9,
                        extrapolated: bool = True) -> float:
    """RBO of two rankings without ties (Webber et al. 2010): extrapolated from the depth seen
    (equation 32, lists of uneven length), or truncated there (``extrapolated`` False)."""
    long, short = (a, b) if len(a) >= len(b) else (b, a)
    depth, s = len(long), len(short)
    if depth == 0:
        return 1.0
    seen_a, seen_b, overlap, seen, unseen = set(), set(), 0, 0.0, 0.0
    at_s = 0  # the overlap at the shorter list's depth
    for d in range(1, depth + 1):
        x = long[d - 1]
        y = short[d - 1] if d <= s else None
        overlap += x in seen_b
        seen_a.add(x)
        if y is not None:
            overlap += y in seen_a  # x is in seen_a already: x == y counts once
            seen_b.add(y)
        if d == s:
            at_s = overlap
        seen += p ** d * overlap / d
        if d > s and s:  # the agreement the shorter list is assumed to keep past its end
            unseen += p ** d * at_s * (d - s) / (s * d)
    if not extrapolated:
        return (1 - p) / p * seen
    if s == 0:
        return 0.0
    return (1 - p) / p * (seen + unseen) + ((overlap - at_s) / depth + at_s / s) * p ** depth


def diff_rankings(parent: Sequence[str], child: Sequence[str], k: int | None = None,
                  stable_below: int = 3, rbo_p: float = 0.9) -> RankDiff:
    k = k or max(len(parent), len(child))
    parent, child = list(parent)[:k], list(child)[:k]
    rank_p = {case: i + 1 for i, case in enumerate(parent)}
    rank_c = {case: i + 1 for i, case in enumerate(child)}
    union = list(dict.fromkeys(parent + child))
    displacement = {case: abs(rank_p.get(case, k + 1) - rank_c.get(case, k + 1)) for case in union}
    tau = None
    if len(union) > 1:
        x = [rank_p.get(case, k + 1) for case in union]
        y = [rank_c.get(case, k + 1) for case in union]
        if len(set(x)) > 1 and len(set(y)) > 1:
            tau = round(float(stats.kendalltau(x, y).statistic), 6)
    return RankDiff(
        dropped=[c for c in parent if c not in rank_c],
        new=[c for c in child if c not in rank_p],
        stable=[c for c in parent if c in rank_c and displacement[c] < stable_below],
        displacement=displacement,
        mean_displacement=round(sum(displacement.values()) / len(union), 6) if union else 0.0,
        rbo=round(rank_biased_overlap(parent, child, rbo_p), 6),
        rbo_truncated=round(rank_biased_overlap(parent, child, rbo_p, extrapolated=False), 6),
        kendall_tau=tau)

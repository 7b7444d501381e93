"""Directional sensitivity (``docs/preregistration/validity_v3.md``, section 3): after an edit,
does a ranker move the edit's citation-grounded *appear* set up and its *drop* set down, more
than after the matched placebo edit of the same case?

A precedent's *move* from the root to a node is ``log rank_root - log rank_node`` for a ranked
ranker (absent: ``depth + 1``; up is positive) and ``score_node - score_root`` for a scored one.
An edit's *direction* under a ranker is the mean move of its appear set minus the mean move of
its drop set (a set that is empty adds nothing). The pair's *excess* is the operative edit's
direction minus its placebo's, both against the operative edit's targets; a case's excess is
the mean over its pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from countercase.confirm.analysis import bootstrap


def moves(root: Mapping[str, float], node: Mapping[str, float], docs: Sequence[str],
          absent: float | None) -> list[float]:
    """Each of ``docs``' move; ``absent``: the rank of a judgment a ranking lacks (None: a
    scored ranker, which scores every one of them)."""
    if absent is None:
        return [node[d] - root[d] for d in docs if d in root and d in node]
    return [math.log(root.get(d, absent)) - math.log(node.get(d, absent)) for d in docs]


def direction(root: Mapping[str, float], node: Mapping[str, float], appear: Sequence[str],
              drop: Sequence[str], absent: float | None) -> float | None:
    up, down = moves(root, node, appear, absent), moves(root, node, drop, absent)
    if not up and not down:
        return None
    return (float(np.mean(up)) if up else 0.0) - (float(np.mean(down)) if down else 0.0)


def per_case(rows: pd.DataFrame) -> pd.Series:
    kept = rows.dropna(subset=["dir_operative", "dir_placebo"])
    return (kept["dir_operative"] - kept["dir_placebo"]).groupby(kept["case_id"], sort=True).mean()


def summarise(rows: pd.DataFrame, resamples: int, seed: int) -> dict[str, Any]:
    """One ranker's rows: the mean direction of the operative edits and of the placebos, the
    mean excess over cases with its bootstrap interval, the two-sided Wilcoxon signed-rank p,
    Cohen's d_z and the placebo ratio (mean operative direction over the mean absolute placebo
    direction, over the pairs)."""
    cases = per_case(rows)
    kept = rows.dropna(subset=["dir_operative", "dir_placebo"])
    out: dict[str, Any] = {"n_cases": int(len(cases)), "n_pairs": int(len(kept))}
    if len(cases) < 2:
        return {**out, "directional_mean": None, "excess_mean": None, "ci": None, "p": None,
                "cohens_dz": None, "placebo_ratio": None}
    values = cases.to_numpy(dtype=float)
    nonzero = values[values != 0]
    p = float(stats.wilcoxon(nonzero, alternative="two-sided").pvalue) if len(nonzero) else 1.0
    spread = values.std(ddof=1)
    noise = kept["dir_placebo"].abs().mean()
    intervals = bootstrap(values, resamples, seed)
    return {**out,
            "directional_mean": round(float(kept["dir_operative"].mean()), 5),
            "placebo_mean": round(float(kept["dir_placebo"].mean()), 5),
            "excess_mean": round(float(values.mean()), 5),
            "ci": intervals["ci95"], "ci99": intervals["ci99"], "p": round(p, 6),
            "cohens_dz": round(float(values.mean() / spread), 4) if spread > 0 else None,
            "placebo_ratio": round(float(kept["dir_operative"].mean() / noise), 3)
            if noise > 0 else None}


def power(n: int, effect: float, alpha: float) -> float:
    """A two-sided one-sample t test's power at ``n`` cases for a standardised effect d_z."""
    if n < 2:
        return 0.0
    df, shift = n - 1, effect * math.sqrt(n)
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(1 - stats.nct.cdf(crit, df, shift) + stats.nct.cdf(-crit, df, shift))


def cases_needed(effect: float, alpha: float, target: float = 0.8) -> int:
    n = 2
    while power(n, effect, alpha) < target:
        n += 1
    return n

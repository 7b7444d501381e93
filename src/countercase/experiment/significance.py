"""Paired significance tests over per-query scores, Holm-corrected, with effect sizes."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1)."""
    ordered = sorted(pvalues.items(), key=lambda item: item[1])
    adjusted, running = {}, 0.0
    m = len(ordered)
    for i, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - i) * p))
        adjusted[name] = running
    return adjusted


def paired(a: np.ndarray, b: np.ndarray) -> dict[str, float | None]:
    """``a`` against ``b`` on the same queries: mean difference, paired t-test, Wilcoxon
    signed-rank (zero differences dropped), Cohen's d of the differences."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = a - b
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
    result: dict[str, float | None] = {"mean_diff": float(diff.mean()),
                                       "cohens_d": float(diff.mean() / sd) if sd > 0 else None,
                                       "t_p": None, "wilcoxon_p": None}
    if sd > 0:
        result["t_p"] = float(stats.ttest_rel(a, b).pvalue)
    if np.any(diff != 0):
        result["wilcoxon_p"] = float(stats.wilcoxon(a, b, zero_method="wilcox").pvalue)
    return {k: _rounded(k, v) for k, v in result.items()}


def _rounded(name: str, value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    # p-values to 3 significant digits (a p of 1e-9 must not print as 0), the rest to 6 places
    return float(f"{value:.3g}") if name.endswith("_p") or "_p_" in name else round(value, 6)


def compare_all(scores: dict[str, np.ndarray], reference: str) -> dict[str, dict]:
    """Every condition against ``reference``, with Holm-adjusted p-values over the family."""
    others = [name for name in scores if name != reference]
    tests = {name: paired(scores[name], scores[reference]) for name in others}
    for key in ("t_p", "wilcoxon_p"):
        raw = {n: t[key] for n, t in tests.items() if t[key] is not None}
        for name, p in holm(raw).items():
            tests[name][f"{key}_holm"] = _rounded(f"{key}_holm", p)
    return tests

"""The confirmatory analyses (``docs/preregistration/validity_v2.md``, section 7) from the
experiment's rows: one row per matched pair and ranker, with the operative edit's and its
placebo's displacement of the precedents the edit is operative for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from countercase.experiment.agreement import cohens_kappa


def per_case(rows: pd.DataFrame) -> pd.Series:
    """Each case's excess: the mean over its pairs of ``d_operative - d_placebo``."""
    kept = rows.dropna(subset=["d_operative", "d_placebo"])
    return (kept["d_operative"] - kept["d_placebo"]).groupby(kept["case_id"], sort=True).mean()


def bootstrap(values: np.ndarray, resamples: int, seed: int,
              levels: tuple[float, ...] = (0.95, 0.99)) -> dict[str, list[float]]:
    """Percentile intervals of the mean over ``resamples`` resamples of ``values``."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (resamples, len(values)))].mean(axis=1)
    return {f"ci{round(level * 100)}": [round(float(np.percentile(means, 50 * (1 - level))), 4),
                                        round(float(np.percentile(means, 50 * (1 + level))), 4)]
            for level in levels}


def excess(rows: pd.DataFrame, resamples: int, seed: int) -> dict[str, Any]:
    """The excess displacement of ``rows`` (one ranker's): its mean over cases with bootstrap
    intervals, the two-sided Wilcoxon signed-rank p, Cohen's d_z and the matched ratio (the mean
    operative displacement over the mean placebo displacement, over the pairs)."""
    cases = per_case(rows)
    kept = rows.dropna(subset=["d_operative", "d_placebo"])
    out: dict[str, Any] = {"n_cases": int(len(cases)), "n_pairs": int(len(kept))}
    if len(cases) < 2:
        return {**out, "excess_mean": None, "excess_ci": None, "excess_p": None,
                "cohens_dz": None, "matched_ratio": None}
    values = cases.to_numpy(dtype=float)
    intervals = bootstrap(values, resamples, seed)
    nonzero = values[values != 0]
    p = (float(stats.wilcoxon(nonzero, alternative="two-sided").pvalue) if len(nonzero) else 1.0)
    spread = values.std(ddof=1)
    placebo = kept["d_placebo"].mean()
    return {**out, "excess_mean": round(float(values.mean()), 4),
            "excess_ci": intervals["ci95"], "excess_ci99": intervals["ci99"],
            "excess_p": round(p, 6),
            "cohens_dz": round(float(values.mean() / spread), 4) if spread > 0 else None,
            "operative_mean": round(float(kept["d_operative"].mean()), 4),
            "placebo_mean": round(float(placebo), 4),
            "matched_ratio": (round(float(kept["d_operative"].mean() / placebo), 3)
                              if placebo > 0 else None)}


def by_fact_type(rows: pd.DataFrame, resamples: int, seed: int) -> dict[str, Any]:
    return {t: excess(group, resamples, seed) for t, group in rows.groupby("fact_type")}


def worked_pair(rows: pd.DataFrame) -> dict[str, Any] | None:
    """One ranker's matched pair in which its placebo moved the precedents furthest beyond the
    legal edit (the example the paper gives of a reversed result, picked after the run), and
    how many of its pairs point each way. None: no pair was measured."""
    kept = rows.dropna(subset=["d_operative", "d_placebo"])
    if not len(kept):
        return None
    beyond = kept["d_placebo"] - kept["d_operative"]
    order = kept.assign(beyond=beyond).sort_values(["beyond", "case_id", "fact_type"],
                                                   ascending=[False, True, True], kind="stable")
    row = order.iloc[0]
    return {"case_id": row["case_id"], "fact_type": row["fact_type"],
            "operative": row["operative"], "placebo": row["placebo"],
            "precedents": int(row["precedents"]), "d_operative": float(row["d_operative"]),
            "d_placebo": float(row["d_placebo"]), "pairs": int(len(kept)),
            "pairs_placebo_further": int((beyond > 0).sum()),
            "pairs_edit_further": int((beyond < 0).sum())}


def holm(pvalues: dict[str, float | None]) -> dict[str, float | None]:
    """Holm's step-down adjusted p values (a missing p stays missing)."""
    known = sorted((p, name) for name, p in pvalues.items() if p is not None)
    adjusted: dict[str, float | None] = {name: None for name, p in pvalues.items() if p is None}
    running = 0.0
    for i, (p, name) in enumerate(known):
        running = max(running, min(1.0, (len(known) - i) * p))
        adjusted[name] = round(running, 6)
    return adjusted


def balance(pairs: pd.DataFrame, left_out: pd.DataFrame) -> dict[str, Any]:
    """Per fact type: the mean IDF mass of the operative edits and of their placebos, their
    standardised mean difference, and the share of operative edits matched."""
    out = {}
    for fact_type, group in pairs.groupby("fact_type"):
        a, b = group["mass_operative"], group["mass_placebo"]
        pooled = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) if len(group) > 1 else np.nan
        unmatched = int(left_out.loc[(left_out["fact_type"] == fact_type)
                                     & (left_out["reason"] == "no matched placebo")].shape[0])
        out[fact_type] = {
            "pairs": int(len(group)), "mass_operative": round(float(a.mean()), 3),
            "mass_placebo": round(float(b.mean()), 3),
            "smd": round(float((a.mean() - b.mean()) / pooled), 3) if pooled > 0 else None,
            "share_matched": round(len(group) / (len(group) + unmatched), 3)}
    return out


def agreement(ours: dict[tuple[str, str], bool],
              labels: dict[str, dict[tuple[str, str], bool]]) -> dict[str, Any]:
    """The label against each annotator's ``operative`` and against the items both agree on:
    items labelled, percent agreement, Cohen's kappa, and the share each calls operative."""
    out: dict[str, Any] = {}
    both = {k: v for k, v in next(iter(labels.values()), {}).items()
            if all(k in other and other[k] == v for other in labels.values())}
    for name, theirs in [*labels.items(), ("consensus", both)]:
        items = sorted(k for k in theirs if k in ours)
        a, b = [ours[k] for k in items], [theirs[k] for k in items]
        out[name] = {"n": len(items),
                     "agreement": round(sum(x == y for x, y in zip(a, b)) / len(items), 4)
                     if items else None,
                     "kappa": cohens_kappa(a, b),
                     "operative_share_label": round(sum(a) / len(a), 4) if a else None,
                     "operative_share_annotator": round(sum(b) / len(b), 4) if b else None}
    return out

"""How far two binary labellings of the same items agree, and how well a score separates one
labelling's classes: what the LLM check, its calibration and the confirmatory analyses report."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def cohens_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary labellings of the same items; None when there are none or
    chance agreement is certain (no variation)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if not len(a):
        return None
    observed = float(np.mean(a == b))
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return round((observed - chance) / (1 - chance), 4) if chance < 1 else None


def auc(truth: np.ndarray, score: np.ndarray) -> float | None:
    """The probability that a labelled-true item scores above a labelled-false one (ties
    half); None when one class is empty."""
    truth = np.asarray(truth, dtype=bool)
    if truth.all() or not truth.any():
        return None
    return round(float(stats.mannwhitneyu(score[truth], score[~truth]).statistic
                       / (truth.sum() * (~truth).sum())), 4)

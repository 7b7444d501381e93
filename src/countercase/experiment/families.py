"""Comparisons declared before a run as families (``configs/ltr_rule.yaml`` ``holm_families``):
paired two-sided randomisation tests on average precision, Holm-corrected within each family,
on each collection apart. A comparison whose systems were not both scored is left out, and said.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from countercase.config import ConfigError, read_section
from countercase.experiment.significance import holm

ROUNDS = 10_000  # sign flips drawn per test


def read_families(path: Path) -> dict[str, list[tuple[str, str]]]:
    """family -> [(system, against)] from the rule file's ``holm_families`` ("A vs B")."""
    raw = read_section(path, "holm_families", "the declared families of")
    found = {}
    for family, pairs in raw.items():
        parsed = [tuple(part.strip() for part in str(pair).split(" vs ")) for pair in pairs or []]
        if not parsed or any(len(p) != 2 or not all(p) for p in parsed):
            raise ConfigError(f"{path}: family {family!r} is not a list of 'A vs B'")
        found[str(family)] = parsed
    return found


def randomisation(a: np.ndarray, b: np.ndarray, seed: int, rounds: int = ROUNDS) -> float:
    """The two-sided p of the mean paired difference under random sign flips."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not diff.any():
        return 1.0
    signs = np.random.default_rng(seed).choice((-1.0, 1.0), size=(rounds, len(diff)))
    extreme = np.abs((signs * diff).mean(axis=1)) >= abs(diff.mean()) - 1e-12
    return float((extreme.sum() + 1) / (rounds + 1))


def compare_families(per_query: dict[str, pd.DataFrame], declared: dict[str, list[tuple[str, str]]],
                  seed: int, measure: str = "MAP") -> dict[str, dict]:
    """Every declared family whose comparisons were scored here: each comparison's mean
    difference, p and Holm-adjusted p; the comparisons left out, named."""
    out = {}
    for family, pairs in declared.items():
        tests, missing = {}, []
        for system, against in pairs:
            if system not in per_query or against not in per_query:
                missing.append(f"{system} vs {against}")
                continue
            a, b = per_query[system][measure], per_query[against][measure].reindex(
                per_query[system].index)
            tests[f"{system} vs {against}"] = {
                "mean_diff": round(float((a - b).mean()), 6),
                "p": float(f"{randomisation(a.to_numpy(), b.to_numpy(), seed):.3g}")}
        for name, p in holm({n: t["p"] for n, t in tests.items()}).items():
            tests[name]["p_holm"] = float(f"{p:.3g}")
        if tests:
            out[family] = {"tests": tests, "not_scored": missing}
    return out

"""The served system, by the rule of ``configs/serving_rule.yaml`` (issue 58): for each kind of
query (a case described in prose, a judgment's own text), the candidate of the highest tuning
MAP among those that beat the baseline (chunk BM25) beyond noise on that kind's tuning queries,
else the baseline. Beyond noise: the ``quantile`` of a paired bootstrap of the mean difference
in average precision is above zero. The choice (``configs/serving_choice.yaml``) is the route,
kind -> system, and each kind's order (the systems that beat the baseline, best first, then the
baseline: a collection that cannot run the first is served the next it can), with every
candidate's tuning MAP and bound."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from countercase.config import ConfigError

KINDS = ("description", "judgment")


def read_rule(path: Path) -> dict[str, Any]:
    """The serving rule; an unreadable one, or one without its keys, is a :class:`ConfigError`
    naming the file."""
    try:
        rule = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"{path}: cannot read the serving rule ({error})") from None
    missing = [k for k in ("candidates", "baseline", "settings", "tuning")
               if not isinstance(rule, dict) or k not in rule]
    if missing:
        raise ConfigError(f"{path}: the serving rule lacks {', '.join(missing)}")
    return rule


def lower_bound(diff: np.ndarray, resamples: int, seed: int, quantile: float) -> float:
    """The ``quantile`` of the mean of ``diff`` over ``resamples`` bootstrap resamples."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(diff), size=(resamples, len(diff)))
    return float(np.quantile(diff[picks].mean(axis=1), quantile))


def decide_kind(scores: Mapping[str, pd.Series], rule: dict[str, Any],
                seed: int) -> dict[str, Any]:
    """``scores``: candidate -> average precision per tuning query of one kind (the baseline's
    queries; a query a candidate did not rank scores 0). Each candidate's MAP and bound, and
    the system the rule serves."""
    baseline, settings = rule["baseline"], rule["settings"]
    base = scores[baseline]
    rows: dict[str, dict[str, float | None]] = {}
    for name in rule["candidates"]:
        if name not in scores:
            continue
        ap = scores[name].reindex(base.index).fillna(0.0)
        bound = None if name == baseline else round(lower_bound(
            (ap - base).to_numpy(dtype=float), settings["resamples"], seed,
            settings["quantile"]), 4)
        rows[name] = {"MAP": round(float(ap.mean()), 4), "lower_bound": bound}
    winners = [n for n, r in rows.items() if r["lower_bound"] is not None
               and r["lower_bound"] > 0]
    position = list(rule["candidates"])
    order = [*sorted(winners, key=lambda n: (-rows[n]["MAP"], position.index(n))), baseline]
    return {"system": order[0], "order": order, "queries": len(base), "candidates": rows}


def decide(scores: Mapping[str, Mapping[str, pd.Series]], rule: dict[str, Any],
           seed: int) -> dict[str, Any]:
    """The choice: per kind of :data:`KINDS`, what :func:`decide_kind` finds, and the route."""
    kinds = {kind: {"tuned_on": rule["tuning"][kind], **decide_kind(scores[kind], rule, seed)}
             for kind in KINDS}
    return {"rule": "configs/serving_rule.yaml", "baseline": rule["baseline"],
            "route": {kind: kinds[kind]["system"] for kind in KINDS},
            "order": {kind: kinds[kind].pop("order") for kind in KINDS}, "kinds": kinds}

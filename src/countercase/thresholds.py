"""The legal boundaries of numbers (``thresholds.yaml`` beside this module): ages in years,
amounts in rupees, durations in days, each with its meaning and legal source.

Two stages read them: the fact channel (:mod:`countercase.index.facts`), which indexes every
number as its side of each boundary, and the perturbation rules, which move a number across
one. An unknown kind or a number that is not finite is an error naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from countercase.errors import CountercaseError

THRESHOLDS_PATH = Path(__file__).with_name("thresholds.yaml")
KINDS = ("ages", "amounts", "durations")
DAYS = {"days": 1, "weeks": 7, "months": 30, "years": 365, "hours": 1 / 24}


class ThresholdError(CountercaseError, ValueError):
    """An unknown threshold kind, duration unit or a number that cannot be placed."""


@dataclass(frozen=True)
class Threshold:
    value: float
    meaning: str
    source: str


@lru_cache(maxsize=4)
def load_thresholds(path: Path = THRESHOLDS_PATH) -> dict[str, tuple[Threshold, ...]]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    unknown = set(raw) - set(KINDS)
    if unknown:
        raise ThresholdError(f"{path}: unknown threshold kind(s) {sorted(unknown)}; "
                             f"expected {', '.join(KINDS)}")
    return {kind: tuple(sorted((Threshold(**t) for t in raw.get(kind, ())),
                               key=lambda t: t.value)) for kind in KINDS}


def in_days(value: float, unit: str) -> float:
    if unit not in DAYS:
        raise ThresholdError(f"unknown duration unit {unit!r}: expected one of {', '.join(DAYS)}")
    return value * DAYS[unit]


def sides(kind: str, value: float, thresholds=None) -> list[tuple[Threshold, bool]]:
    """``value``'s side of every boundary of ``kind``: (boundary, at or above it)."""
    thresholds = thresholds or load_thresholds()
    if kind not in thresholds:
        raise ThresholdError(f"unknown threshold kind {kind!r}: expected one of {', '.join(KINDS)}")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ThresholdError(f"{kind}: {value!r} is not a finite number")
    return [(t, value >= t.value) for t in thresholds[kind]]


def crosses(old: float, new: float, boundary: float) -> bool:
    return (old >= boundary) != (new >= boundary)

"""The legal boundaries of numbers (``thresholds.yaml`` beside this module): ages in years,
amounts in rupees, durations in days, each with its meaning, legal source and scope: the case
categories it applies in and the roles of the numbers it applies to.

Two stages read them: the fact channel (:mod:`countercase.index.facts`), which indexes every
number as its side of each boundary, and the perturbation rules, which move a number across a
boundary whose scope matches the case and the number (:func:`applies`). A boundary without a
scope, or with a category or role outside the vocabularies, is an error naming its line; so is
an unknown kind, or a number that is not finite.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import yaml

from countercase.errors import CountercaseError
from countercase.factsheet.categories import CASE_CATEGORIES
from countercase.factsheet.roles import NUMBER_ROLES

THRESHOLDS_PATH = Path(__file__).with_name("thresholds.yaml")
KINDS = ("ages", "amounts", "durations")
DAYS = {"days": 1, "weeks": 7, "months": 30, "years": 365, "hours": 1 / 24}
ANY_ROLE = "any"


class ThresholdError(CountercaseError, ValueError):
    """An unknown threshold kind, duration unit, a boundary without a valid scope, or a number
    that cannot be placed."""


@dataclass(frozen=True)
class Threshold:
    value: float
    meaning: str
    source: str
    categories: tuple[str, ...] = CASE_CATEGORIES
    roles: tuple[str, ...] = (ANY_ROLE,)
    # what the case's text must state, where the boundary decides one offence or proceeding (an
    # age of consent decides a sexual offence, not a murder whose victim was 17)
    words: str = ""  # a regular expression, matched as whole words whatever the case
    since: int | None = None  # the year the boundary came into force (None: before 1950)

    @property
    def scope(self) -> str:
        """The scope in words, as an edge shows it: "criminal cases; the accused's age"."""
        roles = "any number" if ANY_ROLE in self.roles else ", ".join(self.roles)
        stated = f"; the case states {self.words}" if self.words else ""
        return f"{', '.join(self.categories)} cases; {roles}{stated}"


def _boundary(kind: str, item: dict, line: int, path: Path) -> Threshold:
    where = f"{path}:{line}"
    if not isinstance(item, dict) or not {"value", "meaning", "source"} <= set(item):
        raise ThresholdError(f"{where}: a {kind} boundary needs value, meaning and source")
    value = item["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ThresholdError(f"{where}: the {kind} boundary's value {value!r} is not a finite "
                             "number")
    scope = item.get("scope")
    if not isinstance(scope, dict) or not scope.get("categories") or not scope.get("roles"):
        raise ThresholdError(f"{where}: the {kind} boundary at {item['value']} has no scope "
                             "(scope: {categories: [...], roles: [...]})")
    categories, roles = tuple(scope["categories"]), tuple(scope["roles"])
    unknown = [c for c in categories if c not in CASE_CATEGORIES]
    unknown += [r for r in roles if r not in NUMBER_ROLES[kind] + (ANY_ROLE,) or r == "unknown"]
    if unknown:
        raise ThresholdError(f"{where}: the {kind} boundary at {item['value']} names "
                             f"{', '.join(map(repr, unknown))}, not a case category or a role "
                             f"of {kind} (countercase.factsheet)")
    extra = (set(item) - {"value", "meaning", "source", "scope", "since"}
             | set(scope) - {"categories", "roles", "words"})
    if extra:
        raise ThresholdError(f"{where}: unknown field(s) {sorted(extra)}")
    words = scope.get("words") or ""
    try:
        re.compile(words)
    except re.error as error:
        raise ThresholdError(f"{where}: words {words!r} are not a regular expression ({error})")
    since = item.get("since")
    if since is not None and not isinstance(since, int):
        raise ThresholdError(f"{where}: since {since!r} is not a year")
    return Threshold(float(item["value"]), item["meaning"], item["source"], categories, roles,
                     words, since)


@lru_cache(maxsize=4)
def load_thresholds(path: Path = THRESHOLDS_PATH) -> dict[str, tuple[Threshold, ...]]:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    raw = yaml.safe_load(text) or {}
    unknown = set(raw) - set(KINDS)
    if unknown:
        raise ThresholdError(f"{path}: unknown threshold kind(s) {sorted(unknown)}; "
                             f"expected {', '.join(KINDS)}")
    lines = _item_lines(text)
    return {kind: tuple(sorted((_boundary(kind, item, line, path) for item, line in
                                zip(raw.get(kind) or (), lines.get(kind, ()))),
                               key=lambda t: t.value)) for kind in KINDS}


def _item_lines(text: str) -> dict[str, list[int]]:
    """The 1-based line of every list item under each top-level key."""
    root = yaml.compose(text)
    found: dict[str, list[int]] = {}
    if root is None:
        return found
    for key, value in root.value:
        if isinstance(value, yaml.SequenceNode):
            found[key.value] = [item.start_mark.line + 1 for item in value.value]
    return found


def applies(threshold: Threshold, categories: Iterable[str], role: str, text: str = "") -> bool:
    """Whether ``threshold`` bounds a number of ``role`` in a case of ``categories`` whose text
    is ``text``: a category shared, the role named (a number of unknown role: only a boundary
    scoped to any) and, where the boundary names them, its words stated."""
    if not set(threshold.categories) & set(categories):
        return False
    if threshold.words and not re.search(rf"\b(?:{threshold.words})\b", text, re.I):
        return False
    return ANY_ROLE in threshold.roles or role in threshold.roles


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

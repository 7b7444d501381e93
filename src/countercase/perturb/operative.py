"""Which perturbations of a corpus case are operative: they change a fact the case shares with
one of its cited precedents (:mod:`countercase.perturb.validity` states the rule). Shared by the
validity experiment and the LLM check, which label the same root perturbations the same way."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from countercase.perturb.cases import Precedent, QueryCase
from countercase.perturb.rules import Perturbation, candidates, check
from countercase.perturb.tree import diverse, plausibility
from countercase.factsheet.thresholds import crosses, in_days, load_thresholds

FACT_TYPES = ("numerical", "section", "party", "evidence")


def root_edges(case: QueryCase, edges: pd.DataFrame, per_type: int) -> list[Perturbation]:
    """The root's rule perturbations, up to ``per_type`` of each fact type, in tree order."""
    found = []
    for p in candidates(case.sheet, edges, text=case.text):
        check(p, edges)
        found.append((p, plausibility(p)))
    kept, count = [], defaultdict(int)
    for p, _ in diverse(sorted(found, key=lambda item: -item[1])):
        if count[p.fact_type] < per_type:
            count[p.fact_type] += 1
            kept.append(p)
    return kept


def _number(kind: str, value) -> float:
    return in_days(*value) if kind == "durations" else float(value)


def label(p: Perturbation, cited: list[Precedent]) -> str:
    """``operative`` or ``incidental``: a section both cite; an evidence type both have,
    removed; the same party type on the same side; a number crossing a boundary on whose side
    a precedent has a number of the same kind."""
    if p.fact_type == "section":
        shared = any(p.old in c.sections for c in cited)
    elif p.fact_type == "evidence":
        shared = p.new is None and any(p.old in c.evidence for c in cited)
    elif p.fact_type == "party":
        side = 0 if p.path.endswith("petitioner") else 1
        shared = any(c.parties[side] == p.old for c in cited)
    else:
        kind = p.path.split(".")[1]
        old, new = _number(kind, p.old), _number(kind, p.new)
        crossed = [t.value for t in load_thresholds()[kind] if crosses(old, new, t.value)]
        shared = any((v >= b) == (old >= b) for c in cited for v in c.numbers[kind]
                     for b in crossed)
    return "operative" if shared else "incidental"

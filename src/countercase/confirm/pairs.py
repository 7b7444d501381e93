"""A confirmatory case's matched pairs (``docs/preregistration/validity_v2.md``, sections 3-5):
each root rule edit operative for one of the case's cited precedents (the legal label), made to
the case's text at the ``span`` granularity, and the null edit of the same operation closest to
it in IDF mass, if within the tolerance. Texts and document frequencies only, never a ranking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from countercase.confirm.label import Reasons, operative
from countercase.confirm.matching import (Candidate, Mass, closest, number_move,
                                          party_candidates, removal_candidate,
                                          section_candidates)
from countercase.factsheet.rules import evidence_mentions
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import in_days
from countercase.perturb.cases import QueryCase
from countercase.perturb.operative import root_edges
from countercase.perturb.query import evidence_edits, party_edits, text_query
from countercase.perturb.rules import Perturbation, apply

GRANULARITY = "span"


@dataclass(frozen=True)
class Node:
    """An edited copy of a case: its text, its sheet, the edit's IDF mass."""

    description: str
    text: str
    sheet: FactSheet
    mass: float


@dataclass(frozen=True)
class Pair:
    case_id: str
    fact_type: str
    precedents: tuple[str, ...]  # the cited precedents the operative edit is operative for
    operative: Node
    placebo: Node


def successors(edges: pd.DataFrame) -> dict[str, str]:
    """An old code's section -> its 2023 counterpart (the adjacency map's correspondences)."""
    found = edges[edges["kind"] == "correspondence"].drop_duplicates("source")
    return dict(zip(found["source"], found["target"]))


def _number_placebo(p: Perturbation) -> Perturbation | None:
    kind = p.path.split(".")[1]
    if kind == "durations":
        (old, unit), (new, _) = p.old, p.new
        moved = number_move(kind, in_days(old, unit), in_days(new, unit))
        return None if moved is None else replace(p, new=(moved / in_days(1, unit), unit))
    moved = number_move(kind, float(p.old), float(p.new))
    return None if moved is None else replace(p, new=moved)


def candidates(p: Perturbation, case: QueryCase, mass: Mass, target: float,
               successor: Mapping[str, str]) -> list[tuple[Candidate, FactSheet]]:
    """The null edits of ``p``'s operation on ``case``'s text, each with its node's sheet."""
    text, sheet = case.text, case.sheet
    if p.fact_type == "section":
        return [(c, sheet) for c in section_candidates(text, p.old, successor.get(p.old))]
    if p.fact_type == "party":
        side = p.path.split(".")[-1]
        mentions = max(1, len(party_edits(side, p.old, p.new, text)))
        return [(c, sheet) for c in party_candidates(text, mentions)]
    if p.fact_type == "evidence":
        removed = [(a, b) for a, b, _ in evidence_edits(p.old, text, True)]
        if not removed:
            removed = [(a, b) for a, b, k in evidence_mentions(text) if k == p.old][:1]
        words = sum(len(text[a:b].split()) for a, b in removed)
        found = removal_candidate(mass, text, removed, target, max(1, 2 * words))
        return [(found, sheet)] if found is not None else []
    moved = _number_placebo(p)
    if moved is None:
        return []
    placed = apply(sheet, moved)
    return [(Candidate(f"placebo of {p.description}: the value {moved.new} instead",
                       text_query(placed, sheet, text, GRANULARITY)), placed)]


def case_pairs(case: QueryCase, edges: pd.DataFrame, per_type: int,
               reasons: Mapping[str, Reasons], mass: Mass, successor: Mapping[str, str],
               tolerance: float) -> tuple[list[Pair], list[dict[str, str]]]:
    """``case``'s matched pairs, and each root edit left out: its fact type and why (``an
    evidence item added``, ``not operative for a cited precedent``, ``no matched placebo``)."""
    pairs, left_out = [], []

    def leave(p: Perturbation, why: str) -> None:
        left_out.append({"case_id": case.case_id, "fact_type": p.fact_type,
                         "description": p.description, "reason": why})

    for p in root_edges(case, edges, per_type):
        if p.fact_type == "evidence" and p.new is not None:
            leave(p, "an evidence item added (no removal)")
            continue
        precedents = tuple(d for d in case.cited if d in reasons and operative(p, reasons[d]))
        if not precedents:
            leave(p, "not operative for a cited precedent")
            continue
        sheet = apply(case.sheet, p)
        text = text_query(sheet, case.sheet, case.text, GRANULARITY)
        target = mass.of(case.text, text)
        options = candidates(p, case, mass, target, successor)
        found = closest(mass, case.text, target, [c for c, _ in options], tolerance)
        if target <= 0 or found is None:
            leave(p, "no matched placebo")
            continue
        placebo, placebo_mass = found
        placebo_sheet = next(s for c, s in options if c is placebo)
        pairs.append(Pair(case.case_id, p.fact_type, precedents,
                          Node(p.description, text, sheet, target),
                          Node(placebo.description, placebo.text, placebo_sheet, placebo_mass)))
    return pairs, left_out

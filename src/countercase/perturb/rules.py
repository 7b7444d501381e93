"""Rule-based perturbations of a fact sheet: one fact changed at a time, on legal grounds only.

- numerical: an age, amount or duration moved just across the nearest legal boundaries of
  ``countercase/thresholds.yaml`` (below: to the boundary minus one unit; above: to the boundary), and
  durations also doubled and halved;
- section: a cited section replaced by a neighbour on the adjacency map
  (:mod:`countercase.perturb.adjacency`), strongest edges first;
- party: a party's type swapped along a named axis of :data:`PARTY_AXES`;
- evidence: a present item removed, or an absent one of the case category's list added.

:func:`check` re-verifies a perturbation against the rules (a boundary really crossed, an edge
really there, a swap on an axis); :func:`apply` returns the changed sheet, the changed value
marked ``extractor="perturbation"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from countercase.errors import CountercaseError
from countercase.factsheet.schema import EvidenceItem, FactSheet
from countercase.perturb.adjacency import neighbours
from countercase.thresholds import DAYS, Threshold, crosses, load_thresholds

PARTY_AXES = {
    frozenset({"Individual", "Minor"}): "age of the party",
    frozenset({"Employee", "Contractor"}): "employment relationship",
    frozenset({"Tenant", "Licensee"}): "right of occupation",
    frozenset({"Individual", "Corporation"}): "legal personality",
    frozenset({"State", "UnionOfIndia"}): "level of government",
    frozenset({"PublicSector", "PrivateSector"}): "ownership",
    frozenset({"Corporation", "Partnership"}): "form of business",
    frozenset({"Individual", "ForeignNational"}): "nationality",
}
CRIMINAL_ACTS = {"IPC", "CrPC", "BNS", "BNSS", "IEA", "BSA"}
EVIDENCE_BY_CATEGORY = {
    "criminal": ("DyingDeclaration", "Confession", "EyeWitness", "PostMortemReport", "Recovery",
                 "MedicalReport", "LastSeen", "Expert"),
    "civil": ("Document", "Expert"),
}


class PerturbationError(CountercaseError, ValueError):
    """A perturbation the rules do not allow (the message says which rule)."""


@dataclass(frozen=True)
class Perturbation:
    fact_type: str  # "numerical" | "section" | "party" | "evidence"
    path: str  # where in the sheet: "numerical_facts.ages.0", "sections_cited.1", ...
    old: Any
    new: Any
    description: str  # "Age changed from 25 to 17 (now a minor)"
    basis: str  # the boundary's legal source, the edge's evidence, the axis


def _crossings(value: float, thresholds: tuple[Threshold, ...], step: float,
               always: float | None = None) -> list[tuple[float, Threshold]]:
    """New values just across the nearest boundary below and above ``value`` (and ``always``)."""
    below = [t for t in thresholds if t.value <= value]
    above = [t for t in thresholds if t.value > value]
    chosen = ([below[-1]] if below else []) + ([above[0]] if above else [])
    chosen += [t for t in thresholds if t.value == always and t not in chosen]
    return [(t.value - step if t.value <= value else t.value, t) for t in chosen]


def age_perturbations(sheet: FactSheet, thresholds) -> list[Perturbation]:
    out = []
    for i, age in enumerate(sheet.numerical_facts.ages):
        for new, t in _crossings(age.years, thresholds["ages"], 1, always=18):
            status = "now a minor" if new < 18 <= age.years else (
                "now of age" if age.years < 18 <= new else f"across {t.value:g}: {t.meaning}")
            out.append(Perturbation("numerical", f"numerical_facts.ages.{i}", age.years, new,
                                    f"Age changed from {age.years:g} to {new:g} ({status})",
                                    t.source))
    return out


def amount_perturbations(sheet: FactSheet, thresholds) -> list[Perturbation]:
    out = []
    for i, amount in enumerate(sheet.numerical_facts.amounts):
        for new, t in _crossings(amount.value, thresholds["amounts"], 1):
            out.append(Perturbation("numerical", f"numerical_facts.amounts.{i}", amount.value, new,
                                    f"Amount changed from Rs {amount.value:,.0f} to Rs {new:,.0f} "
                                    f"(across Rs {t.value:,.0f}: {t.meaning})", t.source))
    return out


def duration_perturbations(sheet: FactSheet, thresholds) -> list[Perturbation]:
    out = []
    for i, d in enumerate(sheet.numerical_facts.durations):
        path = f"numerical_facts.durations.{i}"
        for factor, word in ((2.0, "doubled"), (0.5, "halved")):
            out.append(Perturbation("numerical", path, (d.value, d.unit), (d.value * factor, d.unit),
                                    f"Duration {word} from {d.value:g} to {d.value * factor:g} "
                                    f"{d.unit}", f"{word} (scaling rule)"))
        days = d.value * DAYS[d.unit]
        for new, t in _crossings(days, thresholds["durations"], 1):
            out.append(Perturbation("numerical", path, (d.value, d.unit), (new, "days"),
                                    f"Duration changed from {d.value:g} {d.unit} to {new:g} days "
                                    f"(across {t.value:g} days: {t.meaning})", t.source))
    return out


def section_perturbations(sheet: FactSheet, edges: pd.DataFrame,
                          per_section: int = 5) -> list[Perturbation]:
    out = []
    cited = {s.section_id for s in sheet.sections_cited}
    for i, section in enumerate(sheet.sections_cited):
        near = neighbours(edges, section.section_id)
        near = near[~near["neighbour"].isin(cited)].drop_duplicates("neighbour").head(per_section)
        for row in near.itertuples():
            out.append(Perturbation("section", f"sections_cited.{i}", section.section_id,
                                    row.neighbour, f"Section {section.section_id} changed to "
                                    f"{row.neighbour} ({row.kind}: {row.evidence})",
                                    f"{row.kind}: {row.evidence}"))
    return out


def party_perturbations(sheet: FactSheet) -> list[Perturbation]:
    out = []
    for side in ("petitioner", "respondent"):
        old = getattr(sheet.parties, side).type
        for axis, name in PARTY_AXES.items():
            if old in axis:
                (new,) = axis - {old}
                out.append(Perturbation("party", f"parties.{side}", old, new,
                                        f"The {side} changed from {old} to {new} ({name})",
                                        f"axis: {name}"))
    return out


def category(sheet: FactSheet) -> str:
    acts = {s.section_id.split("-")[0] for s in sheet.sections_cited}
    criminal_evidence = {"DyingDeclaration", "Confession", "PostMortemReport", "FIR", "Recovery"}
    if acts & CRIMINAL_ACTS or {e.evidence_type for e in sheet.evidence_items} & criminal_evidence:
        return "criminal"
    return "civil"


def evidence_perturbations(sheet: FactSheet) -> list[Perturbation]:
    present = [e.evidence_type for e in sheet.evidence_items]
    out = [Perturbation("evidence", "evidence_items", kind, None, f"{kind} removed",
                        "presence toggled: removed") for kind in present]
    kind_of_case = category(sheet)
    out += [Perturbation("evidence", "evidence_items", None, kind, f"{kind} added",
                         f"presence toggled: added (a {kind_of_case} case)")
            for kind in EVIDENCE_BY_CATEGORY[kind_of_case] if kind not in present]
    return out


def states_facts(sheet: FactSheet) -> bool:
    """Whether the sheet states any fact at all (a section, a party type, evidence, a number)."""
    facts = sheet.numerical_facts
    return bool(sheet.sections_cited or sheet.evidence_items or facts.ages or facts.amounts
                or facts.durations or {sheet.parties.petitioner.type,
                                       sheet.parties.respondent.type} - {"Unknown"})


def candidates(sheet: FactSheet, edges: pd.DataFrame, thresholds=None) -> list[Perturbation]:
    """Every single-fact perturbation of ``sheet`` the rules allow, in a fixed order; none for
    a sheet that states no fact (adding evidence to nothing is no counterfactual of a case)."""
    if not states_facts(sheet):
        return []
    thresholds = thresholds or load_thresholds()
    return (age_perturbations(sheet, thresholds) + amount_perturbations(sheet, thresholds)
            + duration_perturbations(sheet, thresholds) + section_perturbations(sheet, edges)
            + party_perturbations(sheet) + evidence_perturbations(sheet))


def check(p: Perturbation, edges: pd.DataFrame, thresholds=None) -> None:
    """Raise :class:`PerturbationError` unless ``p`` follows its rule."""
    thresholds = thresholds or load_thresholds()
    if p.path.startswith("numerical_facts.ages") or p.path.startswith("numerical_facts.amounts"):
        kind = "ages" if ".ages." in p.path else "amounts"
        if not any(crosses(p.old, p.new, t.value) for t in thresholds[kind]):
            raise PerturbationError(f"{p.description}: crosses no legal boundary of {kind}")
    elif p.path.startswith("numerical_facts.durations"):
        (old, old_unit), (new, new_unit) = p.old, p.new
        a, b = old * DAYS[old_unit], new * DAYS[new_unit]
        scaled = new_unit == old_unit and new in (old * 2, old / 2)
        if not scaled and not any(crosses(a, b, t.value) for t in thresholds["durations"]):
            raise PerturbationError(f"{p.description}: neither scaled nor across a limitation")
    elif p.fact_type == "section":
        if p.new not in set(neighbours(edges, p.old)["neighbour"]):
            raise PerturbationError(f"{p.old} -> {p.new}: no edge of the adjacency map")
    elif p.fact_type == "party":
        if frozenset({p.old, p.new}) not in PARTY_AXES:
            raise PerturbationError(f"{p.old} -> {p.new}: not an axis of the party ontology")
    elif p.fact_type == "evidence":
        if (p.old is None) == (p.new is None):
            raise PerturbationError("an evidence perturbation removes or adds one item")
    else:
        raise PerturbationError(f"unknown fact type {p.fact_type!r}")


def apply(sheet: FactSheet, p: Perturbation) -> FactSheet:
    """The sheet with ``p`` applied; the input is not changed."""
    data = sheet.model_dump()
    if p.fact_type == "evidence":
        items = data["evidence_items"]
        if p.new is None:
            data["evidence_items"] = [e for e in items if e["evidence_type"] != p.old]
        else:
            items.append(EvidenceItem(evidence_type=p.new, description=p.description,
                                      extractor="perturbation").model_dump())
        return FactSheet.model_validate(data)
    parts = p.path.split(".")
    target = data
    for key in parts[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    last = parts[-1]
    value = target[int(last)] if last.isdigit() else target[last]
    if p.fact_type == "section":
        value["section_id"] = p.new
    elif p.fact_type == "party":
        value["type"] = p.new
    elif ".ages." in p.path:
        value["years"] = p.new
        value["descriptor"] = "minor" if p.new < 18 else "major"
    elif ".amounts." in p.path:
        value["value"] = p.new
    else:
        value["value"], value["unit"] = p.new
    value["extractor"] = "perturbation"
    return FactSheet.model_validate(data)

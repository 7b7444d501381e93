"""Rule-based perturbations of a fact sheet: one legally operative fact changed at a time.

A perturbation is a legal counterfactual of its case or it is not made (issue 41). Every rule
reads the case's legal domains (:func:`case_categories`) and the legal tables
(:mod:`countercase.perturb.legal_tables`, ``countercase/factsheet/thresholds.yaml``):

- numerical: an age, amount or duration moved just across the nearest boundaries whose scope
  matches the case's categories and the number's role (below: to the boundary minus one unit;
  above: to the boundary). A number of unknown role crosses only boundaries scoped to any role.
  Nothing is scaled: the legal audit read doubled and halved periods as no counterfactual;
- section: a cited section replaced by an operative alternative of ``section_swaps.yaml``, never
  by a repealed, omitted or struck-down provision; renumbering into the 2023 codes is the same
  law, no perturbation (the validity experiment's placebo);
- party: a party's type swapped along an axis of ``applicability.yaml`` that applies in the
  case's categories (tenant and licensee only where the text names a tenancy; a minor accused
  only on the side the State prosecutes);
- evidence: a present item removed, of a type the case's offences are proved by
  (``applicability.yaml``); nothing is added (the audit read additions as restating what such a
  trial has, or as evidence of no use to it).

No rule proposes a law that came into force after the latest year the case's text states (its
events are no later): a boundary's ``since``, an axis's ``since``, a provision's year in
``section_swaps.yaml``'s ``enacted``. A duration moved up across a boundary of whole years goes
past it in every calendar (seven years are 2,556 or 2,557 days, not 2,555).

Every perturbation names its rule, the scope it matched and its legal source. :func:`check`
re-verifies one against the rules; :func:`apply` returns the changed sheet, the changed value
marked ``extractor="perturbation"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from countercase.errors import CountercaseError
from countercase.factsheet.categories import categories as read_categories
from countercase.factsheet.schema import EvidenceItem, FactSheet
from countercase.perturb.legal_tables import LegalTables, load_tables
from countercase.factsheet.thresholds import DAYS, Threshold, applies, crosses, load_thresholds

PROSECUTORS = ("State", "UnionOfIndia")
# a year of the case's events or proceedings: a four-digit year, not an amount or a long number
YEAR = re.compile(r"(?<!\d)(?<!\d,)(?<!Rs\.)(?<!Rs\. )(?<!Rs )(19[4-9]\d|20[0-2]\d)(?!\d)(?!,\d)")


def latest_year(text: str) -> int | None:
    """The latest year ``text`` states (None: none): no law in force only after it governed the
    case's events."""
    years = [int(y) for y in YEAR.findall(text or "")]
    return max(years) if years else None


def in_force(since: int | None, latest: int | None) -> bool:
    return since is None or latest is None or since <= latest


def calendar_days(boundary: float) -> float:
    """The first whole day past ``boundary`` days in every calendar: a boundary of whole years
    (365 days each, :data:`DAYS`) gains its possible leap days (one every four years)."""
    if boundary >= 365 and boundary % 365 == 0:
        years = int(boundary // 365)
        return boundary + -(-years // 4) + 1
    return boundary


class PerturbationError(CountercaseError, ValueError):
    """A perturbation the rules do not allow (the message says which rule)."""


@dataclass(frozen=True)
class Perturbation:
    fact_type: str  # "numerical" | "section" | "party" | "evidence"
    path: str  # where in the sheet: "numerical_facts.ages.0", "sections_cited.1", ...
    old: Any
    new: Any
    description: str  # "The accused's age changed from 17 to 18 (across 18: ...)"
    basis: str  # the legal source
    rule: str = ""  # threshold | swap | party_axis | evidence
    scope: str = ""  # what of the case the rule matched


def case_categories(sheet: FactSheet, text: str | None = None) -> frozenset[str]:
    """The case's legal domains: the sheet's own, else read from its sections and ``text``."""
    if sheet.categories:
        return frozenset(sheet.categories)
    return read_categories([s.section_id for s in sheet.sections_cited], text or "")


def _crossings(value: float, thresholds: tuple[Threshold, ...],
               step: float) -> list[tuple[float, Threshold]]:
    """New values just across the nearest boundary below and above ``value``."""
    below = [t for t in thresholds if t.value <= value]
    above = [t for t in thresholds if t.value > value]
    chosen = ([below[-1]] if below else []) + ([above[0]] if above else [])
    return [(t.value - step if t.value <= value else t.value, t) for t in chosen]


def _in_scope(thresholds, kind: str, cats: frozenset[str], role: str,
              text: str) -> tuple[Threshold, ...]:
    latest = latest_year(text)
    return tuple(t for t in thresholds[kind]
                 if applies(t, cats, role, text) and in_force(t.since, latest))


def _whose(role: str, kind: str) -> str:
    if role == "unknown":
        return {"ages": "Age", "amounts": "Amount", "durations": "Duration"}[kind]
    return {"ages": f"The {role}'s age", "amounts": f"The {role.replace('_', ' ')}",
            "durations": f"The {role}"}[kind]


def _matched(t: Threshold, cats: frozenset[str], role: str) -> str:
    return (f"{', '.join(sorted(cats & set(t.categories)))} case; a number of role {role} "
            f"(the boundary's scope: {t.scope})")


def _numbers(kind: str, numbers, value, words, thresholds, cats: frozenset[str],
             text: str) -> list[Perturbation]:
    """Each number of ``kind`` moved across every boundary in scope: ``value`` reads it on the
    boundary's scale, ``words(old, new, boundary)`` says the edit."""
    out = []
    for i, number in enumerate(numbers):
        old = value(number)
        bounds = _in_scope(thresholds, kind, cats, number.role, text)
        for new, t in _crossings(old, bounds, 1):
            out.append(Perturbation(
                "numerical", f"numerical_facts.{kind}.{i}", old, new,
                f"{_whose(number.role, kind)} changed from {words(old, new, t)}", t.source,
                "threshold", _matched(t, cats, number.role)))
    return out


def age_perturbations(sheet: FactSheet, thresholds, cats: frozenset[str],
                      text: str = "") -> list[Perturbation]:
    return _numbers("ages", sheet.numerical_facts.ages, lambda age: age.years,
                    lambda old, new, t: f"{old:g} to {new:g} (across {t.value:g}: {t.meaning})",
                    thresholds, cats, text)


def amount_perturbations(sheet: FactSheet, thresholds, cats: frozenset[str],
                         text: str = "") -> list[Perturbation]:
    return _numbers("amounts", sheet.numerical_facts.amounts, lambda amount: amount.value,
                    lambda old, new, t: f"Rs {old:,.0f} to Rs {new:,.0f} (across Rs "
                    f"{t.value:,.0f}: {t.meaning})", thresholds, cats, text)


def duration_perturbations(sheet: FactSheet, thresholds, cats: frozenset[str],
                           text: str = "") -> list[Perturbation]:
    out = []
    for i, d in enumerate(sheet.numerical_facts.durations):
        path = f"numerical_facts.durations.{i}"
        whose = _whose(d.role, "durations")
        days = d.value * DAYS[d.unit]
        bounds = _in_scope(thresholds, "durations", cats, d.role, text)
        for new, t in _crossings(days, bounds, 1):
            new = calendar_days(new) if new >= t.value else new
            out.append(Perturbation(
                "numerical", path, (d.value, d.unit), (new, "days"),
                f"{whose} changed from {d.value:g} {d.unit} to {new:g} days "
                f"(across {t.value:g} days: {t.meaning})", t.source, "threshold",
                _matched(t, cats, d.role)))
    return out


def section_perturbations(sheet: FactSheet, tables: LegalTables, text: str = "",
                          per_section: int = 5) -> list[Perturbation]:
    out = []
    cited = {s.section_id for s in sheet.sections_cited}
    latest = latest_year(text)
    for i, section in enumerate(sheet.sections_cited):
        swaps = [s for s in tables.swaps.get(section.section_id, ())
                 if s.target not in cited and s.target not in tables.repealed
                 and in_force(tables.enacted.get(s.target), latest)
                 and not s.unless & cited and (s.words is None or s.words.search(text))
                 and (s.contradicted is None or not s.contradicted.search(text))]
        for swap in swaps[:per_section]:
            out.append(Perturbation(
                "section", f"sections_cited.{i}", section.section_id, swap.target,
                f"Section {section.section_id} changed to {swap.target} ({swap.reason})",
                swap.source, "swap", f"an operative alternative of {section.section_id}"))
    return out


def party_perturbations(sheet: FactSheet, tables: LegalTables, cats: frozenset[str],
                        text: str = "") -> list[Perturbation]:
    out = []
    sides = {"petitioner": sheet.parties.petitioner.type,
             "respondent": sheet.parties.respondent.type}
    cited = {s.section_id for s in sheet.sections_cited}
    latest = latest_year(text)
    for side, old in sides.items():
        other = sides["respondent" if side == "petitioner" else "petitioner"]
        for axis in tables.party_axes:
            matched = cats & axis.categories
            if old not in axis.types or not matched or not in_force(axis.since, latest):
                continue
            if axis.words is not None and not axis.words.search(text):
                continue  # the case names no such relation (no tenancy, no licence)
            if axis.not_words is not None and axis.not_words.search(text):
                continue  # the case states what the new type denies (an adult's status)
            if "Minor" in axis.types and any(a.years >= 18 and a.role == "accused"
                                             for a in sheet.numerical_facts.ages):
                continue  # the accused's stated age
            if axis.sections and not axis.sections & cited:
                continue  # the case invokes no provision the axis decides
            if "Minor" in axis.types and matched == {"criminal"} and other not in PROSECUTORS:
                continue  # in a criminal case the age in issue is the prosecuted party's
            (new,) = axis.types - {old}
            out.append(Perturbation(
                "party", f"parties.{side}", old, new,
                f"The {side} changed from {old} to {new} ({axis.name}: {axis.reason})",
                axis.source, "party_axis",
                f"{', '.join(sorted(matched))} case; the axis {axis.name}"))
    return out


def evidence_perturbations(sheet: FactSheet, tables: LegalTables, cats: frozenset[str],
                           text: str = "") -> list[Perturbation]:
    offences = tables.offences((s.section_id for s in sheet.sections_cited), text)
    present = [e.evidence_type for e in sheet.evidence_items
               if not (text and _denied(text, e.span.text if e.span else ""))]
    out = []
    for kind in dict.fromkeys(present):
        rule = tables.evidence_applies(kind, offences, cats)
        if rule is not None:
            out.append(Perturbation("evidence", "evidence_items", kind, None, f"{kind} removed",
                                    rule.source, "evidence",
                                    _evidence_scope(rule, offences, cats, "removed")))
    return out


_DENIAL = re.compile(r"\b(?:no|nothing|not|never|without|neither|nor|none)\b[^.;]{0,40}$", re.I)


def _denied(text: str, mention: str) -> bool:
    """Whether every mention of ``mention`` in ``text`` is denied ("nothing was recovered",
    "no dying declaration"): the case has no such item to remove."""
    if not mention:
        return False
    spans = [m.start() for m in re.finditer(re.escape(mention), text, re.I)]
    return bool(spans) and all(_DENIAL.search(text[max(0, i - 40):i])
                               or re.match(r"\s*(?:was|were)\s+not\b", text[i + len(mention):],
                                           re.I) for i in spans)


def _evidence_scope(rule, offences: frozenset[str], cats: frozenset[str], how: str) -> str:
    where = sorted(rule.offences & offences) or sorted(rule.categories & cats)
    return f"{how}: proof of {', '.join(where)} ({rule.reason})"


def states_facts(sheet: FactSheet) -> bool:
    """Whether the sheet states any fact at all (a section, a party type, evidence, a number)."""
    facts = sheet.numerical_facts
    return bool(sheet.sections_cited or sheet.evidence_items or facts.ages or facts.amounts
                or facts.durations or {sheet.parties.petitioner.type,
                                       sheet.parties.respondent.type} - {"Unknown"})


def candidates(sheet: FactSheet, edges: pd.DataFrame | None = None, thresholds=None,
               text: str | None = None, tables: LegalTables | None = None) -> list[Perturbation]:
    """Every single-fact perturbation of ``sheet`` the rules allow, in a fixed order; none for
    a sheet that states no fact. ``text``: the case's text (its domains, the relations it
    names); ``edges``: the adjacency map, read by no rule (its correspondence edges are
    renumberings, the validity experiment's placebos)."""
    if not states_facts(sheet):
        return []
    thresholds = thresholds or load_thresholds()
    tables = tables or load_tables()
    cats = case_categories(sheet, text)
    return (age_perturbations(sheet, thresholds, cats, text or "")
            + amount_perturbations(sheet, thresholds, cats, text or "")
            + duration_perturbations(sheet, thresholds, cats, text or "")
            + section_perturbations(sheet, tables, text or "")
            + party_perturbations(sheet, tables, cats, text or "")
            + evidence_perturbations(sheet, tables, cats, text or ""))


def check(p: Perturbation, edges: pd.DataFrame | None = None, thresholds=None,
          tables: LegalTables | None = None) -> None:
    """Raise :class:`PerturbationError` unless ``p`` follows its rule."""
    thresholds = thresholds or load_thresholds()
    tables = tables or load_tables()
    if p.path.startswith("numerical_facts.ages") or p.path.startswith("numerical_facts.amounts"):
        kind = "ages" if ".ages." in p.path else "amounts"
        if not any(crosses(p.old, p.new, t.value) for t in thresholds[kind]):
            raise PerturbationError(f"{p.description}: crosses no legal boundary of {kind}")
    elif p.path.startswith("numerical_facts.durations"):
        (old, old_unit), (new, new_unit) = p.old, p.new
        a, b = old * DAYS[old_unit], new * DAYS[new_unit]
        if not any(crosses(a, b, t.value) for t in thresholds["durations"]):
            raise PerturbationError(f"{p.description}: crosses no legal boundary of durations")
    elif p.fact_type == "section":
        if p.new in tables.repealed:
            raise PerturbationError(f"{p.old} -> {p.new}: {p.new} is repealed "
                                    f"({tables.repealed[p.new]})")
        if p.new not in {s.target for s in tables.swaps.get(p.old, ())}:
            raise PerturbationError(f"{p.old} -> {p.new}: not an operative alternative of "
                                    "section_swaps.yaml")
    elif p.fact_type == "party":
        if not any(frozenset({p.old, p.new}) == axis.types for axis in tables.party_axes):
            raise PerturbationError(f"{p.old} -> {p.new}: not an axis of applicability.yaml")
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

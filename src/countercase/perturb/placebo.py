"""Placebo perturbations: changes a legal reader would say cannot matter, the control of the
validity experiment (:mod:`countercase.perturb.validity`).

- ``date_month``: a date's month moved by one ("9 February 1961" -> "9 March 1961"); dates are
  no fact of the sheet;
- ``number_within``: an age, amount or duration moved without crossing any legal boundary of
  :mod:`countercase.factsheet.thresholds` (an age by one year, an amount or a duration by a tenth);
- ``role_synonym``: a role word replaced by a synonym ("the deceased" -> "the victim",
  "appellant" -> "petitioner", both the same side);
- ``renumbering``: a cited section of the old codes renamed as its counterpart in the 2023
  codes (IPC 302 -> BNS 103: the adjacency map's correspondence edges): the same law, a null
  change (issue 41: never a section perturbation).

Each is an edit of the text (its first mention under the ``field`` granularity, every mention
under ``span``), and ``number_within`` also of the sheet, so that the node's sheet states what
its text says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from countercase.factsheet.rules import find_ages, find_amounts, find_durations
from countercase.factsheet.schema import FactSheet
from countercase.perturb.query import apply_edits
from countercase.factsheet.thresholds import crosses, in_days, load_thresholds

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
_DATE = re.compile(r"\b(?:\d{1,2}(?:st|nd|rd|th)?\s+(?P<m1>" + "|".join(MONTHS) + r")\b,?\s+\d{4}"
                   r"|(?P<m2>" + "|".join(MONTHS) + r")\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})")
SYNONYMS = {"deceased": "victim", "appellant": "petitioner", "appellants": "petitioners",
            "complainant": "informant", "accused": "accused person"}
ROLE_WORDS = re.compile(r"\b(" + "|".join(SYNONYMS) + r")\b", re.I)
KINDS = ("date_month", "number_within", "role_synonym", "renumbering")


@dataclass(frozen=True)
class Placebo:
    kind: str
    description: str
    text: str  # the node's text
    sheet: FactSheet  # the node's sheet


def _month_edit(match: re.Match) -> str:
    group = "m1" if match.group("m1") else "m2"
    month = match.group(group)
    shifted = MONTHS[(MONTHS.index(month) + 1) % 12]
    a, b = match.start(group) - match.start(), match.end(group) - match.start()
    words = match.group()
    return words[:a] + shifted + words[b:]


def date_placebo(sheet: FactSheet, text: str, every: bool) -> Placebo | None:
    dates = list(_DATE.finditer(text))
    if not dates:
        return None
    first = dates[0].group()
    chosen = [m for m in dates if m.group() == first] if every else dates[:1]
    edits = [(m.start(), m.end(), _month_edit(m)) for m in chosen]
    return Placebo("date_month", f"Date {first!r} moved by one month", apply_edits(text, edits),
                   sheet)


def _within(kind: str, value: float, step: float, thresholds) -> float | None:
    for new in (value + step, value - step):
        if new >= 0 and not any(crosses(value, new, t.value) for t in thresholds[kind]):
            return new
    return None


def number_placebo(sheet: FactSheet, text: str, every: bool) -> Placebo | None:
    """The first number of the sheet that can move without crossing a boundary."""
    thresholds = load_thresholds()
    facts = sheet.numerical_facts
    data = sheet.model_dump()
    for i, age in enumerate(facts.ages):
        new = _within("ages", age.years, 1, thresholds)
        if new is not None and age.span is not None:
            mentions = [a.span for a in find_ages(text) if a.years == age.years] if every else []
            words = lambda s: re.sub(r"\d+(?:\.\d+)?", f"{new:g}", s.text, count=1)  # noqa: E731
            data["numerical_facts"]["ages"][i]["years"] = new
            return _number_node(data, text, age.span, mentions, words,
                                f"Age moved from {age.years:g} to {new:g} (no boundary crossed)")
    for i, amount in enumerate(facts.amounts):
        new = _within("amounts", amount.value, round(amount.value * 0.1), thresholds)
        if new is not None and new != amount.value and amount.span is not None:
            mentions = ([a.span for a in find_amounts(text) if a.value == amount.value]
                        if every else [])
            data["numerical_facts"]["amounts"][i]["value"] = new
            return _number_node(data, text, amount.span, mentions, lambda s: f"Rs. {new:,.0f}",
                                f"Amount moved from Rs {amount.value:,.0f} to Rs {new:,.0f} "
                                "(no boundary crossed)")
    for i, d in enumerate(facts.durations):
        days = in_days(d.value, d.unit)
        step = max(1.0, round(d.value * 0.1))
        new = _within("durations", days, step * in_days(1, d.unit), thresholds)
        if new is not None and d.span is not None:
            value = d.value + step if new > days else d.value - step
            mentions = ([x.span for x in find_durations(text, find_ages(text))
                         if (x.value, x.unit) == (d.value, d.unit)] if every else [])
            data["numerical_facts"]["durations"][i]["value"] = value
            return _number_node(data, text, d.span, mentions, lambda s: f"{value:g} {d.unit}",
                                f"Duration moved from {d.value:g} to {value:g} {d.unit} "
                                "(no boundary crossed)")
    return None


def _number_node(data: dict, text: str, span, mentions, words, description: str) -> Placebo:
    spans = {(m.start, m.end): m for m in mentions}
    spans.setdefault((span.start, span.end), span)
    edits = [(s.start, s.end, words(s)) for s in spans.values()]
    return Placebo("number_within", description, apply_edits(text, edits),
                   FactSheet.model_validate(data))


def role_placebo(sheet: FactSheet, text: str, every: bool) -> Placebo | None:
    found = list(ROLE_WORDS.finditer(text))
    if not found:
        return None
    word = found[0].group().lower()
    chosen = [m for m in found if m.group().lower() == word] if every else found[:1]
    edits = []
    for m in chosen:
        new = SYNONYMS[word]
        edits.append((m.start(), m.end(), new.capitalize() if m.group()[0].isupper() else new))
    return Placebo("role_synonym", f"Role word {word!r} replaced by {SYNONYMS[word]!r}",
                   apply_edits(text, edits), sheet)


# how a judgment names the old codes, just after a section's number
_ACT_WORDS = {"IPC": r"I\.\s?P\.\s?C\.?|IPC|Indian Penal Code|Penal Code",
              "CrPC": r"Cr\.?\s?P\.?\s?C\.?|Code of Criminal Procedure"}


def renamed(text: str, start: int, end: int, old: str, new: str) -> list[tuple[int, int, str]]:
    """Edits renaming the section ``old`` whose number is in ``text[start:end]`` as ``new``: the
    number, and the old code's name where it follows ("302 IPC" -> "103 BNS")."""
    old_act, _, old_number = old.rpartition("-")
    new_act, _, new_number = new.rpartition("-")
    words = text[start:end]
    if old_number not in words:
        return []
    edits = [(start, end, words.replace(old_number, new_number, 1))]
    act = re.compile(rf"[\s,]*(?:of the\s+)?({_ACT_WORDS.get(old_act, re.escape(old_act))})")
    found = act.match(text, end)
    if found:
        edits.append((found.start(1), found.end(1), new_act))
    return edits


def renumbering_placebo(sheet: FactSheet, text: str, granularity: str,
                        edges: pd.DataFrame | None) -> Placebo | None:
    """The first cited section with a successor in the 2023 codes renamed as it, in the sheet and
    in the text (its first mention, or every mention of the same words under ``span``)."""
    if edges is None or edges.empty:
        return None
    successors = edges[edges["kind"] == "correspondence"].drop_duplicates("source")
    successor = dict(zip(successors["source"], successors["target"]))
    for i, section in enumerate(sheet.sections_cited):
        new = successor.get(section.section_id)
        if new is None or section.span is None:
            continue
        span = section.span
        starts = [span.start]
        if granularity == "span":
            starts += [m.start() for m in re.finditer(re.escape(span.text), text)
                       if m.start() != span.start]
        edits = [e for a in sorted(starts) for e in renamed(text, a, a + len(span.text),
                                                            section.section_id, new)]
        if not edits:
            continue
        data = sheet.model_dump()
        data["sections_cited"][i].update(section_id=new, extractor="perturbation")
        return Placebo("renumbering", f"Section {section.section_id} renamed {new} (the same "
                       "law in the 2023 code)", apply_edits(text, edits),
                       FactSheet.model_validate(data))
    return None


def placebos(sheet: FactSheet, text: str, granularity: str,
             edges: pd.DataFrame | None = None) -> list[Placebo]:
    """The placebos of a case (``edges``: the adjacency map, for ``renumbering``)."""
    every = granularity == "span"
    found = (date_placebo(sheet, text, every), number_placebo(sheet, text, every),
             role_placebo(sheet, text, every),
             renumbering_placebo(sheet, text, granularity, edges))
    return [p for p in found if p is not None]

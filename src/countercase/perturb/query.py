"""The retrieval query of a tree node, built from its fact sheet in one of two ways.

- ``structured``: the plan's string (party types, sections, numbers, evidence) from the sheet
  alone; the only choice for a sheet given without text;
- ``text``: the case text the sheet was read from, with each perturbed value rewritten in place
  (its span: "aged about 25 years" -> "aged about 17 years", "Section 302 IPC" -> "Section 304
  of the IPC"), a removed evidence item's words taken out, and a sentence added for what has no
  span (a changed party type, an added evidence item).

The perturb stage measures which one retrieves better for the unperturbed queries.
"""

from __future__ import annotations

import re

from countercase.acts import ACTS_BY_CODE
from countercase.factsheet.schema import FactSheet

EVIDENCE_WORDS = {
    "DyingDeclaration": "dying declaration", "Confession": "confession",
    "MedicalReport": "medical report", "PostMortemReport": "post-mortem report",
    "EyeWitness": "eye-witness", "Recovery": "recovery of the weapon", "Document": "document",
    "Expert": "expert opinion", "FIR": "first information report", "LastSeen": "last seen together",
    "Circumstantial": "circumstantial evidence",
    "ExtraJudicialConfession": "extra-judicial confession",
}
_PARTY_WORDS = {"UnionOfIndia": "the Union of India", "ForeignNational": "a foreign national",
                "PublicSector": "a public sector body", "PrivateSector": "a private sector body"}


def section_words(section_id: str) -> str:
    """``IPC-302`` -> "Section 302 of the IPC"; ``Constitution-Article-21`` -> "Article 21 of
    the Constitution"."""
    code, _, rest = section_id.partition("-")
    if rest.startswith("Article-"):
        return f"Article {rest.removeprefix('Article-')} of the Constitution"
    act = ACTS_BY_CODE.get(code)
    return f"Section {rest} of the {act.code if act else code}"


def party_words(party_type: str) -> str:
    if party_type in _PARTY_WORDS:
        return _PARTY_WORDS[party_type]
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", party_type).lower()
    return f"an {words}" if words[0] in "aeiou" else f"a {words}"


def structured_query(sheet: FactSheet) -> str:
    parts = [f"The petitioner is {party_words(sheet.parties.petitioner.type)} and the respondent "
             f"is {party_words(sheet.parties.respondent.type)}."
             if "Unknown" not in (sheet.parties.petitioner.type, sheet.parties.respondent.type)
             else ""]
    if sheet.sections_cited:
        parts.append("The case concerns " + ", ".join(section_words(s.section_id)
                                                       for s in sheet.sections_cited) + ".")
    facts = sheet.numerical_facts
    parts += [f"A person aged {a.years:g} years ({a.descriptor})." for a in facts.ages]
    parts += [f"An amount of Rs. {a.value:,.0f}." for a in facts.amounts]
    parts += [f"A period of {d.value:g} {d.unit}." for d in facts.durations]
    if sheet.evidence_items:
        parts.append("The evidence includes " + ", ".join(
            EVIDENCE_WORDS[e.evidence_type] for e in sheet.evidence_items) + ".")
    return " ".join(p for p in parts if p).strip()


def _rendered(value, old, kind: str) -> str:
    """The span text of ``old`` restating ``value``."""
    span = old.span.text
    if kind == "ages":
        return re.sub(r"\d+(?:\.\d+)?|\b[a-z]+(?= years)", f"{value.years:g}", span, count=1)
    if kind == "amounts":
        return f"Rs. {value.value:,.0f}"
    if kind == "durations":
        return f"{value.value:g} {value.unit}"
    old_act, _, old_number = old.section_id.rpartition("-")
    new_act, _, new_number = value.section_id.rpartition("-")
    if old_act == new_act and old_number in span:  # "under Section 302" -> "under Section 304"
        return span.replace(old_number, new_number, 1)
    return section_words(value.section_id)  # another act: the span restated whole


def text_query(sheet: FactSheet, original: FactSheet, text: str) -> str:
    """``text`` (what ``original`` was read from) rewritten to state ``sheet``'s facts."""
    edits: list[tuple[int, int, str]] = []
    pairs = [("ages", sheet.numerical_facts.ages, original.numerical_facts.ages),
             ("amounts", sheet.numerical_facts.amounts, original.numerical_facts.amounts),
             ("durations", sheet.numerical_facts.durations, original.numerical_facts.durations),
             ("sections", sheet.sections_cited, original.sections_cited)]
    for kind, values, olds in pairs:
        for value, old in zip(values, olds):
            if value.extractor == "perturbation" and old.span is not None:
                edits.append((old.span.start, old.span.end, _rendered(value, old, kind)))
    kept = {e.evidence_type for e in sheet.evidence_items}
    for item in original.evidence_items:
        if item.evidence_type not in kept and item.span is not None:
            edits.append((item.span.start, item.span.end, ""))
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    added = []
    for side in ("petitioner", "respondent"):
        now, before = getattr(sheet.parties, side).type, getattr(original.parties, side).type
        if now != before:
            added.append(f"The {side} is {party_words(now)}.")
    before = {e.evidence_type for e in original.evidence_items}
    added += [f"There is a {EVIDENCE_WORDS[e.evidence_type]}." for e in sheet.evidence_items
              if e.evidence_type not in before]
    return " ".join([out.strip(), *added]).strip()

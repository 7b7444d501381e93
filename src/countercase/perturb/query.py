"""The retrieval query of a tree node, built from its fact sheet in one of two ways.

- ``structured``: the plan's string (party types, sections, numbers, evidence) from the sheet
  alone; the only choice for a sheet given without text;
- ``text``: the case text the sheet was read from, rewritten to state the node's facts, at one
  of two granularities (the plan's first open question):

  - ``field``: the perturbed value's own span only ("aged about 25 years" -> "aged about 17
    years", "Section 302 IPC" -> "Section 304 of the IPC"), a removed evidence item's words
    taken out, and a sentence added for what has no span (a changed party type, an added item);
  - ``span``: every mention of the perturbed fact, consistently: every mention of the same age,
    amount, duration or section; every sentence that mentions a removed kind of evidence; every
    role word of a swapped party (the tagger's PARTY_ROLE words: a type word such as "tenant"
    becomes "licensee", a side word such as "the appellant" is followed by the new type).

The perturb stage measures which construction retrieves better for the unperturbed queries, and
the validity experiment measures both granularities side by side.
"""

from __future__ import annotations

import re

from countercase.legal.acts import ACTS_BY_CODE
from countercase.extract.act_sections import find_sections
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, role_mentions)
from countercase.factsheet.schema import FactSheet

GRANULARITIES = ("field", "span")

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
# the word a type is named by in a text (role_mentions' vocabulary, and the others' plain names)
TYPE_WORDS = {"Tenant": "tenant", "Licensee": "licensee", "Landlord": "landlord", "Minor": "minor",
              "Employee": "employee", "Contractor": "contractor", "Corporation": "company",
              "Partnership": "partnership firm", "ForeignNational": "foreign national",
              "Individual": "individual", "State": "State", "UnionOfIndia": "Union of India",
              "PublicSector": "public sector body", "PrivateSector": "private sector body"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


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


def _sentence_bounds(text: str) -> list[int]:
    return [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]


def _same_mentions(kind: str, old, text: str) -> list[tuple[int, int, str]]:
    """Every mention in ``text`` of the value ``old`` states: (start, end, mention text)."""
    if kind == "ages":
        found = [(a.span.start, a.span.end) for a in find_ages(text) if a.years == old.years]
    elif kind == "amounts":
        found = [(a.span.start, a.span.end) for a in find_amounts(text) if a.value == old.value]
    elif kind == "durations":
        found = [(d.span.start, d.span.end) for d in find_durations(text, find_ages(text))
                 if (d.value, d.unit) == (old.value, old.unit)]
    else:
        found = [(m.start, m.end) for m in find_sections(text) if m.section_id == old.section_id]
    return [(a, b, text[a:b]) for a, b in found]


def party_edits(side: str, old: str, new: str, text: str) -> list[tuple[int, int, str]]:
    """The role words of the swapped party: its type word replaced, its side word qualified."""
    edits = []
    for start, end, where, kind in role_mentions(text):
        words = text[start:end]
        if kind == old and old in TYPE_WORDS:
            pattern = re.compile(re.escape(TYPE_WORDS[old]), re.I)
            edits.append((start, end, pattern.sub(TYPE_WORDS[new], words, count=1)))
        elif where == side and kind is None:
            edits.append((start, end, f"{words} ({party_words(new)})"))
    return edits


def evidence_edits(kind: str, text: str, every: bool) -> list[tuple[int, int, str]]:
    """A removed kind of evidence: its first mention's words (``field``) or every sentence that
    mentions it (``span``)."""
    mentions = [(a, b) for a, b, k in evidence_mentions(text) if k == kind]
    if not every:
        return [(a, b, "") for a, b in mentions[:1]]
    bounds = _sentence_bounds(text)
    sentences = sorted({(max(x for x in bounds if x <= a), min(x for x in bounds if x >= b))
                        for a, b in mentions})
    return [(a, b, "") for a, b in sentences]


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, new) applied; an edit overlapping an earlier one (in text
    order) is dropped."""
    out, position = [], 0
    for start, end, new in sorted(edits):
        if start < position:
            continue
        out += [text[position:start], new]
        position = end
    return "".join(out + [text[position:]])


def text_query(sheet: FactSheet, original: FactSheet, text: str,
               granularity: str = "field") -> str:
    """``text`` (what ``original`` was read from) rewritten to state ``sheet``'s facts."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}: use one of {GRANULARITIES}")
    every = granularity == "span"
    edits: list[tuple[int, int, str]] = []
    pairs = [("ages", sheet.numerical_facts.ages, original.numerical_facts.ages),
             ("amounts", sheet.numerical_facts.amounts, original.numerical_facts.amounts),
             ("durations", sheet.numerical_facts.durations, original.numerical_facts.durations),
             ("sections", sheet.sections_cited, original.sections_cited)]
    for kind, values, olds in pairs:
        for value, old in zip(values, olds):
            if value.extractor != "perturbation" or old.span is None:
                continue
            mentions = _same_mentions(kind, old, text) if every else []
            if not any(a == old.span.start for a, _, _ in mentions):
                mentions.append((old.span.start, old.span.end, old.span.text))
            for start, end, words in mentions:
                span = old.span.model_copy(update={"text": words})
                edits.append((start, end, _rendered(value, old.model_copy(update={"span": span}),
                                                    kind)))
    kept = {e.evidence_type for e in sheet.evidence_items}
    for item in original.evidence_items:
        if item.evidence_type in kept or item.span is None:
            continue
        found = evidence_edits(item.evidence_type, text, every)
        edits += found or [(item.span.start, item.span.end, "")]
    added = []
    for side in ("petitioner", "respondent"):
        now, before = getattr(sheet.parties, side).type, getattr(original.parties, side).type
        if now == before:
            continue
        found = party_edits(side, before, now, text) if every else []
        edits += found
        if not found:
            added.append(f"The {side} is {party_words(now)}.")
    out = apply_edits(text, edits)
    before = {e.evidence_type for e in original.evidence_items}
    added += [f"There is a {EVIDENCE_WORDS[e.evidence_type]}." for e in sheet.evidence_items
              if e.evidence_type not in before]
    return " ".join([out.strip(), *added]).strip()

"""Sentences that carry their trace, and the checker that re-verifies every claim.

An explanation is a list of :class:`Sentence`; each states only what its :class:`Claim` s say, and
each claim names where it can be checked: a field of a precedent's fact sheet or metadata, a span
of a retrieved chunk, a span of a precedent's holding profile, the edge or the diff of a tree node,
the edge's citation-grounded targets. :func:`verify` looks every claim up
again in :class:`Sources` (not in what the explainer computed) and reports what does not hold, so a
template that drifts from its data is caught, not trusted.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from countercase.legal.acts import ACTS_BY_CODE
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import in_days
from countercase.factsheet.values import sheet_values
from countercase.holdings.profile import Profile

# sentences that state only that no reason was traced, so they have nothing to check
CLAIMLESS = ("overall_similarity", "no_traced_reason")
KINDS = ("section", "party", "evidence", "number_side", "term", "count", "change", "member",
         "held", "value", "target", "overlap", "toward", "reason")


@dataclass(frozen=True)
class Claim:
    kind: str  # one of KINDS
    value: Any  # what is claimed: a section id, a party type, a term, a count ...
    source: str  # "query", a doc id, a chunk id, "edge", "diff" or "targets"
    field: str  # where in the source: "sections_cited", "metadata.act_sections", "text" ...
    start: int | None = None  # a term's span in the chunk text, a held value's in the judgment
    end: int | None = None
    holds: bool = True  # False: the claim is that the source does NOT state it


@dataclass(frozen=True)
class Sentence:
    text: str
    template: str
    claims: tuple[Claim, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "template": self.template,
                "claims": [asdict(c) for c in self.claims]}


@dataclass
class Sources:
    """What claims are checked against."""

    sheets: dict[str, FactSheet] = field(default_factory=dict)  # "query", doc ids, node ids
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)  # doc id -> case fields
    chunks: dict[str, str] = field(default_factory=dict)  # chunk id (or "query") -> text
    edge: dict[str, Any] | None = None  # the node's EdgeModel, dumped
    diff: dict[str, Any] | None = None  # the node's DiffModel, dumped
    profiles: dict[str, Profile] = field(default_factory=dict)  # doc id -> holding profile
    targets: dict[str, Any] | None = None  # the edge's appear and drop sets, and their reason


def section_words(section_id: str) -> str:
    """``IPC-302`` -> ``Section 302 IPC``; ``Constitution-Article-21`` -> ``Article 21 of the
    Constitution``."""
    if section_id.startswith("Constitution-Article-"):
        return f"Article {section_id.rsplit('-', 1)[1]} of the Constitution"
    code, _, number = section_id.partition("-")
    act = ACTS_BY_CODE.get(code)
    return f"{act.unit if act else 'Section'} {number} {code}" if number else section_id


UNITS = {"ages": ("an age", "", " years"), "amounts": ("an amount", "Rs ", ""),
         "durations": ("a duration", "", " days")}


def side_words(kind: str, boundary: float, below: bool) -> str:
    """``("ages", 18, True)`` -> ``an age under 18 years``."""
    noun, pre, post = UNITS[kind]
    return f"{noun} {'under' if below else 'of at least'} {pre}{boundary:,.0f}{post}"


def value_words(key: str) -> str:
    """A fact value's key (:mod:`countercase.factsheet.values`) in words: ``section:IPC-302`` ->
    ``Section 302 IPC``, ``boundary:ages<18`` -> ``an age under 18 years``."""
    kind, _, value = key.partition(":")
    if kind == "section":
        return section_words(value)
    if kind == "evidence":
        return f"{value} evidence"
    if kind == "party":
        return f"a {value} party"
    number = re.fullmatch(r"([a-z]+)(>=|<)(.+)", value)
    return side_words(number[1], float(number[3]), number[2] == "<") if number else key


def top_k(diff: dict[str, Any], which: str) -> set[str]:
    """The precedents in the top K before (``parent``) or after (``node``) an edge's change."""
    return set(diff["stable"]) | set(diff["dropped" if which == "parent" else "new"])


def moved(appear: tuple[int, int], drop: tuple[int, int]) -> str:
    """Whether a ranker moved towards an edge's targets, from how many of its appear and drop
    sets the top K held before and after the change."""
    gain = (appear[1] - appear[0]) - (drop[1] - drop[0])
    return "toward" if gain > 0 else "away" if gain < 0 else "neither"


def overlaps(targets: dict[str, Any], diff: dict[str, Any]) -> dict[str, int]:
    """How many of an edge's appear and drop sets the top K held before (``parent``) and after
    (``node``) its change: ``appear:parent``, ``appear:node``, ``drop:parent``, ``drop:node``."""
    return {f"{group}:{which}": len(set(targets[group]) & top_k(diff, which))
            for group in ("appear", "drop") for which in ("parent", "node")}


def _overlaps(sources: Sources) -> dict[str, int]:
    targets, diff = sources.targets or {}, sources.diff or {}
    return overlaps(targets, diff) if diff and "appear" in targets else {}


def numbers_of(sheet: FactSheet, kind: str) -> list[float]:
    facts = sheet.numerical_facts
    if kind == "ages":
        return [a.years for a in facts.ages]
    if kind == "amounts":
        return [a.value for a in facts.amounts]
    return [in_days(d.value, d.unit) for d in facts.durations]


def _holds(claim: Claim, sources: Sources) -> bool:
    sheet = sources.sheets.get(claim.source)
    if claim.kind == "section":
        if claim.field == "metadata.act_sections":
            return claim.value in (sources.metadata.get(claim.source, {}).get("act_sections") or [])
        return sheet is not None and claim.value in {s.section_id for s in sheet.sections_cited}
    if claim.kind == "party":
        side = claim.field.rsplit(".", 1)[-1]
        return sheet is not None and getattr(sheet.parties, side).type == claim.value
    if claim.kind == "evidence":
        return sheet is not None and claim.value in {e.evidence_type for e in sheet.evidence_items}
    if claim.kind == "number_side":
        kind, boundary, below = claim.value
        return sheet is not None and any((v < boundary) == below for v in numbers_of(sheet, kind))
    if claim.kind == "term":
        text = sources.chunks.get(claim.source)
        if text is None:
            return False
        if claim.start is None:  # somewhere in the text, as a word
            return re.search(rf"\b{re.escape(claim.value)}\b", text.lower()) is not None
        return text[claim.start:claim.end].lower() == claim.value
    if claim.kind == "count":
        found = ((sources.targets if claim.source == "targets" else sources.diff) or {}).get(
            claim.field)
        return found is not None and len(found) == claim.value
    if claim.kind == "held":
        kind, value = claim.value
        found = sources.profiles.get(claim.source)
        return found is not None and any(
            (h.kind, h.value, h.role, h.start, h.end) == (kind, value, claim.field, claim.start,
                                                          claim.end) for h in found.held)
    if claim.kind == "value":
        return sheet is not None and claim.value in sheet_values(
            sheet, sources.chunks.get(claim.source, ""))
    if claim.kind == "target":
        return claim.value in ((sources.targets or {}).get(claim.field) or [])
    if claim.kind == "reason":
        return (sources.targets or {}).get(claim.field) == claim.value
    if claim.kind == "overlap":
        return _overlaps(sources).get(claim.field) == claim.value
    if claim.kind == "toward":
        found = _overlaps(sources)
        return bool(found) and moved((found["appear:parent"], found["appear:node"]),
                                     (found["drop:parent"], found["drop:node"])) == claim.value
    if claim.kind == "member":
        return claim.value in ((sources.diff or {}).get(claim.field) or [])
    if claim.kind == "change":
        return sources.edge is not None and sources.edge.get(claim.field) == claim.value
    return False


def verify(sentence: Sentence, sources: Sources) -> list[str]:
    """What in ``sentence`` does not hold (empty: every claim is grounded)."""
    problems = [f"{c.kind} {c.value!r} {'not ' if c.holds else ''}in {c.source}.{c.field}"
                for c in sentence.claims
                if c.kind not in KINDS or _holds(c, sources) != c.holds]
    if not sentence.claims and sentence.template not in CLAIMLESS:
        problems.append("a sentence without a claim")
    return problems

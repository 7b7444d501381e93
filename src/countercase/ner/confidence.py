"""How far to trust each value of a fact sheet, and the sheet as a whole.

A value's sources are the extractors that found it: its own (``rules`` or ``llm``), another
extractor's sheet of the same case holding an equal value (the stage's LLM sheet beside the rule
sheet), and the trained tagger where it applies: a LEGAL_SECTION tag resolved to the same
section id, or a PARTY_ROLE tag on the party's name or with the same side and type.
Each source on its own is worth a prior: rules 0.6 (precise patterns, but blind to context),
the LLM 0.4 (grounded, but a small model), the tagger its softmax score. Agreeing sources are
combined as independent witnesses, ``1 - prod(1 - c)``: rules and the LLM together give 0.76,
rules and a tagger at 0.95 give 0.98. Levels: high >= 0.75, medium >= 0.5, low below.
The overall confidence is the mean over the sheet's values; values set by hand or by a
perturbation are shown as ``given`` and left out, as are an Unknown party and the outcome (read
from the judgment's metadata, not from the facts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from countercase.factsheet.schema import FactSheet
from countercase.ner.entities import EntityTag

PRIORS = {"rules": 0.6, "llm": 0.4}
HIGH, MEDIUM = 0.75, 0.5


@dataclass(frozen=True)
class ValueConfidence:
    field: str
    value: str
    found_by: tuple[str, ...]
    score: float | None  # None for a given value
    level: str  # high, medium, low or given

    def to_dict(self) -> dict:
        return asdict(self)


def level(score: float) -> str:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


def _combine(scores: Iterable[float]) -> float:
    doubt = 1.0
    for s in scores:
        doubt *= 1.0 - s
    return round(1.0 - doubt, 4)


def _values(sheet: FactSheet) -> list[tuple[str, object, object]]:
    """``(field, key, value object)``; equal keys mean the same fact."""
    rows = []
    for side in ("petitioner", "respondent"):
        party = getattr(sheet.parties, side)
        if party.type != "Unknown":
            rows.append((side, party.type, party))
    rows += [("section", s.section_id, s) for s in sheet.sections_cited]
    rows += [("evidence", e.evidence_type, e) for e in sheet.evidence_items]
    facts = sheet.numerical_facts
    rows += [("age", a.years, a) for a in facts.ages]
    rows += [("amount", a.value, a) for a in facts.amounts]
    rows += [("duration", (d.value, d.unit), d) for d in facts.durations]
    return rows


def _shown(field: str, key) -> str:
    if field == "age":
        return f"{key:g} years"
    if field == "amount":
        return f"INR {key:,.0f}"
    if field == "duration":
        return f"{key[0]:g} {key[1]}"
    return str(key)


def _tagger_score(field: str, key, item, tags: list[EntityTag]) -> float | None:
    """The best agreeing tagger score for a section or a party, None when none agrees."""
    scores = []
    for tag in tags:
        if tag.source != "ner" or tag.score is None:
            continue
        if field == "section" and tag.label == "LEGAL_SECTION":
            if key in (tag.value or "").split(","):
                scores.append(tag.score)
        elif field in ("petitioner", "respondent") and tag.label == "PARTY_ROLE":
            span = item.span
            on_name = span is not None and tag.start < span.end and span.start < tag.end
            if on_name or tag.value == f"{field}:{key}":
                scores.append(tag.score)
    return max(scores) if scores else None


def sheet_confidence(sheet: FactSheet, others: Iterable[FactSheet] = (),
                     tags: Iterable[EntityTag] | None = None) -> dict:
    """``{"values": [ValueConfidence...], "overall": {"score", "level", "n"}}``. ``others``:
    sheets of the same case by other extractors; ``tags``: entity tags with offsets into the
    same text as the sheet's spans."""
    tags = list(tags or [])
    other_keys: dict[str, set[tuple[str, object]]] = {}
    for other in others:
        for field, key, item in _values(other):
            other_keys.setdefault(item.extractor, set()).add((field, key))
    values = []
    for field, key, item in _values(sheet):
        if item.extractor in ("manual", "perturbation"):
            values.append(ValueConfidence(field, _shown(field, key), (item.extractor,), None,
                                          "given"))
            continue
        found = {item.extractor: PRIORS[item.extractor]}
        for extractor, keys in other_keys.items():
            if extractor in PRIORS and (field, key) in keys:
                found[extractor] = PRIORS[extractor]
        ner = _tagger_score(field, key, item, tags)
        if ner is not None:
            found["ner"] = ner
        score = _combine(found.values())
        values.append(ValueConfidence(field, _shown(field, key), tuple(sorted(found)), score,
                                      level(score)))
    scored = [v.score for v in values if v.score is not None]
    overall = round(sum(scored) / len(scored), 4) if scored else None
    return {"values": values,
            "overall": {"score": overall, "level": level(overall) if scored else "none",
                        "n": len(scored)}}

"""Span tags on fact sheet text, the candidates the perturbation engine may change:
MONETARY_AMOUNT, AGE, DURATION, LEGAL_SECTION, PARTY_ROLE and EVIDENCE_TYPE.

- LEGAL_SECTION: the trained tagger's PROVISION spans, each resolved to canonical section ids by
  the extract stage's normaliser over the provision and the STATUTE the tagger found after it
  ("Section 302" ... "Indian Penal Code"); normaliser mentions the tagger missed are added with
  source ``rules``;
- PARTY_ROLE: the tagger's PETITIONER and RESPONDENT spans (the parties' names, typed by
  :func:`~countercase.factsheet.rules.party_from_name`) and the role words of the rule lexicon
  ("the appellant, a tenant", "the accused");
- MONETARY_AMOUNT, AGE, DURATION, EVIDENCE_TYPE: the fact sheet rules (rules.py), unchanged.

Without a trained tagger, LEGAL_SECTION and PARTY_ROLE come from the rules alone (a warning
says so). ``agrees`` marks a tagger span the rules also found (and a rule span the tagger also
found): :mod:`countercase.ner.confidence` reads it.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from countercase.extract.act_sections import find_sections
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, party_from_name, role_mentions)
from countercase.ner.tagger import EntitySpan, LegalNerTagger, NerModelError

log = logging.getLogger(__name__)

TAG_LABELS = ("MONETARY_AMOUNT", "AGE", "DURATION", "LEGAL_SECTION", "PARTY_ROLE",
              "EVIDENCE_TYPE")
STATUTE_REACH = 80  # characters after a provision in which its act is looked for


@dataclass(frozen=True)
class EntityTag:
    label: str  # one of TAG_LABELS
    start: int  # character offsets [start, end) into the tagged text
    end: int
    text: str
    source: str  # "ner" or "rules"
    value: str | None = None  # normalised: "IPC-302", "25 years", "INR 5,000", "Tenant", ...
    score: float | None = None  # the tagger's mean softmax probability; None for rules
    agrees: bool | None = None  # found by the other source too (LEGAL_SECTION, PARTY_ROLE)

    def to_dict(self) -> dict:
        return asdict(self)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _tag(text: str, start: int, end: int, label: str, source: str, **extra) -> EntityTag:
    # the amount pattern of rules.py ends after the whitespace before a missing "lakh"/"crore"
    while end > start and text[end - 1].isspace():
        end -= 1
    return EntityTag(label, start, end, text[start:end], source, **extra)


def rule_tags(text: str) -> list[EntityTag]:
    """The four types only rules give: amounts, ages, durations, evidence."""
    ages = find_ages(text)
    tags = [_tag(text, a.span.start, a.span.end, "AGE", "rules", value=f"{a.years:g} years")
            for a in ages]
    tags += [_tag(text, a.span.start, a.span.end, "MONETARY_AMOUNT", "rules",
                  value=f"INR {a.value:,.0f}") for a in find_amounts(text)]
    tags += [_tag(text, d.span.start, d.span.end, "DURATION", "rules", value=f"{d.value:g} {d.unit}")
             for d in find_durations(text, ages)]
    tags += [_tag(text, s, e, "EVIDENCE_TYPE", "rules", value=kind)
             for s, e, kind in evidence_mentions(text)]
    return tags


def _sections(text: str, spans: list[EntitySpan]) -> list[EntityTag]:
    mentions = find_sections(text)
    statutes = [s for s in spans if s.label == "STATUTE"]
    tags, covered = [], []
    for span in (s for s in spans if s.label == "PROVISION"):
        act = next((s for s in statutes if span.end <= s.start <= span.end + STATUTE_REACH), None)
        reach = (span.start, act.end if act else span.end)
        ids = [m.section_id for m in mentions if _overlaps((m.start, m.end), (span.start, span.end))]
        if not ids and act:  # the normaliser missed the pair in context: read it alone
            ids = [m.section_id for m in find_sections(f"{span.text} of {act.text}")]
        covered.append(reach)
        tags.append(_tag(text, span.start, span.end, "LEGAL_SECTION", "ner",
                         value=",".join(dict.fromkeys(ids)) or None, score=span.score,
                         agrees=any(_overlaps((m.start, m.end), reach) for m in mentions)))
    for m in mentions:
        if not any(_overlaps((m.start, m.end), r) for r in covered):
            tags.append(_tag(text, m.start, m.end, "LEGAL_SECTION", "rules", value=m.section_id,
                             agrees=False))
    return tags


def _party_value(side: str | None, kind: str | None, word: str) -> str:
    return ":".join(x for x in (side, kind) if x) or word.lower().rstrip("s")


def _parties(text: str, spans: list[EntitySpan]) -> list[EntityTag]:
    roles = role_mentions(text)
    names = [s for s in spans if s.label in ("PETITIONER", "RESPONDENT")]
    tags = [_tag(text, s.start, s.end, "PARTY_ROLE", "ner",
                 value=f"{s.label.lower()}:{party_from_name(s.text).type}", score=s.score,
                 agrees=any(_overlaps((r[0], r[1]), (s.start, s.end)) for r in roles))
            for s in names]
    for start, end, side, kind in roles:
        if not any(_overlaps((start, end), (s.start, s.end)) for s in names):
            tags.append(_tag(text, start, end, "PARTY_ROLE", "rules",
                             value=_party_value(side, kind, text[start:end]), agrees=False))
    return tags


class EntityTagger:
    """``EntityTagger(model_dir).tag(text)``: the six span types; ``model_dir=None`` or a folder
    without a trained model gives the rules only, with a warning."""

    def __init__(self, model_dir: Path | None = None, threads: int | None = None):
        self.ner: LegalNerTagger | None = None
        if model_dir is not None:
            try:
                self.ner = LegalNerTagger.load(model_dir, threads)
            except NerModelError as error:
                log.warning("%s; LEGAL_SECTION and PARTY_ROLE fall back to the rules "
                            "(the section normaliser and the role lexicon)", error)
        else:
            log.warning("no NER model given; LEGAL_SECTION and PARTY_ROLE fall back to the rules "
                        "(the section normaliser and the role lexicon)")

    def tag(self, text: str) -> list[EntityTag]:
        return self.tag_many([text])[0]

    def tag_many(self, texts: list[str]) -> list[list[EntityTag]]:
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("texts must be strings")
        spans = self.ner.tag_many(texts) if self.ner else [None] * len(texts)
        results = []
        for text, found in zip(texts, spans):
            tags = rule_tags(text)
            if found is None:  # no tagger: nothing to agree or disagree with
                tags += [EntityTag(**{**t.to_dict(), "agrees": None})
                         for t in _sections(text, []) + _parties(text, [])]
            else:
                tags += _sections(text, found) + _parties(text, found)
            results.append(sorted(tags, key=lambda t: (t.start, t.end, t.label)))
        return results

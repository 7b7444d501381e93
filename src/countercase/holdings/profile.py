"""A judgment's holding profile: the facts its Ratio and Held segments turn on, each with its span.

- **provisions**: the sections and articles the judgment cites, with a role: ``decided`` when
  the court applies or construes it, else ``mentioned`` (only those its reasons cite). With a
  :class:`~countercase.holdings.decided.Scorer` (``configs/holdings_choice.yaml``) a provision is
  decided when its learned score reaches the chosen threshold, wherever the judgment cites it;
  without one, by the first rule, kept for comparison: a mention inside a sentence of the
  reasons with a decision cue, or in at least :data:`REPEATED` sentences of them.
- **evidence**: the evidence types the reasons weigh (the rule extractor's vocabulary).
- **parties**: the party types the reasons name as a party's status (the defaults left out).
- **boundaries**: each number of the reasons (age, amount, duration) and the side it lies on of
  every threshold of its kind whose legal domain is the judgment's.

A judgment without a Ratio or Held segment gets an empty profile, counted and named by the
stage; nothing is guessed from the rest of the text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterable

from countercase.extract.act_sections import find_sections
from countercase.extract.segment import segment
from countercase.factsheet.categories import categories as read_categories
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, role_mentions)
from countercase.factsheet.thresholds import in_days, load_thresholds
from countercase.factsheet.values import DEFAULT_TYPES
from countercase.holdings.decided import CUE, REASONS, Scorer, features, sentences

REPEATED = 2  # the first rule: sentences of the reasons citing a provision that make it decided


@dataclass(frozen=True)
class Held:
    """One value of the profile and where the judgment states it."""

    kind: str  # provision | evidence | party | boundary
    value: str  # a canonical section id, an evidence or party type, "ages<18" / "ages>=18"
    role: str  # decided | mentioned (provisions); weighed (evidence); named (parties); side
    start: int  # the first supporting span, character offsets into the judgment's text
    end: int
    quote: str  # the sentence it was read from
    support: int = 1  # how many sentences of the reasons state it
    score: float | None = None  # a provision's learned score of being decided


@dataclass
class Profile:
    doc_id: str
    reasons_chars: int  # characters of Ratio and Held segments (0: an empty profile)
    held: list[Held] = field(default_factory=list)

    def values(self, kind: str, role: str | None = None) -> set[str]:
        return {h.value for h in self.held if h.kind == kind and (role is None or h.role == role)}

    def to_json(self) -> dict:
        return {"doc_id": self.doc_id, "reasons_chars": self.reasons_chars,
                "held": [asdict(h) for h in self.held]}

    @classmethod
    def from_json(cls, row: dict) -> "Profile":
        return cls(row["doc_id"], row["reasons_chars"], [Held(**h) for h in row["held"]])


def _quote(text: str, start: int, end: int, limit: int = 400) -> str:
    quote = " ".join(text[start:end].split())
    return quote if len(quote) <= limit else quote[:limit - 3] + "..."


def _sentence_of(text: str, pos: int) -> tuple[int, int]:
    start = max(text.rfind(". ", 0, pos) + 2, 0)
    end = text.find(". ", pos)
    return start, (len(text) if end < 0 else end + 1)


def profile(doc_id: str, text: str, act_sections: Iterable[str] = (),
            scorer: Scorer | None = None) -> Profile:
    """``doc_id``'s holding profile, read from its full ``text``; ``act_sections``: the
    sections its metadata cites (its legal domains, for the thresholds)."""
    segments = segment(text)
    reasons = [s for s in segments if s.section_type in REASONS]
    found = Profile(doc_id, sum(s.end - s.start for s in reasons))
    if not reasons:
        return found
    domains = set(read_categories(list(act_sections), text))
    thresholds = load_thresholds()
    seen: dict[tuple[str, str], list] = {}  # value -> [start, end, first sentence, sentences, role]

    def note(kind: str, value: str, role: str, start: int, end: int, sent: tuple[int, int]):
        entry = seen.setdefault((kind, value), [start, end, sent, set(), role])
        entry[3].add(sent)
        if role == "decided":
            entry[4] = "decided"

    # read over the whole text, so that "the Act" resolves as the judgment defines it
    mentions = find_sections(text)
    for a, b in sentences(text, reasons):
        piece = text[a:b]
        cue = bool(CUE.search(piece))
        for m in mentions:
            if a <= m.start < b:
                note("provision", m.section_id, "decided" if cue else "mentioned",
                     m.start, m.end, (a, b))
        for s, e, kind in evidence_mentions(piece):
            note("evidence", kind, "weighed", a + s, a + e, (a, b))
        for s, e, _, kind in role_mentions(piece):
            if kind is not None and kind not in DEFAULT_TYPES:
                note("party", kind, "named", a + s, a + e, (a, b))
        ages = find_ages(piece)
        numbers = [("ages", x.years, x.span) for x in ages]
        numbers += [("amounts", x.value, x.span) for x in find_amounts(piece)]
        numbers += [("durations", in_days(x.value, x.unit), x.span)
                    for x in find_durations(piece, ages)]
        for kind, value, span in numbers:
            for t in thresholds[kind]:
                if domains & set(t.categories):
                    side = ">=" if value >= t.value else "<"
                    note("boundary", f"{kind}{side}{t.value:g}", side,
                         a + span.start, a + span.end, (a, b))
    scores = ({sid: scorer.score(v) for sid, v in features(text, segments, mentions).items()}
              if scorer is not None else {})
    for (kind, value), (start, end, sent, sents, role) in seen.items():
        score = None
        if kind == "provision":
            if scorer is not None:
                score = round(scores[value], 4)
                role = "decided" if score >= scorer.threshold else "mentioned"
            elif len(sents) >= REPEATED:
                role = "decided"
        found.held.append(Held(kind, value, role, start, end, _quote(text, *sent), len(sents),
                               score))
    # a provision the scorer finds decided though the reasons never cite it
    for sid, score in scores.items():
        if ("provision", sid) not in seen and score >= scorer.threshold:
            first = next(m for m in mentions if m.section_id == sid)
            found.held.append(Held("provision", sid, "decided", first.start, first.end,
                                   _quote(text, *_sentence_of(text, first.start)), 0,
                                   round(score, 4)))
    found.held.sort(key=lambda h: (h.kind, h.start, h.value))
    return found

"""A judgment's holding profile: the facts its Ratio and Held segments turn on, each with its span.

- **provisions**: every section or article the reasons cite, with a role. ``decided`` when the
  court applies or construes it there: a mention inside a sentence with a decision cue
  (convicted under, punishable under, attracted, ultra vires, falls within, ...), or cited in
  at least :data:`REPEATED` sentences of the reasons; else ``mentioned``. A provision the
  judgment cites only outside its reasons is not in the profile.
- **evidence**: the evidence types the reasons weigh (the rule extractor's vocabulary).
- **parties**: the party types the reasons name as a party's status (the defaults left out).
- **boundaries**: each number of the reasons (age, amount, duration) and the side it lies on of
  every threshold of its kind whose legal domain is the judgment's.

A judgment without a Ratio or Held segment gets an empty profile, counted and named by the
stage; nothing is guessed from the rest of the text.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable

from countercase.extract.act_sections import find_sections
from countercase.extract.segment import Segment, segment
from countercase.factsheet.categories import categories as read_categories
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, role_mentions)
from countercase.factsheet.thresholds import in_days, load_thresholds

REASONS = ("Ratio", "Held")  # the segments that state what the court decided and why
DEFAULT_TYPES = frozenset({"Individual", "Unknown"})
REPEATED = 2  # sentences of the reasons citing a provision that make it decided without a cue
_CUE = re.compile(
    r"\b(?:convict\w*|acquit\w*|guilty|offences?\s+(?:under|punishable)|punishable|"
    r"charged?\s+(?:under|with)|sentenced?|attract\w*|appl(?:y|ies|ied|icable|icability)|"
    r"invok\w*|ultra\s+vires|intra\s+vires|unconstitutional|constitutional\s+validity|"
    r"violat\w*|contraven\w*|infring\w*|struck\s+down|(?:falls?|fell|come|comes|came)\s+"
    r"(?:within|under)|covered\s+by|ingredients?|made\s+out|mandatory|barred|"
    r"(?:benefit|protection)\s+of|entitled\s+(?:to|under)|in\s+terms\s+of|"
    r"(?:we|court)\s+(?:hold|held)|interpret\w*|constru\w*|meaning\s+of|scope\s+of)", re.I)
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[\"'(A-Z0-9])")


@dataclass(frozen=True)
class Held:
    """One value of the profile and where the reasons state it."""

    kind: str  # provision | evidence | party | boundary
    value: str  # a canonical section id, an evidence or party type, "ages<18" / "ages>=18"
    role: str  # decided | mentioned (provisions); weighed (evidence); named (parties); side
    start: int  # the first supporting span, character offsets into the judgment's text
    end: int
    quote: str  # the sentence it was read from
    support: int = 1  # how many sentences of the reasons state it


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


def _sentences(text: str, segments: Iterable[Segment]) -> list[tuple[int, int]]:
    """The reasons' sentences as offsets into ``text``."""
    out = []
    for seg in segments:
        start = seg.start
        for m in _SENTENCE.finditer(text, seg.start, seg.end):
            if m.start() > start:
                out.append((start, m.start()))
            start = m.end()
        if seg.end > start:
            out.append((start, seg.end))
    return out


def _quote(text: str, start: int, end: int, limit: int = 400) -> str:
    quote = " ".join(text[start:end].split())
    return quote if len(quote) <= limit else quote[:limit - 3] + "..."


def profile(doc_id: str, text: str, act_sections: Iterable[str] = ()) -> Profile:
    """``doc_id``'s holding profile, read from its full ``text``; ``act_sections``: the
    sections its metadata cites (its legal domains, for the thresholds)."""
    reasons = [s for s in segment(text) if s.section_type in REASONS]
    found = Profile(doc_id, sum(s.end - s.start for s in reasons))
    if not reasons:
        return found
    domains = set(read_categories(list(act_sections), text))
    thresholds = load_thresholds()
    # value -> [first (start, end), its sentence, sentences, role]
    seen: dict[tuple[str, str], list] = {}

    def note(kind: str, value: str, role: str, start: int, end: int, sent: tuple[int, int]):
        key = (kind, value)
        if key not in seen:
            seen[key] = [start, end, sent, set(), role]
        seen[key][3].add(sent)
        if role == "decided":
            seen[key][4] = "decided"

    # read over the whole text, so that "the Act" resolves as the judgment defines it
    mentions = find_sections(text)
    for a, b in _sentences(text, reasons):
        piece = text[a:b]
        cue = bool(_CUE.search(piece))
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
    for (kind, value), (start, end, sent, sents, role) in seen.items():
        if kind == "provision" and len(sents) >= REPEATED:
            role = "decided"
        found.held.append(Held(kind, value, role, start, end, _quote(text, *sent), len(sents)))
    found.held.sort(key=lambda h: (h.kind, h.start, h.value))
    return found

"""The legal operative label (``docs/preregistration/validity_v2.md``, section 5): an edit of a
case is operative for a cited precedent when the precedent's own Ratio or Held segments
(:func:`countercase.extract.segment.segment`) state the fact it changes.

- section: the same canonical section id is cited there (a renumbering into the 2023 codes
  never: the same law);
- evidence (removed): the same evidence type is mentioned there;
- party: the old party type is named there; ``Individual`` and ``Unknown``, the defaults, never;
- numerical: a number of the same kind is stated there on the same side as the case's old value
  of a threshold the edit crosses, and the threshold's legal domain is the precedent's.

v1's label (:func:`countercase.perturb.operative.label`) read the precedent's whole fact sheet
and its metadata, so that a default party type or any number on a side made an edit operative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from countercase.extract.act_sections import find_sections
from countercase.extract.segment import segment
from countercase.factsheet.categories import categories as read_categories
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, role_mentions)
from countercase.factsheet.thresholds import crosses, in_days, load_thresholds
from countercase.perturb.rules import Perturbation

REASONS = ("Ratio", "Held")  # the segments that state what the court decided and why
NEW_CODES = frozenset({"BNS", "BNSS", "BSA"})  # the 2023 codes: a swap to one renumbers
DEFAULT_TYPES = frozenset({"Individual", "Unknown"})


@dataclass(frozen=True)
class Reasons:
    """What a precedent's Ratio and Held segments state."""

    sections: frozenset[str]
    evidence: frozenset[str]
    parties: frozenset[str]  # party types named, the defaults left out
    numbers: dict[str, tuple[float, ...]]  # ages in years, amounts in rupees, durations in days
    categories: frozenset[str]  # the precedent's legal domains (its acts and text)

    @classmethod
    def of(cls, text: str, act_sections: Iterable[str] = ()) -> "Reasons":
        """Read from the precedent's full ``text``; ``act_sections``: the sections its
        metadata cites (the domains)."""
        reasons = "\n".join(text[s.start:s.end] for s in segment(text)
                            if s.section_type in REASONS)
        ages = find_ages(reasons)
        return cls(frozenset(m.section_id for m in find_sections(reasons)),
                   frozenset(kind for _, _, kind in evidence_mentions(reasons)),
                   frozenset(t for _, _, _, t in role_mentions(reasons)
                             if t is not None and t not in DEFAULT_TYPES),
                   {"ages": tuple(a.years for a in ages),
                    "amounts": tuple(a.value for a in find_amounts(reasons)),
                    "durations": tuple(in_days(d.value, d.unit)
                                       for d in find_durations(reasons, ages))},
                   frozenset(read_categories(list(act_sections), text)))


def _days(kind: str, value) -> float:
    return in_days(*value) if kind == "durations" else float(value)


def operative(p: Perturbation, reasons: Reasons) -> bool:
    """Whether ``p`` changes a fact ``reasons`` (one cited precedent's) state."""
    if p.fact_type == "section":  # a renumbering into the 2023 codes changes no law
        return p.new.split("-")[0] not in NEW_CODES and p.old in reasons.sections
    if p.fact_type == "evidence":
        return p.new is None and p.old in reasons.evidence
    if p.fact_type == "party":
        return p.old not in DEFAULT_TYPES and p.old in reasons.parties
    kind = p.path.split(".")[1]
    old, new = _days(kind, p.old), _days(kind, p.new)
    return any(set(t.categories) & reasons.categories
               and any((v >= t.value) == (old >= t.value) for v in reasons.numbers[kind])
               for t in load_thresholds()[kind] if crosses(old, new, t.value))

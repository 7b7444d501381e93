"""A fact sheet's values as keys one vocabulary names everywhere (the holding profiles, the
citation-grounded targets, the learned ranker's applicability features): ``section:IPC-302``,
``evidence:Recovery``, ``party:Tenant``, ``boundary:ages<18`` (the side of a legal threshold of
the case's domains its number lies on). The default party types are no value."""

from __future__ import annotations

from countercase.factsheet.categories import categories as read_categories
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import in_days, load_thresholds

DEFAULT_TYPES = frozenset({"Individual", "Unknown"})


def boundary(kind: str, value: float, threshold: float) -> str:
    """The key of ``value``'s side of ``threshold`` (a number of ``kind``)."""
    return f"boundary:{kind}{'>=' if value >= threshold else '<'}{threshold:g}"


def sheet_values(sheet: FactSheet, text: str = "") -> frozenset[str]:
    """The values ``sheet`` states; ``text``: the case's, for its domains when the sheet names
    none."""
    keys = {f"section:{s.section_id}" for s in sheet.sections_cited}
    keys |= {f"evidence:{e.evidence_type}" for e in sheet.evidence_items}
    keys |= {f"party:{p.type}" for p in (sheet.parties.petitioner, sheet.parties.respondent)
             if p.type not in DEFAULT_TYPES}
    domains = set(sheet.categories or read_categories(
        [s.section_id for s in sheet.sections_cited], text))
    facts = sheet.numerical_facts
    numbers = ([("ages", a.years) for a in facts.ages]
               + [("amounts", a.value) for a in facts.amounts]
               + [("durations", in_days(d.value, d.unit)) for d in facts.durations])
    thresholds = load_thresholds()
    keys |= {boundary(kind, value, t.value) for kind, value in numbers
             for t in thresholds[kind] if domains & set(t.categories)}
    return frozenset(keys)

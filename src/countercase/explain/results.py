"""Why a precedent was retrieved: the facts its holding turns on that the query case states
(its holding profile, :mod:`countercase.holdings.profile`, quoting the sentence of its reasons),
the legal facts it shares with the query case, then the query terms of highest weight that its
retrieved chunk contains, each with its offsets in the chunk.

Shared facts are read from the precedent's fact sheet and metadata (sections cited, party types,
evidence types, and numbers on the same side of a legal boundary of
:mod:`countercase.factsheet.thresholds`, the one nearest the query's value). When nothing is
shared and no weighted term occurs, the explanation says the case was retrieved for overall
similarity: it never gives a reason it cannot trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from countercase.explain.claims import (Claim, Sentence, numbers_of, section_words, side_words,
                                        value_words)
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import load_thresholds
from countercase.factsheet.values import sheet_values
from countercase.holdings.profile import Profile

TERM = re.compile(r"\b[a-z]{4,}\b")  # whole words: the checker looks for the term as a word
HELD_KEYS = {"provision": "section", "evidence": "evidence", "boundary": "boundary",
             "party": "party"}  # a holding's kinds as fact keys, in the order they are named
QUOTE = 240  # characters of the holding's sentence quoted


def held_facts(values: frozenset[str], doc_id: str, profile: Profile | None,
               n: int = 3) -> Sentence | None:
    """The facts of the case (``values``: its fact keys) that the precedent's holding turns on:
    the provisions its reasons decide, the evidence they weigh, the threshold sides and party
    types they state; the first quoted from its sentence."""
    if profile is None:
        return None
    order = list(HELD_KEYS)
    held = sorted((h for h in profile.held
                   if (h.kind != "provision" or h.role == "decided")
                   and f"{HELD_KEYS[h.kind]}:{h.value}" in values),
                  key=lambda h: (order.index(h.kind), -(h.score or 0), -h.support, h.start))
    # the first of each value, and one side per kind of number (a number lies on a side of
    # every threshold of its kind)
    chosen, seen = [], set()
    for h in held:
        key = re.split("[<>]", h.value)[0] if h.kind == "boundary" else h.value
        if key not in seen:
            seen.add(key)
            chosen.append(h)
    chosen = chosen[:n]
    if not chosen:
        return None
    keys = [f"{HELD_KEYS[h.kind]}:{h.value}" for h in chosen]
    quote = chosen[0].quote
    quote = quote if len(quote) <= QUOTE else quote[:QUOTE - 3] + "..."
    claims = tuple(c for h, key in zip(chosen, keys)
                   for c in (Claim("held", (h.kind, h.value), doc_id, h.role, h.start, h.end),
                             Claim("value", key, "query", "values")))
    words = [value_words(k) for k in keys]
    named = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return Sentence(f"Its holding turns on {named}, as your "
                    f"case does: \u201c{quote}\u201d", "held_facts", claims)


def _sections(query: FactSheet, doc_id: str, precedent: FactSheet | None,
              metadata: dict[str, Any]) -> tuple[list[str], list[Claim]]:
    mine = [s.section_id for s in query.sections_cited]
    theirs_sheet = {s.section_id for s in precedent.sections_cited} if precedent else set()
    theirs_meta = set(metadata.get("act_sections") or [])
    shown, claims = [], []
    for section in dict.fromkeys(mine):
        if section in theirs_sheet or section in theirs_meta:
            field = "sections_cited" if section in theirs_sheet else "metadata.act_sections"
            claims += [Claim("section", section, doc_id, field),
                       Claim("section", section, "query", "sections_cited")]
            shown.append(section_words(section))
    return shown[:3], claims[:6]


def _number_sides(query: FactSheet, doc_id: str,
                  precedent: FactSheet) -> tuple[list[str], list[Claim]]:
    shown, claims = [], []
    for kind, bounds in load_thresholds().items():
        mine, theirs = numbers_of(query, kind), numbers_of(precedent, kind)
        if not mine or not theirs:
            continue
        value = mine[0]
        same = [t.value for t in bounds
                if any((v < t.value) == (value < t.value) for v in theirs)]
        if not same:
            continue
        boundary = min(same, key=lambda b: abs(b - value))
        below = value < boundary
        shown.append(side_words(kind, boundary, below))
        claims += [Claim("number_side", (kind, boundary, below), doc_id, f"numerical_facts.{kind}"),
                   Claim("number_side", (kind, boundary, below), "query",
                         f"numerical_facts.{kind}")]
    return shown, claims


def shared_facts(query: FactSheet, doc_id: str, precedent: FactSheet | None,
                 metadata: dict[str, Any]) -> Sentence | None:
    sections, claims = _sections(query, doc_id, precedent, metadata)
    parts = []
    if sections:
        parts.append(f"it cites {', '.join(sections)}, as your case does")
    if precedent is not None:
        for side in ("petitioner", "respondent"):
            kind = getattr(query.parties, side).type
            if kind != "Unknown" and getattr(precedent.parties, side).type == kind:
                parts.append(f"it also has {'an' if kind[0] in 'AEIOU' else 'a'} {kind} as "
                             f"{side}")
                claims += [Claim("party", kind, doc_id, f"parties.{side}"),
                           Claim("party", kind, "query", f"parties.{side}")]
        evidence = sorted({e.evidence_type for e in query.evidence_items}
                          & {e.evidence_type for e in precedent.evidence_items})
        if evidence:
            parts.append(f"both rely on {', '.join(evidence)} evidence")
            for kind in evidence:
                claims += [Claim("evidence", kind, doc_id, "evidence_items"),
                           Claim("evidence", kind, "query", "evidence_items")]
        sides, more = _number_sides(query, doc_id, precedent)
        if sides:
            parts.append(f"both state {' and '.join(sides)}")
            claims += more
    if not parts:
        return None
    text = "; ".join(parts)
    return Sentence(text[0].upper() + text[1:] + ".", "shared_facts", tuple(claims))


def key_terms(query_text: str, chunk_id: str, chunk_text: str,
              weight: Callable[[str], float | None], n: int = 3) -> Sentence | None:
    """The ``n`` query terms of highest weight (an IDF) that occur in the chunk."""
    scored = []
    for term in dict.fromkeys(TERM.findall(query_text.lower())):
        w = weight(term)
        # offsets in the text as it is (lower-casing can change its length)
        match = re.search(rf"\b{term}\b", chunk_text, re.IGNORECASE) if w else None
        if match:
            scored.append((-w, term, match.start(), match.end()))
    if not scored:
        return None
    top = sorted(scored)[:n]
    claims = tuple(c for _, t, s, e in top
                   for c in (Claim("term", t, chunk_id, "text", s, e),
                             Claim("term", t, "query", "text")))
    quoted = ", ".join(f"'{t}'" for _, t, _, _ in top)
    return Sentence(f"Its text shares the terms {quoted} with your case's facts.", "key_terms",
                    claims)


def explain_result(query: FactSheet, query_text: str, doc_id: str, chunk_id: str,
                   chunk_text: str, precedent: FactSheet | None, metadata: dict[str, Any],
                   weight: Callable[[str], float | None],
                   profile: Profile | None = None,
                   values: frozenset[str] | None = None) -> list[Sentence]:
    """``values``: the query's fact keys, when the caller has them (else read from ``query``)."""
    values = sheet_values(query, query_text) if values is None else values
    found = [s for s in (held_facts(values, doc_id, profile),
                         shared_facts(query, doc_id, precedent, metadata),
                         key_terms(query_text, chunk_id, chunk_text, weight)) if s]
    return found or [Sentence("Retrieved for the overall similarity of its text: no shared "
                              "section, party type, evidence type, legal threshold or weighted "
                              "term is traced.", "overall_similarity")]

"""Query reduction to a case's fact-bearing sentences (a lever of the retrieval-quality work).

A long query (an AILA case, a citing judgment's facts) narrates much that no precedent turns on.
A sentence is *fact-bearing* when the fact sheet's rules find a legal fact in it: an age, an
amount, a duration, a provision cited or an item of evidence (party roles are left out: nearly
every sentence of a narrative names one). ``retrieve.query_reduction`` chooses what the
retrievers are given:

- ``none``: the query as written;
- ``facts``: its fact-bearing sentences alone;
- ``facts_boost``: the whole query with its fact-bearing sentences once more, so their terms
  weigh double in BM25's bag of words (Anserini weights a repeated term by its count).

A query with no fact-bearing sentence is searched as written.
"""

from __future__ import annotations

import re

from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts, find_durations,
                                         find_sections_cited)

MODES = ("none", "facts", "facts_boost")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9(\"'])")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def bears_a_fact(sentence: str) -> bool:
    ages = find_ages(sentence)
    return bool(ages or find_amounts(sentence) or find_durations(sentence, ages)
                or find_sections_cited(sentence) or evidence_mentions(sentence))


def reduce_query(text: str, mode: str) -> str:
    """``text`` as ``mode`` gives it to the retrievers (see the module docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown query reduction {mode!r}: use one of {', '.join(MODES)}")
    if mode == "none":
        return text
    kept = [s for s in sentences(text) if bears_a_fact(s)]
    if not kept:
        return text
    return " ".join(kept) if mode == "facts" else " ".join([text, *kept])

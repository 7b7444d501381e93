"""Canonical section ids of the AILA statutes (written by the index stage, read by the statute
bridge, :mod:`countercase.retrieve.statute_bridge`).

Mapping an AILA statute (a title and a text, no act or number) to canonical section ids, rule
:func:`map_statutes`: the provisions of the statute table (extract stage) whose title equals the
statute's title (lower-cased, punctuation dropped) when exactly one does; otherwise those of
them whose word Jaccard similarity with the statute (title + text, words of 3+ letters) is at
least ``min_jaccard``; plus the single most similar provision when its similarity reaches
``min_jaccard`` (this adds the BNS twin of an IPC section, or finds a retitled provision).
Statutes of acts the table does not hold (Dowry Prohibition, Arbitration, Land Acquisition, ...)
stay unmapped and reachable by the direct ranking only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

_WORD = re.compile(r"[a-z]{3,}")
_NOT_ALNUM = re.compile(r"[^a-z0-9 ]")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(str(text).lower()))


def _title_key(title: str) -> str:
    return " ".join(_NOT_ALNUM.sub("", str(title).lower()).split())


def map_statutes(statutes: Iterable[tuple[str, str, str]], table: pd.DataFrame,
                 min_jaccard: float = 0.5) -> dict[str, list[str]]:
    """``(statute id, title, text)`` -> sorted canonical section ids (see the module rule);
    unmapped statutes are left out."""
    table = table.fillna("")
    provisions = [(row.section_id, _words(f"{row.title} {row.text}"))
                  for row in table.itertuples(index=False)]
    by_title: dict[str, list[str]] = {}
    for row in table.itertuples(index=False):
        by_title.setdefault(_title_key(row.title), []).append(row.section_id)
    mapping: dict[str, list[str]] = {}
    for statute_id, title, text in statutes:
        words = _words(f"{title} {text}")
        similarity = {sid: len(words & other) / len(words | other) if words | other else 0.0
                      for sid, other in provisions}
        titled = by_title.get(_title_key(title), [])
        ids = set(titled) if len(titled) == 1 else {s for s in titled
                                                    if similarity[s] >= min_jaccard}
        best = max(similarity, key=lambda sid: (similarity[sid], sid)) if similarity else None
        if best is not None and similarity[best] >= min_jaccard:
            ids.add(best)
        if ids:
            mapping[statute_id] = sorted(ids)
    return mapping

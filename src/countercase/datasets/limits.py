"""What a search for one query may return, carried with the topics to every system.

A collection whose queries are themselves corpus judgments (the citation collection) must be
searched leave-one-out: a query's own judgment, its near-copies and every judgment decided after
it are never candidates. Cutting them from a run after the search is not the same: the query's
own judgment then fills the chunk candidates before pooling, and later judgments are cut only
after fusion and truncation, so a system would be scored on a shorter, different list than it
would return under the rule. A :class:`Limit` is therefore applied inside each search (a Lucene
filter, a FAISS row selection).

:class:`Topics` is the mapping ``qid -> text`` every system receives; its ``limits`` name each
query's :class:`Limit` (none: the whole corpus). Systems read them with :func:`limit_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limit:
    """Judgments decided no later than ``year_to`` (None: any year), none of ``exclude``."""

    year_to: int | None = None
    exclude: frozenset[str] = field(default_factory=frozenset)

    def admits(self, doc_id: str, year: int | None) -> bool:
        """The same rule on one judgment and its year (an unknown year is never admitted
        under a year bound)."""
        if doc_id in self.exclude:
            return False
        return self.year_to is None or (year is not None and year <= self.year_to)


KINDS = ("description", "judgment")  # what a query is: a case told in prose, a judgment's text


class Topics(dict):
    """``qid -> text``, with each query's :class:`Limit` in ``limits`` and what kind of query
    they are (:data:`KINDS`), which the served system routes by."""

    def __init__(self, texts: Mapping[str, str] = (), limits: Mapping[str, Limit] | None = None,
                 kind: str = "description"):
        super().__init__(texts)
        self.limits: dict[str, Limit] = {q: lim for q, lim in (limits or {}).items() if q in self}
        self.kind = kind

    def subset(self, qids) -> "Topics":
        keep = set(qids)
        return Topics({q: t for q, t in self.items() if q in keep}, self.limits, self.kind)


def limit_of(topics: Mapping[str, str], qid: str) -> Limit | None:
    """The limit of ``qid`` in ``topics`` (None for a plain mapping or an unlimited query)."""
    return getattr(topics, "limits", {}).get(qid)


def merged(*parts: Mapping[str, str]) -> Topics:
    """Several topic mappings as one, their limits kept."""
    texts: dict[str, str] = {}
    limits: dict[str, Limit] = {}
    for part in parts:
        texts.update(part)
        limits.update(getattr(part, "limits", {}))
    return Topics(texts, limits)

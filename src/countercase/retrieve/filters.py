"""One filter object for both indexes (plan section 5, staged filtering).

Indexed fields (year, act sections, bench type, section type, outcome) run inside Lucene and as
FAISS row selections when the filter removes more than ``prefilter_threshold`` of the corpus
(the plan's selectivity rule), otherwise after the search. Fields no index holds (judge, word
count) are always post-filters. Judgments excluded by id (a query's own judgment and its
near-copies, searched leave-one-out) are always removed inside the search: post-filtering them
would leave their chunks among the candidates. Every value is validated up front, so a typo is an error that
names it instead of a filter that silently matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from countercase.datasets.limits import Limit
from countercase.errors import CountercaseError
from countercase.extract.act_sections import parse_section_id
from countercase.index.bm25 import LuceneFilter, MetadataBounds
from countercase.legal.vocab import BENCH_TYPES, OUTCOMES, SECTION_TYPES


class FilterError(CountercaseError, ValueError):
    """A filter value that cannot be right; the message names it."""


def _closed(values, allowed: tuple[str, ...], what: str) -> frozenset[str]:
    by_lower = {v.lower(): v for v in allowed}
    out = set()
    for value in values or ():
        key = str(value).strip().lower()
        if key not in by_lower:
            raise FilterError(f"unknown {what} {value!r}: expected one of {', '.join(allowed)}")
        out.add(by_lower[key])
    return frozenset(out)


@dataclass(frozen=True)
class SearchFilter(MetadataBounds):
    judges: frozenset[str] = field(default_factory=frozenset)  # post-filter: surname match
    max_words: int | None = None  # post-filter on the judgment's length
    exclude_doc_ids: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of_limit(cls, limit) -> "SearchFilter | None":
        """The filter of a dataset's :class:`~countercase.datasets.Limit` (None: no limit)."""
        if limit is None:
            return None
        return cls(year_to=limit.year_to, exclude_doc_ids=frozenset(limit.exclude))

    @property
    def limit(self) -> Limit:
        """Its year bound and exclusions as a dataset's :class:`~countercase.datasets.Limit`
        (what a system that ranks whole queries honours)."""
        return Limit(self.year_to, frozenset(self.exclude_doc_ids))

    def beyond_limit(self) -> list[str]:
        """The fields it sets beyond its :attr:`limit`."""
        return [name for name in self.__dataclass_fields__
                if name not in ("year_to", "exclude_doc_ids") and getattr(self, name)]

    @classmethod
    def build(cls, year_from=None, year_to=None, sections=(), benches=(), section_types=(),
              outcomes=(), judges=(), max_words=None, exclude=()) -> "SearchFilter":
        if year_from is not None and year_to is not None and year_from > year_to:
            raise FilterError(f"inverted year range: {year_from} is after {year_to}")
        try:
            acts = frozenset(parse_section_id(s) for s in sections or ())
        except ValueError as error:
            raise FilterError(str(error)) from None
        if max_words is not None and max_words <= 0:
            raise FilterError(f"max_words must be positive, got {max_words}")
        return cls(year_from, year_to, acts, _closed(benches, BENCH_TYPES, "bench type"),
                   _closed(section_types, SECTION_TYPES, "section type"),
                   _closed(outcomes, OUTCOMES, "outcome"),
                   frozenset(j.strip().lower() for j in judges or () if j.strip()), max_words,
                   frozenset(exclude or ()))

    @property
    def has_indexed(self) -> bool:
        return bool(self.year_from is not None or self.year_to is not None or self.act_sections
                    or self.bench_types or self.section_types or self.outcomes
                    or self.exclude_doc_ids)

    def lucene(self) -> LuceneFilter:
        bounds = {f.name: getattr(self, f.name) for f in fields(MetadataBounds)}
        return LuceneFilter(**bounds, exclude_doc_ids=self.exclude_doc_ids)

    def indexed_mask(self, chunks: pd.DataFrame) -> np.ndarray:
        """Rows of the chunk table that pass the indexed fields (vectorised)."""
        mask = np.ones(len(chunks), dtype=bool)
        year = chunks["year"]
        if self.year_from is not None:
            mask &= (year >= self.year_from).fillna(False).to_numpy()
        if self.year_to is not None:
            mask &= (year <= self.year_to).fillna(False).to_numpy()
        if self.act_sections:
            wanted = self.act_sections
            mask &= chunks["act_sections"].map(lambda ids: bool(wanted.intersection(ids))).to_numpy()
        for column, values in (("bench_type", self.bench_types),
                               ("section_type", self.section_types),
                               ("outcome_label", self.outcomes)):
            if values:
                mask &= chunks[column].isin(values).to_numpy()
        if self.exclude_doc_ids:
            mask &= ~chunks["doc_id"].isin(self.exclude_doc_ids).to_numpy()
        return mask

    def post_ok(self, row: dict) -> bool:
        """The fields no index holds, checked on a hit's metadata."""
        if self.judges:
            surnames = {str(n).split()[-1].lower() for n in row.get("judge_names") or () if str(n).split()}
            if not self.judges & surnames:
                return False
        if self.max_words is not None and (row.get("n_words") or 0) > self.max_words:
            return False
        return True


def lucene_filter(limit) -> LuceneFilter | None:
    """The Lucene filter of a dataset's :class:`~countercase.datasets.Limit` (None: no limit)."""
    if limit is None:
        return None
    return LuceneFilter(year_to=limit.year_to, exclude_doc_ids=limit.exclude)

"""A learned system's search of one query, as its :class:`~countercase.retrieve.ranker.Ranker`
(built by the composer) gives it to ``countercase search``, a tree node and the ``Case`` facade.

A query's text and fact sheet are ranked over their candidate pool
(:mod:`countercase.retrieve.features`) under the search's limit, and each judgment stands with
its best passage, so that the explanations and the explorer can quote it. No fact weight has a
part here: the ranker reads the sheet as features.

A node's citation prior counts the citations of the judgments its limit admits (a corpus case
sees neither itself nor a later judgment), as the ranker's training queries were counted; the
query's year, which ``year_gap`` reads, is the year of the one judgment a leave-one-out search
excludes, the case itself (an AILA query has none: NaN, as in training's unknown years).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

from countercase.datasets.limits import Limit
from countercase.index.query_terms import EmptyQueryError
from countercase.retrieve.features import FeatureSource, Sheet
from countercase.retrieve.filters import FilterError, SearchFilter
from countercase.retrieve.ltr import LearnedRanker, rank_pool
from countercase.retrieve.pipeline import RetrievalResult, Retriever
from countercase.retrieve.ranker import best_passages


class LearnedRetriever:
    """``ranker`` over ``features``' pools, with the hits of ``pipeline``'s chunk table;
    ``links``: the corpus's (citing, cited) judgments, the prior's counts."""

    def __init__(self, pipeline: Retriever, features: FeatureSource, ranker: LearnedRanker,
                 links: Iterable[tuple[str, str]], label: str) -> None:
        self.pipeline, self.features, self.ranker, self.label = pipeline, features, ranker, label
        self.links = tuple(links)
        self.params = pipeline.params  # k, read by callers as the pipeline's
        self._counts: dict[Limit, Counter] = {}

    def counts(self, limit: Limit) -> Counter:
        """How often each judgment is cited by the judgments ``limit`` admits."""
        if limit not in self._counts:
            years = self.features.years
            self._counts[limit] = Counter(cited for citing, cited in self.links
                                          if limit.admits(citing, years.get(citing)))
        return self._counts[limit]

    def ranking(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
             sheet=None) -> list[tuple[str, float]]:
        """The top ``k`` judgments for ``query`` and their scores, without their passages (what
        :meth:`search` returns as hits; its facts: ``sheet``, a
        :class:`~countercase.factsheet.schema.FactSheet`, else the rule sheet of the text)."""
        if not query or not query.strip():
            raise EmptyQueryError("empty query: give the facts of a case to search with")
        filters = filters or SearchFilter()
        asked = filters.beyond_limit()
        if asked:
            raise FilterError(f"the learned system {self.label} searches under a year bound and "
                              f"exclusions only, not {', '.join(asked)}; use --system full")
        limit = filters.limit
        qid = next(iter(limit.exclude)) if len(limit.exclude) == 1 else "query"
        facts = (None if sheet is None or self.features.facts is None
                 else Sheet.of(sheet, self.features.facts.tokens(sheet)))
        frame = self.features.frame(qid, query, limit, self.counts(limit), facts)
        return (rank_pool(frame, self.ranker.scores(frame))[:k or self.params.k]
                if len(frame) else [])

    def search(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
               sheet=None) -> RetrievalResult:
        """The top ``k`` judgments for ``query`` with their passages (:meth:`ranking`)."""
        started = time.perf_counter()
        ranked = self.ranking(query, filters, k, sheet)
        filters = filters or SearchFilter()
        limit = filters.limit
        # each judgment at its best chunk by BM25 for the query (its first when none matches)
        hits = best_passages(self.pipeline, self.features.chunk_bm25, query, ranked, limit,
                             self.label)
        return RetrievalResult(query, hits, hits, bool(limit.exclude or limit.year_to),
                               {"total": (time.perf_counter() - started) * 1000})

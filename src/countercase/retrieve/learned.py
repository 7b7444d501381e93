"""A learned system of the registry as the retriever every tree node searches.

The learned ranker's rule (``configs/ltr_rule.yaml`` ``serving.trees``) sends the trees to
``ltr_unmasked`` when ``ltr`` is served: a node's text and fact sheet are ranked over their
candidate pool (:mod:`countercase.retrieve.features`) under the node's search limit, and each
judgment stands with its best passage, so that the explanations and the explorer can quote it.
The fact weight of the trees' pipeline has no part here: the ranker reads the sheet as features.

A node's citation prior counts the citations of the judgments its limit admits (a corpus case
sees neither itself nor a later judgment), as the ranker's training queries were counted; the
query's year, which ``year_gap`` reads, is the year of the one judgment a leave-one-out search
excludes, the case itself (an AILA query has none: NaN, as in training's unknown years).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from countercase import layout
from countercase.config import ConfigError, Params
from countercase.datasets.limits import Limit
from countercase.index.bm25 import LuceneFilter
from countercase.index.query_terms import EmptyQueryError
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import FeatureSource, Sheet
from countercase.retrieve.filters import FilterError, SearchFilter
from countercase.retrieve.ltr import LearnedRanker, rank_pool
from countercase.retrieve.pipeline import Hit, RetrievalResult, Retriever
from countercase.retrieve.registry import system, trees_searching

# what a learned system's search cannot honour: its features are read under a limit only
_UNSUPPORTED = ("year_from", "act_sections", "bench_types", "section_types", "outcomes",
                "judges", "max_words")


class LearnedRetriever:
    """``ranker`` over ``features``' pools, with the hits of ``pipeline``'s chunk table;
    ``links``: the corpus's (citing, cited) judgments, the prior's counts."""

    def __init__(self, pipeline: Retriever, features: FeatureSource, ranker: LearnedRanker,
                 links: Iterable[tuple[str, str]], label: str) -> None:
        self.pipeline, self.features, self.ranker, self.label = pipeline, features, ranker, label
        self.links = tuple(links)
        self.params = pipeline.params  # k, read by callers as the pipeline's
        self._counts: dict[Limit, Counter] = {}
        self._first: dict[str, int] | None = None

    def with_params(self, params) -> "LearnedRetriever":
        """Itself: the pipeline's switches and fact weight do not reach a learned ranker."""
        return self

    def counts(self, limit: Limit) -> Counter:
        """How often each judgment is cited by the judgments ``limit`` admits."""
        if limit not in self._counts:
            years = self.features.years
            self._counts[limit] = Counter(cited for citing, cited in self.links
                                          if limit.admits(citing, years.get(citing)))
        return self._counts[limit]

    def _first_rows(self) -> dict[str, int]:
        if self._first is None:
            self._first = {}
            for row, doc in enumerate(self.pipeline.chunks["doc_id"]):
                self._first.setdefault(doc, row)
        return self._first

    def rank(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
             sheet=None) -> list[tuple[str, float]]:
        """The top ``k`` judgments for ``query`` and their scores, without their passages (what
        :meth:`search` returns as hits; its facts: ``sheet``, a
        :class:`~countercase.factsheet.schema.FactSheet`, else the rule sheet of the text)."""
        if not query or not query.strip():
            raise EmptyQueryError("empty query: give the facts of a case to search with")
        filters = filters or SearchFilter()
        asked = [name for name in _UNSUPPORTED if getattr(filters, name)]
        if asked:
            raise FilterError(f"the learned system {self.label} searches under a year bound and "
                              f"exclusions only, not {', '.join(asked)}; use --system full")
        limit = Limit(filters.year_to, frozenset(filters.exclude_doc_ids))
        qid = next(iter(limit.exclude)) if len(limit.exclude) == 1 else "query"
        facts = (None if sheet is None or self.features.facts is None
                 else Sheet.of(sheet, self.features.facts.tokens(sheet)))
        frame = self.features.frame(qid, query, limit, self.counts(limit), facts)
        return (rank_pool(frame, self.ranker.scores(frame))[:k or self.params.k]
                if len(frame) else [])

    def search(self, query: str, filters: SearchFilter | None = None, k: int | None = None,
               sheet=None) -> RetrievalResult:
        """The top ``k`` judgments for ``query`` with their passages (:meth:`rank`)."""
        started = time.perf_counter()
        ranked = self.rank(query, filters, k, sheet)
        filters = filters or SearchFilter()
        limit = Limit(filters.year_to, frozenset(filters.exclude_doc_ids))
        hits = self._hits(query, ranked, limit)
        return RetrievalResult(query, hits, hits, bool(limit.exclude or limit.year_to),
                               {"total": (time.perf_counter() - started) * 1000})

    def _hits(self, query: str, ranked: list[tuple[str, float]], limit: Limit) -> list[Hit]:
        """Each judgment of ``ranked`` at its best chunk by BM25 for ``query`` (its first
        chunk when none holds a query term)."""
        docs = [doc for doc, _ in ranked]
        best: dict[str, str] = {}
        if docs:
            only = LuceneFilter(doc_ids=frozenset(docs), exclude_doc_ids=limit.exclude)
            try:
                found = self.features.chunk_bm25.search(query, 20 * len(docs), only)
            except EmptyQueryError:
                found = []
            for chunk, _ in found:
                best.setdefault(self.features.doc_of[chunk], chunk)
        hits = []
        for doc, score in ranked:
            row = (self.pipeline.row_of[best[doc]] if doc in best
                   else self._first_rows().get(doc))
            if row is None:  # a judgment of the features' indexes missing from the chunk table
                continue
            hits.append(self.pipeline._hit(self.pipeline._row(row), len(hits) + 1,
                                             {self.label: score}))
        return hits


def searching(params: Params, name: str | None) -> Params:
    """``params`` with the trees searching the system ``name`` (None: as they are): a learned
    system as ``perturb.learned``, a pipeline as ``perturb.system`` (no learned one)."""
    if name is not None and system(name).level == "ltr":
        if "precedents" not in system(name).tasks:
            raise ConfigError(f"the learned system {name!r} ranks no precedents")
        return trees_searching(params, None).model_copy(update={
            "perturb": params.perturb.model_copy(update={"learned": name})})
    if name is not None:
        params = params.model_copy(update={"perturb": params.perturb.model_copy(
            update={"learned": None})})
    return trees_searching(params, name)


def tree_retriever(params: Params, paths, pipeline: Retriever, root: Path = Path(".")):
    """What every tree node searches: the learned system ``perturb.learned`` over
    ``pipeline``'s chunks, or ``pipeline`` (the trees' pipeline) when none is; ``root``: the
    project the model, the rule, the choices and the citation links are read from."""
    name = params.perturb.learned
    if name is None:
        return pipeline
    from countercase.datasets.citations import read_citations

    spec = system(name)
    if spec.level != "ltr":
        raise ConfigError(f"perturb.learned {name!r} is no learned system (level {spec.level})")
    choices = Choices({file: root / path for file, path in Choices().files.items()})
    ranker = LearnedRanker.load(root / layout.LTR / f"{spec.step['model']}.txt")
    features = FeatureSource.chosen(paths, root / layout.JUDGMENT_SHEETS, choices,
                                    root / layout.LTR_RULE)
    return LearnedRetriever(pipeline, features, ranker,
                            read_citations(root / layout.CITATIONS).links, name)

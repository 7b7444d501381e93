"""Reduce a long query (a whole judgment) to a weighted bag of at most N index terms.

Lucene refuses a query of more than 1,024 clauses (``IndexSearcher.getMaxClauseCount()``), and
a bag-of-words query has one clause per distinct analysed term: a whole Supreme Court judgment has
several thousand. The reduction rule, applied to every query (a no-op for short ones):

1. Analyse the text with the index's own analyzer (Anserini's ``DefaultEnglishAnalyzer``:
   Lucene's standard tokenizer, lower-casing, Lucene's 33-word English stopword list, Porter
   stemming). Stopwords are dropped here, by the same list the index was built with, so a
   dropped word could never have matched anything.
2. Count query-term frequencies ``tf(t)``. No terms at all (``""``, ``"the of and"``, only
   punctuation) raises :class:`EmptyQueryError`.
3. Drop terms absent from the index (``df(t) = 0``): they add nothing to any BM25 score.
4. Score each remaining term by ``tf(t) * idf(t)`` with Lucene's BM25 idf
   ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (``N``: documents with the field), and keep the
   ``max_terms`` highest (default 1,000); ties go to the alphabetically first term.
5. Each kept term keeps its query tf as its weight (a ``BoostQuery`` of that boost in the Lucene
   query), which is exactly how Anserini's bag-of-words query weights repeated terms, so for
   a query under the limit the reduced query *is* Anserini's query and scores are unchanged.

Steps 3-5 are the pure function :func:`reduce_terms` (term weights and document frequencies in,
the top-N out); :class:`QueryReducer` is the glue to a live index (analysis and df look-ups).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from countercase.errors import CountercaseError

DEFAULT_MAX_TERMS = 1000
# Lucene's default IndexSearcher.getMaxClauseCount(); counted over every leaf of a query tree.
LUCENE_MAX_CLAUSES = 1024

_PREVIEW_CHARS = 60
_SAME = object()  # "use the reducer's own max_terms"


class EmptyQueryError(CountercaseError, ValueError):
    """A query with no searchable term after analysis (empty, stopwords or punctuation only)."""

    def __init__(self, query: str) -> None:
        preview = " ".join(query.split())
        if len(preview) > _PREVIEW_CHARS:
            preview = preview[:_PREVIEW_CHARS] + "..."
        super().__init__(f"query has no searchable terms after analysis: {preview!r}")
        self.query = query


def bm25_idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``; always positive."""
    if df < 0 or n_docs < 0:
        raise ValueError(f"df and n_docs must be non-negative, got df={df}, n_docs={n_docs}")
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def term_frequencies(tokens: Iterable[str]) -> dict[str, int]:
    """Query-term frequencies of analysed tokens, in first-occurrence order."""
    return dict(Counter(tokens))


def reduce_terms(
    term_freqs: Mapping[str, int],
    doc_freqs: Mapping[str, int],
    n_docs: int,
    max_terms: int | None = DEFAULT_MAX_TERMS,
) -> list[tuple[str, int]]:
    """Keep the ``max_terms`` terms with the highest ``tf * idf``; the pure step of the rule.

    ``term_freqs`` maps analysed query terms to their query frequency; ``doc_freqs`` gives the
    index's document frequency of each (a missing term counts as ``df = 0``); ``n_docs`` is the
    number of documents with the field. Terms with ``df = 0`` or ``tf <= 0`` are dropped.
    ``max_terms=None`` keeps every term. Returns ``(term, tf)`` pairs, highest ``tf * idf``
    first, ties by term, so the result is deterministic.
    """
    if max_terms is not None and max_terms < 1:
        raise ValueError(f"max_terms must be at least 1 (or None), got {max_terms}")
    scored: list[tuple[float, str, int]] = []
    for term, tf in term_freqs.items():
        df = doc_freqs.get(term, 0)
        if tf <= 0 or df <= 0:
            continue
        scored.append((tf * bm25_idf(df, n_docs), term, tf))
    scored.sort(key=lambda item: (-item[0], item[1]))
    if max_terms is not None:
        scored = scored[:max_terms]
    return [(term, tf) for _, term, tf in scored]


class QueryReducer:
    """Analysis and df look-ups against one index, feeding :func:`reduce_terms`.

    ``analyze`` turns text into analysed tokens (the index's analyzer); ``doc_freq`` gives a
    term's document frequency in the searched field; ``n_docs`` is the field's document count.
    Document frequencies are cached (an index does not change under a reader).
    """

    def __init__(
        self,
        analyze: Callable[[str], list[str]],
        doc_freq: Callable[[str], int],
        n_docs: int,
        max_terms: int | None = DEFAULT_MAX_TERMS,
    ) -> None:
        if max_terms is not None and max_terms < 1:
            raise ValueError(f"max_terms must be at least 1 (or None), got {max_terms}")
        self._analyze = analyze
        self._doc_freq = doc_freq
        self.n_docs = n_docs
        self.max_terms = max_terms
        self._df_cache: dict[str, int] = {}

    def analyze(self, text: str) -> list[str]:
        return self._analyze(text)

    def doc_freqs(self, terms: Iterable[str]) -> dict[str, int]:
        cache = self._df_cache
        out = {}
        for term in terms:
            df = cache.get(term)
            if df is None:
                df = cache[term] = self._doc_freq(term)
            out[term] = df
        return out

    def reduce(self, text: str, max_terms: int | None | object = _SAME) -> list[tuple[str, int]]:
        """The weighted terms of ``text`` under the rule; raises :class:`EmptyQueryError`.

        ``max_terms`` overrides the reducer's own limit for this call (``None``: keep all).
        An empty list means the query has terms but none occurs in the index.
        """
        limit = self.max_terms if max_terms is _SAME else max_terms
        tfs = term_frequencies(self.analyze(text))
        if not tfs:
            raise EmptyQueryError(text)
        return reduce_terms(tfs, self.doc_freqs(tfs), self.n_docs, limit)  # type: ignore[arg-type]

"""A step of the registry's systems: BM25 over the chunks with ``k1``/``b`` (searched once for
every pooling, :class:`ChunkSearches`), the chunk scores of a judgment pooled by ``max`` (the
pipeline's rule), ``sum2``/``sum3`` (the sum of its best two or three passages), ``mean3`` or
``first`` (its first passage's score; judgments whose first passage is not among the hits
follow, by their best one)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from countercase.datasets.limits import limit_of
from countercase.index.bm25 import Bm25Searcher
from countercase.retrieve.filters import lucene_filter
from countercase.retrieve.runs import Run, ranked

POOLS = ("max", "sum2", "sum3", "mean3", "first")


def pool_scores(hits: Iterable[tuple[str, float]], doc_of: Mapping[str, str],
                first_of: Mapping[str, str], pool: str) -> list[str]:
    """Judgments ranked by their chunks' scores pooled by ``pool`` (ties: the judgment whose
    best chunk came first)."""
    if pool not in POOLS:
        raise ValueError(f"unknown pooling {pool!r}: use one of {', '.join(POOLS)}")
    scores: dict[str, list[float]] = defaultdict(list)
    first: dict[str, float] = {}
    for chunk, score in hits:
        doc = doc_of[chunk]
        scores[doc].append(score)
        if first_of.get(doc) == chunk:
            first[doc] = score
    order = {doc: i for i, doc in enumerate(scores)}

    def key(doc: str) -> tuple:
        values = sorted(scores[doc], reverse=True)
        if pool == "first":
            return (doc not in first, -first.get(doc, values[0]), order[doc])
        if pool == "max":
            return (-values[0], order[doc])
        top = values[:int(pool[-1])]
        return (-(sum(top) / (len(top) if pool == "mean3" else 1)), order[doc])
    return sorted(scores, key=key)


class ChunkSearches:
    """BM25 chunk hits over one index, kept for the last ``k1``/``b`` asked: the pooling grid
    pools one search five ways, and the next grid starts from the same ``k1``/``b``."""

    def __init__(self, index: Path, chunk_depth: int) -> None:
        self.index, self.chunk_depth = index, chunk_depth
        self._kept: tuple[tuple[float, float], dict] = ((-1.0, -1.0), {})

    def hits(self, topics: Mapping[str, str], k1: float, b: float,
             label: str = "passages") -> dict[str, list[tuple[str, float]]]:
        if self._kept[0] != (k1, b):
            self._kept = (k1, b), {}
        kept = self._kept[1]
        missing = {qid: text for qid, text in topics.items()
                   if (qid, text, limit_of(topics, qid)) not in kept}
        if missing:
            with Bm25Searcher(self.index, k1=k1, b=b) as searcher:
                for qid, text in tqdm(missing.items(), desc=label, unit="query"):
                    limit = limit_of(topics, qid)
                    kept[qid, text, limit] = searcher.search(text, self.chunk_depth,
                                                             lucene_filter(limit))
        return {qid: kept[qid, text, limit_of(topics, qid)] for qid, text in topics.items()}


def passage_system(index: Path | ChunkSearches, chunks: pd.DataFrame, chunk_depth: int,
                   depth: int, pool: str = "max", k1: float = 0.9, b: float = 0.4,
                   label: str = "passages"):
    """BM25 over the chunk index ``index`` (or the :class:`ChunkSearches` that keeps its
    hits; ``chunks``: its table, ``chunk_id``, ``doc_id``, ``index``), ``chunk_depth`` chunks
    pooled to ``depth`` judgments by ``pool``."""
    doc_of = dict(zip(chunks["chunk_id"], chunks["doc_id"]))
    firsts = chunks.sort_values(["doc_id", "index"]).drop_duplicates("doc_id")
    first_of = dict(zip(firsts["doc_id"], firsts["chunk_id"]))
    searches = index if isinstance(index, ChunkSearches) else ChunkSearches(index, chunk_depth)

    def rank(topics: Mapping[str, str]) -> Run:
        found = searches.hits(topics, k1, b, label)
        return {qid: ranked(pool_scores(found[qid], doc_of, first_of, pool)[:depth])
                for qid in topics}
    return rank

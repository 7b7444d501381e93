"""Training groups for the domain reranker, mined from the corpus's own links (no annotation).

A group is one query text, one positive passage and ``negatives`` negative passages:

- **precedents**: the query is the facts of a citing judgment (the extract stage's first run of
  Facts segments, :func:`countercase.factsheet.rules.facts_region`), cut to ``query_chars``;
  the positive is the chunk of a judgment it cites (:mod:`.citations`) that BM25 ranks first
  for that query among the cited judgment's chunks; the negatives are BM25 hits (and dense
  hits, when the embed stage's vectors exist) of judgments it does not cite, one chunk per
  judgment, taken from ranks ``negative_skip`` onwards (the very top of a ranking of
  uncited judgments holds the most unlabelled relevant ones), and only from judgments decided
  no later than the citing one: a judgment can only cite older ones, so a later negative
  teaches the model to tell dates apart (39 % of the negatives were later ones before this
  rule), a cue that says nothing about relevance to an AILA query.
- **statutes**: the same query (judgments with a resolved precedent citation only) against the text of an AILA statute whose sections the judgment
  cites (the extract stage's normalised ``act_sections`` mapped through the index stage's
  ``statute_sections.json``); negatives are BM25 hits among statutes it does not cite.

The leakage guard (:func:`countercase.datasets.leakage.overlapping_documents`) finds every
corpus document holding half or more of an AILA query's 8-shingles; every group whose query or
passages come from such a document is dropped and the documents are reported.
"""

from __future__ import annotations

import logging
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import pandas as pd
from tqdm import tqdm

from countercase.datasets.leakage import overlapping_documents
from countercase.index.bm25 import LuceneFilter
from countercase.index.encoders import embed

log = logging.getLogger(__name__)


_STOPWORDS = frozenset("the of and to in a that is was be by for on as with it this which or "
                       "not are from at an have has had been were he his their they".split())


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS]


@dataclass(frozen=True)
class Group:
    task: str  # "precedents" or "statutes"
    query_doc: str  # the citing judgment
    query: str
    positive_doc: str  # the cited judgment or statute
    positive: str
    negative_docs: tuple[str, ...]
    negatives: tuple[str, ...]

    def to_dict(self) -> dict:
        return {**asdict(self), "negative_docs": list(self.negative_docs),
                "negatives": list(self.negatives)}


def statutes_cited(act_sections: Iterable[str], statute_sections: dict[str, list[str]]) -> list[str]:
    """AILA statute ids whose canonical section ids the judgment cites."""
    cited = set(act_sections)
    return sorted(s for s, sections in statute_sections.items() if cited & set(sections))


def _one_per_doc(hits: Sequence[tuple[str, float]], doc_of: dict[str, str],
                 skip_docs: set[str]) -> list[tuple[str, str]]:
    """``[(chunk id, doc id)]``: the best chunk of each judgment, in rank order."""
    out, seen = [], set(skip_docs)
    for chunk_id, _ in hits:
        doc = doc_of[chunk_id]
        if doc not in seen:
            seen.add(doc)
            out.append((chunk_id, doc))
    return out


@dataclass
class Miner:
    """Mines groups against one task's chunk table and BM25 index (and dense index, optional)."""

    task: str
    chunks: pd.DataFrame  # chunk_id, doc_id, text
    bm25: object  # countercase.index.bm25.Bm25Searcher
    negatives: int = 3
    negative_skip: int = 2
    search_depth: int = 40
    dense: object | None = None  # DenseIndex
    encoder: object | None = None
    precision: str = "float32"
    year_of: dict[str, int | None] | None = None  # negatives no later than the query's year

    def __post_init__(self) -> None:
        self.text_of = dict(zip(self.chunks["chunk_id"], self.chunks["text"]))
        self.doc_of = dict(zip(self.chunks["chunk_id"], self.chunks["doc_id"]))
        self.chunks_of: dict[str, list[str]] = {}
        for chunk_id, doc in zip(self.chunks["chunk_id"], self.chunks["doc_id"]):
            self.chunks_of.setdefault(doc, []).append(chunk_id)
        self._df: Counter | None = None

    def _positive(self, query: str, doc: str) -> str | None:
        """The cited document's chunk that BM25 (k1 0.9, b 0.4, IDF over this chunk table)
        ranks first for the query; computed here, not in Lucene: a few dozen chunks per
        document, and one Lucene query per positive was most of the mining time."""
        chunk_ids = self.chunks_of.get(doc, [])
        if not chunk_ids:
            return None
        if self._df is None:
            self._df = Counter(w for text in self.chunks["text"] for w in set(_words(text)))
        n, k1, b = len(self.chunks), 0.9, 0.4
        terms = set(_words(query))
        bags = [Counter(_words(self.text_of[c])) for c in chunk_ids]
        mean_len = sum(sum(bag.values()) for bag in bags) / len(bags)
        best, best_score = chunk_ids[0], -1.0
        for chunk_id, bag in zip(chunk_ids, bags):
            length = sum(bag.values())
            score = sum(math.log(1 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5))
                        * bag[t] * (k1 + 1) / (bag[t] + k1 * (1 - b + b * length / mean_len))
                        for t in terms if t in bag)
            if score > best_score:
                best, best_score = chunk_id, score
        return best

    def _in_time(self, chunk_id: str, year_to: int | None) -> bool:
        """The chunk's judgment is of a known year no later than ``year_to`` (None: any)."""
        year = (self.year_of or {}).get(self.doc_of.get(chunk_id))
        return year_to is None or (year is not None and year <= year_to)

    def _negative_pool(self, query: str, exclude: set[str],
                       year_to: int | None = None) -> list[tuple[str, str]]:
        bm25 = self.bm25.search(query, self.search_depth,
                                LuceneFilter(exclude_doc_ids=frozenset(exclude), year_to=year_to))
        pools = [_one_per_doc(bm25, self.doc_of, exclude)[self.negative_skip:]]
        if self.dense is not None:
            vector = embed(self.encoder, [query], show_progress=False, precision=self.precision)[0]
            hits = [(c, s) for c, s in self.dense.search(vector, self.search_depth)
                    if self.doc_of.get(c) not in exclude and self._in_time(c, year_to)]
            pools.append(_one_per_doc(hits, self.doc_of, exclude)[self.negative_skip:])
        # alternate BM25 and dense hits so that both kinds of hard negative are used
        merged, seen = [], set()
        for i in range(max(len(p) for p in pools)):
            for pool in pools:
                if i < len(pool) and pool[i][1] not in seen:
                    seen.add(pool[i][1])
                    merged.append(pool[i])
        return merged

    def groups(self, query_doc: str, query: str, positives: Sequence[str],
               exclude: set[str], rng: random.Random) -> list[Group]:
        """One group per positive document; negatives drawn from the pool of uncited ones."""
        year_to = (self.year_of or {}).get(query_doc)
        pool = self._negative_pool(query, exclude | set(positives) | {query_doc}, year_to)
        if len(pool) < self.negatives:
            return []
        out = []
        for doc in positives:
            chunk = self._positive(query, doc)
            if chunk is None:
                continue
            chosen = rng.sample(pool[:max(self.negatives, 10)], self.negatives)
            out.append(Group(self.task, query_doc, query, doc, self.text_of[chunk],
                             tuple(d for _, d in chosen),
                             tuple(self.text_of[c] for c, _ in chosen)))
        return out


def leaking_documents(queries: dict[str, str], documents: Iterable[tuple[str, str]],
                      threshold: float = 0.5) -> dict[str, list[tuple[str, float]]]:
    """doc id -> [(qid, share)] of every corpus document that holds a query's text."""
    found: dict[str, list[tuple[str, float]]] = {}
    for qid, docs in overlapping_documents(queries, documents, threshold).items():
        for doc, share in docs:
            found.setdefault(doc, []).append((qid, share))
    return dict(sorted(found.items()))


def drop_leaking(groups: list[Group], leaking: set[str]) -> tuple[list[Group], list[Group]]:
    """(kept, dropped): a group is dropped when its query or any passage comes from a leaking
    document."""
    kept, dropped = [], []
    for g in groups:
        docs = {g.query_doc, g.positive_doc, *g.negative_docs}
        (dropped if docs & leaking else kept).append(g)
    return kept, dropped


def split_validation(groups: list[Group], fraction: float, seed: int) -> tuple[list, list]:
    """Held-out groups by citing judgment (no judgment's facts on both sides)."""
    docs = sorted({g.query_doc for g in groups})
    random.Random(seed).shuffle(docs)
    held = set(docs[:int(round(fraction * len(docs)))])
    return [g for g in groups if g.query_doc not in held], [g for g in groups if g.query_doc in held]

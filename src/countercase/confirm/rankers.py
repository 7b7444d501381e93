"""The rankers the confirmatory experiment measures (``docs/preregistration/validity_v2.md``,
section 6), each as a function of a node's text giving the case's cited precedents' ranks or
scores.

- ``bm25`` (primary) and ``dense``: ranks to ``depth`` judgments (absent: ``depth + 1``), chunk
  BM25 pooled by max over ``chunk_hits`` chunk hits, and the packaged encoder's best cosine over
  each judgment's chunks, both under the case's limit (what a search for it may return);
- ``cross_encoder``: the domain reranker's score of each precedent's passage (its chunk that
  BM25 scores highest for the root's text, else its first chunk) against the node's text;
- ``ltr`` and ``ltr_unmasked``: the learned rankers' scores of each precedent, its features
  computed outside the pool too; ``ltr`` reads the text with its statute references masked, as
  its training queries were, both read the sheet their text gives, as in training.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from countercase.datasets.limits import Limit
from countercase.extract.masking import mask_statutes
from countercase.retrieve.features import FeatureSource
from countercase.retrieve.filters import lucene_filter
from countercase.retrieve.ltr import LearnedRanker
from countercase.retrieve.rerank import load_reranker

RANKED = ("bm25", "dense")  # rank displacement
SCORED = ("cross_encoder", "ltr", "ltr_unmasked")  # score change
RANKERS = (*RANKED, *SCORED)


@dataclass
class Rankers:
    """What the measures read, opened once: the features' indexes (chunk BM25, the packaged
    encoder's vectors), the domain reranker, the learned rankers, the passages' texts."""

    features: FeatureSource
    reranker: object  # countercase.retrieve.rerank.load_reranker
    models: Mapping[str, LearnedRanker]  # ltr, ltr_unmasked
    chunk_text: Mapping[str, str]  # chunk id -> text (the cited precedents' chunks)
    first_chunk: Mapping[str, str]  # judgment -> its first chunk
    depth: int
    chunk_hits: int
    _hits: dict = field(default_factory=dict, init=False, repr=False)

    def chunk_hits_of(self, text: str, limit: Limit) -> list[tuple[str, float]]:
        key = (text, limit)
        if key not in self._hits:
            self._hits.clear()  # one node's hits at a time: the root's are kept by the caller
            self._hits[key] = self.features.chunk_bm25.search(text, self.chunk_hits,
                                                              lucene_filter(limit))
        return self._hits[key]

    def bm25(self, text: str, limit: Limit) -> dict[str, int]:
        ranked = list(dict.fromkeys(self.features.doc_of[c]
                                    for c, _ in self.chunk_hits_of(text, limit)))
        return {doc: i + 1 for i, doc in enumerate(ranked[:self.depth])}

    def dense(self, text: str, limit: Limit) -> dict[str, int]:
        best = self.features.cosines(text)
        docs = self.features.doc_ids
        allowed = [i for i, d in enumerate(docs) if limit.admits(d, self.features.years.get(d))]
        order = sorted(allowed, key=lambda i: (-best[i], i))[:self.depth]
        return {docs[i]: rank + 1 for rank, i in enumerate(order)}

    def passages(self, root: str, limit: Limit, precedents: Sequence[str]) -> dict[str, str]:
        """Each precedent's passage: its chunk BM25 scores highest for the root's text."""
        found: dict[str, str] = {}
        for chunk, _ in self.chunk_hits_of(root, limit):
            doc = self.features.doc_of[chunk]
            if doc in precedents and doc not in found:
                found[doc] = chunk
        return {d: found.get(d, self.first_chunk.get(d)) for d in precedents
                if found.get(d, self.first_chunk.get(d)) is not None}

    def cross_encoder(self, text: str, passages: Mapping[str, str]) -> dict[str, float]:
        docs = list(passages)
        scores = self.reranker.score(text, [(passages[d], self.chunk_text[passages[d]])
                                            for d in docs])
        return dict(zip(docs, map(float, scores)))

    def ltr(self, name: str, case_id: str, text: str, limit: Limit,
            counts: Mapping[str, int], precedents: Sequence[str]) -> dict[str, float]:
        read = mask_statutes(text)[0] if name == "ltr" else text
        frame = self.features.frame(case_id, read, limit, counts, extra=tuple(precedents))
        scores = self.models[name].scores(frame)
        by_doc = dict(zip(frame.index, map(float, scores)))
        return {d: by_doc[d] for d in precedents if d in by_doc}


def displacement(root: Mapping[str, float], node: Mapping[str, float], docs: Sequence[str],
                 absent: float | None) -> float | None:
    """The mean over ``docs`` of ``|root - node|``: ranks (``absent``: the rank of a judgment
    missing from a ranking) or scores (``absent`` None: a judgment without both is left out)."""
    moved = [abs(root.get(d, absent) - node.get(d, absent)) for d in docs
             if absent is not None or (d in root and d in node)]
    return float(np.mean(moved)) if moved else None


def open_rankers(features: FeatureSource, params, chunks, ltr_dir, precedents,
                 depth: int, chunk_hits: int) -> Rankers:
    """The rankers over ``features``: the domain reranker (``params.retrieve``), the learned
    rankers whose models ``ltr_dir`` holds, and the passages of ``precedents`` (the chunk
    table ``chunks``)."""
    import pandas as pd

    models = {n: LearnedRanker.load(ltr_dir / f"{n}.txt")
              for n in ("ltr", "ltr_unmasked") if (ltr_dir / f"{n}.txt").is_file()}
    table = pd.read_parquet(chunks, columns=["chunk_id", "doc_id", "text"])
    table = table[table["doc_id"].isin(set(precedents))]
    first = table.drop_duplicates("doc_id")
    return Rankers(features, load_reranker(params.retrieve.rerank_model,
                                           params.retrieve.rerank_backend, params.index.threads),
                   models, dict(zip(table["chunk_id"], table["text"])),
                   dict(zip(first["doc_id"], first["chunk_id"])), depth, chunk_hits)


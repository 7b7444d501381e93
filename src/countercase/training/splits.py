"""Which queries of the citation collection a learned model trains on, and which choose it.

Every model trained on the corpus's citations (the bi-encoder, the domain reranker) uses the same
cut: the held-out half never trains nor chooses (it reports the system); the tuning half is cut
once by a seeded shuffle into *train* and *dev* queries, and a model is chosen on the dev ones.
"""

from __future__ import annotations

import random

from countercase.datasets.citations import Citations
from countercase.datasets.ids import natural_key


def tuning_split(citations: Citations, dev_share: float, seed: int) -> tuple[list[str], list[str]]:
    """(train, dev) queries of the tuning half, each in natural id order: a seeded shuffle, its
    first ``dev_share`` dev."""
    tuning = sorted(citations.qids("tuning"), key=natural_key)
    order = list(tuning)
    random.Random(seed).shuffle(order)
    dev = set(order[:round(len(order) * dev_share)])
    return [q for q in tuning if q not in dev], [q for q in tuning if q in dev]


def held_back(citations: Citations, dev_share: float, seed: int) -> frozenset[str]:
    """Judgments whose facts must not train a model: the held-out and dev queries and their
    copies (a copy holds the same facts)."""
    queries = set(citations.qids("heldout")) | set(tuning_split(citations, dev_share, seed)[1])
    return frozenset(queries.union(*(citations.copies.get(q, ()) for q in queries)))

"""A step of the registry's systems: the learned ranker (stage ``train_ltr``) over a query's
candidate pool (:mod:`countercase.retrieve.features`).

A model file holds its feature names; one that differs from the code's is an error naming both
lists. The pool is ranked by the model's score (ties: the pool's order) and nothing outside it is
returned: a relevant judgment outside the pool cannot be ranked (the rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from tqdm import tqdm

from countercase.datasets.limits import limit_of
from countercase.errors import CountercaseError
from countercase.retrieve.features import FEATURES, GROUPS, FeatureSource, names
from countercase.retrieve.runs import Run, System


class LtrModelError(CountercaseError):
    """A learned ranker's model that cannot be read, or whose features are not the code's."""


class LearnedRanker:
    """A LightGBM model of the ``train_ltr`` stage and the features it reads."""

    def __init__(self, booster) -> None:
        self.booster = booster
        self.features = list(booster.feature_name())

    @classmethod
    def load(cls, path: Path) -> "LearnedRanker":
        import lightgbm

        if not Path(path).is_file():
            raise LtrModelError(f"no learned ranker at {path} (stage train_ltr)")
        try:
            booster = lightgbm.Booster(model_file=str(path))
        except lightgbm.basic.LightGBMError as error:
            raise LtrModelError(f"cannot read the learned ranker {path}: {error}") from None
        ranker = cls(booster)
        # the code's features of the groups the model reads any of (an ablation drops a group)
        kept = {FEATURES[n][0] for n in ranker.features if n in FEATURES}
        expected = names([g for g in GROUPS if g not in kept])
        if ranker.features != expected:
            raise LtrModelError(f"{path}: the model's features {ranker.features} are not the "
                                f"code's {expected} (retrain: dvc repro train_ltr)")
        return ranker

    def scores(self, frame) -> np.ndarray:
        return self.booster.predict(frame[self.features].to_numpy(dtype=float),
                                    num_threads=1)


def rank_pool(frame, scores: np.ndarray) -> list[tuple[str, float]]:
    """The pool (``frame``'s rows, in pool order) by score, ties by pool order."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [(frame.index[i], float(scores[i])) for i in order]


def ltr_system(source: Callable[[], FeatureSource], ranker: LearnedRanker, depth: int,
               counts: Callable[[Mapping[str, str]], Mapping[str, Counter]],
               texts: Callable[[list[str]], Mapping[str, str]] | None = None,
               label: str = "ltr") -> System:
    """``ranker`` over each topic's pool, ``depth`` judgments; ``source``: opens the features
    (once, when first ranking); ``counts``: per topic, how often each judgment is cited by those
    its search may see (the prior feature); ``texts``: qids -> the query text the features read
    instead of the topic's (the unmasked facts; a query it lacks keeps the topic's)."""
    def rank(topics: Mapping[str, str]) -> Run:
        cited = counts(topics)
        other = texts(list(topics)) if texts is not None else {}
        features = source()
        run = {}
        for qid, text in tqdm(topics.items(), desc=label, unit="query"):
            frame = features.frame(qid, other.get(qid, text), limit_of(topics, qid),
                                   cited.get(qid))
            run[qid] = rank_pool(frame, ranker.scores(frame))[:depth] if len(frame) else []
        return run
    return rank

"""LightGBM lambdarank as ``configs/ltr_rule.yaml`` fixes it: every grid point cross-validated
over seeded folds of the training queries with early stopping on the folds' mean MAP@100, the
best point chosen (a tie: the fewer leaves, then the larger leaves), the final model trained on
every training query for the chosen rounds. One thread, deterministic, no bagging: two runs on
the same pairs give the same model."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from countercase.retrieve.ltr import rank_pool
from countercase.retrieve.runs import Run

_CV_KEY = "valid map@100-mean"


@dataclass
class Pairs:
    """Every training query's pool: features (rows indexed by (qid, doc_id), queries in order)
    and labels (1: a judgment the query cites)."""

    frame: pd.DataFrame
    labels: np.ndarray

    @classmethod
    def of(cls, frames: dict[str, pd.DataFrame], qrels: dict[str, dict[str, int]]) -> "Pairs":
        frame = pd.concat(frames, names=["qid", "doc_id"]) if frames else pd.DataFrame()
        labels = np.array([int(qrels.get(q, {}).get(d, 0) > 0) for q, d in frame.index],
                          dtype=int)
        return cls(frame, labels)

    @property
    def qids(self) -> list[str]:
        return list(dict.fromkeys(self.frame.index.get_level_values("qid")))

    def rows(self, qids: list[str]) -> np.ndarray:
        """The row numbers of ``qids``' pairs, in the frame's order."""
        wanted = set(qids)
        return np.flatnonzero([q in wanted for q in self.frame.index.get_level_values("qid")])

    def dataset(self, features: list[str], rows: np.ndarray | None = None):
        import lightgbm

        frame = self.frame if rows is None else self.frame.iloc[rows]
        labels = self.labels if rows is None else self.labels[rows]
        sizes = frame.groupby(level="qid", sort=False).size().to_numpy()
        return lightgbm.Dataset(frame[features].to_numpy(dtype=float), label=labels,
                                group=sizes, feature_name=features, free_raw_data=False,
                                params={"verbosity": -1, "feature_pre_filter": False})


def learner(settings: dict, point: dict[str, Any], seed: int) -> dict[str, Any]:
    """LightGBM's parameters at grid ``point`` (settings: the rule file's)."""
    return {"objective": "lambdarank", "metric": "map", "eval_at": [100],
            "label_gain": [0, 1], "num_threads": 1, "deterministic": True,
            "force_row_wise": True, "seed": seed, "bagging_fraction": 1.0,
            "bagging_freq": 0, "verbosity": -1, **settings["fixed"], **point}


def folds(qids: list[str], k: int, seed: int) -> list[list[str]]:
    """``k`` folds of ``qids`` by a seeded shuffle, each in the queries' order."""
    order = list(qids)
    random.Random(seed).shuffle(order)
    parts = [set(order[i::k]) for i in range(k)]
    return [[q for q in qids if q in part] for part in parts]


def grid_points(settings: dict) -> list[dict[str, Any]]:
    grid = settings["grid"]
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def cross_validate(pairs: Pairs, features: list[str], settings: dict, seed: int
                   ) -> tuple[list[dict], dict[str, Any], int]:
    """Each grid point's cross-validated MAP@100 and rounds; the chosen point and its rounds."""
    import lightgbm

    split = folds(pairs.qids, settings["folds"], seed)
    rows = [(pairs.rows([q for i, f in enumerate(split) if i != j for q in f]),
             pairs.rows(split[j])) for j in range(len(split))]
    data = pairs.dataset(features)
    found = []
    for point in grid_points(settings):
        history = lightgbm.cv(
            learner(settings, point, seed), data, num_boost_round=settings["max_rounds"],
            folds=rows, callbacks=[lightgbm.early_stopping(settings["early_stopping_rounds"],
                                                           verbose=False)])
        found.append({**point, "rounds": len(history[_CV_KEY]),
                      "cv_map": round(float(history[_CV_KEY][-1]), 6)})
    best = max(found, key=lambda r: (r["cv_map"], -r.get("num_leaves", 0),
                                     r.get("min_data_in_leaf", 0)))
    return found, {k: best[k] for k in settings["grid"]}, best["rounds"]


def fit(pairs: Pairs, features: list[str], params: dict[str, Any], rounds: int,
        rows: np.ndarray | None = None):
    import lightgbm

    return lightgbm.train(params, pairs.dataset(features, rows), num_boost_round=rounds)


def out_of_fold(pairs: Pairs, features: list[str], params: dict[str, Any], rounds: int,
                settings: dict, seed: int, share: float = 1.0) -> Run:
    """Each query ranked by the model of the folds that did not hold it, trained on the first
    ``share`` of their queries (a seeded order: the learning curve)."""
    split = folds(pairs.qids, settings["folds"], seed)
    run: Run = {}
    for j, held in enumerate(split):
        training = [q for i, f in enumerate(split) if i != j for q in f]
        random.Random(seed + j).shuffle(training)
        training = training[:max(1, round(len(training) * share))]
        model = fit(pairs, features, params, rounds, pairs.rows(training))
        run.update(ranked(model, pairs, features, held))
    return run


def on_share(pairs: Pairs, features: list[str], params: dict[str, Any], rounds: int,
             seed: int, share: float):
    """A model trained on the first ``share`` of ``pairs``' queries (a seeded order)."""
    qids = list(pairs.qids)
    random.Random(seed).shuffle(qids)
    return fit(pairs, features, params, rounds,
               pairs.rows(qids[:max(1, round(len(qids) * share))]))


def ranked(model, pairs: Pairs, features: list[str], qids: list[str] | None = None) -> Run:
    """Each query of ``pairs`` (or of ``qids``) ranked by ``model``."""
    return {qid: rank_pool(pairs.frame.loc[qid], model.predict(
        pairs.frame.loc[qid][features].to_numpy(dtype=float), num_threads=1))
        for qid in (pairs.qids if qids is None else qids)}


def importance(model, features: list[str]) -> dict[str, float]:
    """Each feature's share of the model's total gain."""
    gain = model.feature_importance(importance_type="gain")
    total = float(gain.sum()) or 1.0
    return {name: round(float(g) / total, 4) for name, g in zip(features, gain)}


def contributions(model, pairs: Pairs, features: list[str]) -> dict[str, float]:
    """Each feature's share of the mean absolute SHAP value over ``pairs`` (LightGBM's
    TreeSHAP, ``pred_contrib``; the last column, the expected value, left out)."""
    shap = model.predict(pairs.frame[features].to_numpy(dtype=float), pred_contrib=True,
                         num_threads=1)[:, :-1]
    mean = np.abs(shap).mean(axis=0)
    total = float(mean.sum()) or 1.0
    return {name: round(float(m) / total, 4) for name, m in zip(features, mean)}

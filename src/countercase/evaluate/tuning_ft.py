"""Stage ``tune_ft``: the fine-tuned encoder's fusion weight, chosen on queries it never
trained on.

The bi-encoder (stage ``train_biencoder``) trained on two thirds of the citation collection's
tuning half. Its scores there are inflated by that training, so the weight is chosen on the
*dev* third alone (``split.json`` of that stage: the queries that chose its checkpoint). The
held-out half and AILA_Q11..Q50 are the evaluate stage's, after the choice.

1. ``grid``: the fine-tuned dense ranking's weight in the configured pipeline (BM25's weight 1,
   everything else as ``params.yaml``'s ``retrieve``), over the tune stage's dense weights, chosen
   by its rule (:data:`~countercase.evaluate.tuning.RULE`). The packaged encoder at the same
   weights is scored beside it, never chosen from.
2. ``tuned``: the tuned system (``configs/tuning_choice.yaml``'s ``tuned_system``, with the
   weights the tune stage chose for its levers) on the configured pipeline and on the pipeline
   with the fine-tuned encoder at the chosen weight.

:data:`RULE_FT` says what the choice makes of it; the choice goes to
``configs/tuning_ft_choice.yaml``, committed before the test is scored.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from countercase import layout
from countercase.config import Params
from countercase.datasets import Dataset
from countercase.experiment import score_run
from countercase.experiment.choice import TIE_MARGIN, best
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.compose import Composer
from countercase.retrieve.registry import candidate_params
from countercase.retrieve.searchers import Searchers
from countercase.retrieve.steps import pipeline_system

log = logging.getLogger(__name__)

RULE_FT = ("the fine-tuned encoder's weight in the configured pipeline: highest MAP on the dev "
           f"third of the citation tuning half; a weight within {TIE_MARGIN} of it that comes "
           "earlier (lower) is taken instead. At a weight above 0 the evaluate stage scores "
           "full_ft (the configured pipeline with it) and tuned_ft (the tuned system on "
           "full_ft); the fine-tuned encoder enters the tuned system only when tuned_ft's dev "
           f"MAP is more than {TIE_MARGIN} above the tuned system's")


def tune_ft(dev: Dataset, params: Params, paths: IndexPaths, ft_dense: Path,
            choices: Choices, links: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The grid and the tuned comparison (module docstring) on the dev queries ``dev``;
    ``ft_dense``: the fine-tuned encoder's embeddings (stage ``embed_ft``); ``choices``: the
    tune stage's (the tuned system); ``links``: the corpus's citations (its prior)."""
    depth, chunk_depth = params.evaluate.depth, params.evaluate.chunk_depth
    base = candidate_params(params.retrieve.without("rerank"), chunk_depth)
    encoders = {"packaged": Searchers("precedents", base, paths),
                "fine_tuned": Searchers("precedents", base, replace(paths, dense_dir=ft_dense))}

    def score(system) -> float:
        return round(float(score_run(system(dev.topics), dev, ["MAP"])["MAP"].mean()), 4)

    def pipeline(encoder: str, weight: float):
        weights = {**base.fusion_weights, "precedents": {"bm25": 1.0, "dense": weight}}
        return pipeline_system(encoders[encoder], base.model_copy(update={
            "fusion_weights": weights}), depth, label=f"{encoder} {weight}")

    rows = []
    for weight in params.tune.dense_weights:
        if weight == 0:  # a dense weight of 0 leaves either encoder unrun: one BM25 run
            found = score(pipeline("packaged", 0.0))
            rows.append({"weight": 0.0, "fine_tuned_MAP": found, "packaged_MAP": found})
            continue
        rows.append({"weight": weight,
                     "fine_tuned_MAP": score(pipeline("fine_tuned", weight)),
                     "packaged_MAP": score(pipeline("packaged", weight))})
    chosen = best(rows, key="fine_tuned_MAP")["weight"]
    tuned_system = choices.get({"choice": "tuning.tuned_system"})
    report: dict[str, Any] = {"dev_queries": len(dev.queries), "grid": rows, "weight": chosen,
                              "tuned_system": tuned_system}
    # the tuned system as the registry composes it, on the configured pipeline and on full_ft
    # at the weight just chosen
    build = Composer("precedents", paths, base, depth, chunk_depth,
                     choices.with_values(tuning_ft__weight=chosen), encoders["packaged"],
                     admits=dev.admits, links=lambda: links,
                     encoders={layout.DENSE_FT: encoders["fine_tuned"]})
    tuned = {"configured": build.system(tuned_system)}
    if chosen > 0:
        tuned["fine_tuned"] = build.system(tuned_system, {"full": "full_ft"})
    report["tuned_MAP"] = {name: score(system) for name, system in tuned.items()}
    log.info("tune_ft: %s", {k: v for k, v in report.items() if k != "grid"})
    return report


def choice_ft(report: dict[str, Any], dev: Dataset) -> dict[str, Any]:
    """What ``configs/tuning_ft_choice.yaml`` records: the weight, whether the tuned system
    takes the encoder, and the rule."""
    maps = report["tuned_MAP"]
    adopt = "fine_tuned" in maps and maps["fine_tuned"] > maps["configured"] + TIE_MARGIN
    return {"rule": RULE_FT, "tuned_on": f"{dev.id} ({len(dev.queries)} queries)",
            "weight": report["weight"], "tuned_system": report["tuned_system"],
            "adopt": bool(adopt),
            "tuned_system_ft": "tuned_ft" if adopt else report["tuned_system"],
            "dev_MAP": {"full_ft": next(r["fine_tuned_MAP"] for r in report["grid"]
                                        if r["weight"] == report["weight"]),
                        report["tuned_system"]: maps["configured"],
                        **({"tuned_ft": maps["fine_tuned"]} if "fine_tuned" in maps else {})}}

"""Stage ``train_ltr``: the learned rankers of the registry, trained by ``configs/ltr_rule.yaml``
on the dev part of the citation collection's tuning half, and the rule's serving choice.

Six models, each by the same rule: ``ltr`` (the masked query) and ``ltr_unmasked`` (the query's
facts as printed, its own citations removed: :mod:`countercase.citations.unmasked`), and the
ablations ``ltr_no_text``, ``ltr_no_citation``, ``ltr_no_facts`` and ``ltr_unmasked_no_facts``
(one feature group left out). Each model's out-of-fold run ranks every dev query by the fold
model that did not train on it; its MAP is measured on the collection's qrels (a relevant
judgment outside the pool counts as missed). The held-out half and the AILA test queries are
never read here.

The stage also makes the serving choice (``configs/serving_rule.yaml``, :mod:`.serving`): every
candidate's average precision per tuning query of each kind, the dev queries (a learned system
out of fold) and AILA_Q1..Q10 (every system as the evaluate stage runs it).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase import layout
from countercase.citations.unmasked import unmasked_queries
from countercase.config import Params
from countercase.datasets import Dataset, load
from countercase.datasets.citations import read_citations
from countercase.evaluate.run import composer, experiment
from countercase.experiment import score_run
from countercase.layout import IndexPaths
from countercase.ltr.train import (Pairs, contributions, cross_validate, fit, importance, learner,
                                   on_share, out_of_fold, ranked)
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import FeatureSource, names, read_settings
from countercase.retrieve.prior import citation_counts
from countercase.retrieve.registry import system as registered
from countercase.training.splits import tuning_split

log = logging.getLogger(__name__)

# system -> (the query it reads, the feature groups it leaves out)
MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ltr": ("masked", ("holdings",)),
    "ltr_unmasked": ("unmasked", ("holdings",)),
    "ltr_no_text": ("masked", ("text", "holdings")),
    "ltr_no_citation": ("masked", ("citation", "holdings")),
    "ltr_no_facts": ("masked", ("facts", "holdings")),
    "ltr_unmasked_no_facts": ("unmasked", ("facts", "holdings")),
    # issue 57: ltr_unmasked with what each candidate's holding turns on
    "ltr_applicability": ("unmasked", ()),
    # issue 58: what any collection supplies (documents only), for one without the others
    "ltr_text": ("unmasked", ("citation", "facts", "holdings")),
}


def _map(run, dataset: Dataset) -> float:
    return round(float(score_run(run, dataset, ["MAP"])["MAP"].mean()), 4)


def pool_frames(source: FeatureSource, dataset: Dataset, texts: dict[str, str],
                counts: dict[str, Counter], label: str) -> dict:
    """qid -> its pool's features (the query text ``texts`` gives)."""
    topics = dataset.topics
    return {qid: source.frame(qid, texts[qid], topics.limits.get(qid), counts.get(qid))
            for qid in tqdm(dataset.qids, desc=f"features ({label})", unit="query")}


def run_train_ltr(params: Params, paths: IndexPaths, citations: Path, sheets: Path,
                  documents: Path, rule: Path, choices: Choices, out: Path,
                  serving: dict[str, Any] | None = None,
                  aila: Path = layout.AILA) -> dict[str, Any]:
    """Train, measure and save every model of :data:`MODELS` under ``out``; the report
    (``metrics/ltr.json``) with the choice the rule makes (``configs/ltr_choice.yaml``) and,
    given the ``serving`` rule, the per-query tuning scores it decides on (``scores``, popped
    by the caller)."""
    started = time.perf_counter()
    settings = read_settings(rule)
    collection = read_citations(citations)
    _, dev = tuning_split(collection, params.biencoder.dev_share, params.seed)
    dataset = load("citations/tuning", citations).subset(dev, "dev")
    # the case descriptions of AILA_Q1..Q10, where each model's SHAP shares are read again
    # (issue 58: does the citation prior dominate a query unlike the ones it learnt from?)
    aila_tuning = load("aila2019/task1/tuning", aila)
    counted, pairs, described = _pairs(params, paths, collection, dataset, aila_tuning, sheets,
                                       documents, choices, rule)
    report: dict[str, Any] = {"dev_queries": len(dev), **counted, "models": {}}
    out.mkdir(parents=True, exist_ok=True)
    dev_ap = _models(report, pairs, described, dataset, settings, params.seed, out)
    _learning_curves(report, pairs["masked"], described, dataset, aila_tuning, settings,
                     params.seed)
    served = params.retrieve.system
    build = composer("precedents", paths, params.retrieve, params.evaluate, choices,
                     admits=dataset.admits, citations=citations)
    report["served"] = {"system": served, "MAP": _map(build.system(served)(dataset.topics),
                                                      dataset)}
    if serving is not None:
        for name in serving["candidates"]:
            if name not in dev_ap:  # a system that learns nothing here ranks the dev queries
                dev_ap[name] = score_run(build.system(name)(dataset.topics), dataset,
                                         ["MAP"])["MAP"]
        report["scores"] = {"judgment": dev_ap,
                            "description": description_scores(params, paths, serving, citations,
                                                              choices, aila)}
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def _pairs(params: Params, paths: IndexPaths, collection, dataset, aila_tuning, sheets: Path,
           documents: Path, choices: Choices, rule: Path) -> tuple[dict[str, Any], dict, Pairs]:
    """The pools' counts for the report, the dev queries' candidate pools as features per kind
    of query (masked, unmasked) and the AILA descriptions' pools."""
    unmasked = unmasked_queries(dataset.qids, documents, paths.chunks.parent,
                                params.citations.query_chars)
    # a query whose judgment's text is not among the documents keeps its masked facts
    texts = {"masked": dict(dataset.queries),
             "unmasked": {q: unmasked.get(q, text) for q, text in dataset.queries.items()}}
    counts = citation_counts(collection.links, dataset.qids, dataset.admits)
    source = FeatureSource.chosen(paths, sheets, choices, rule)
    try:
        pairs = {kind: Pairs.of(pool_frames(source, dataset, texts[kind], counts, kind),
                                dataset.qrels) for kind in texts}
        described = Pairs.of(pool_frames(
            source, aila_tuning, dict(aila_tuning.queries),
            citation_counts(collection.links, aila_tuning.qids, aila_tuning.admits),
            "descriptions"), aila_tuning.qrels)
    finally:
        source.close()
    relevant = sum(grade > 0 for judged in dataset.qrels.values() for grade in judged.values())
    counted = {
        "features": names(),
        "pairs": {k: len(p.labels) for k, p in pairs.items()},
        "pool_recall": {k: round(float(p.labels.sum()) / max(relevant, 1), 4)
                        for k, p in pairs.items()},
        "pairs_without_a_candidate_sheet": sum(
            doc not in source.sheets for _, doc in pairs["masked"].frame.index),
        "queries_unmasked": len(unmasked)}
    return counted, pairs, described


def _models(report: dict[str, Any], pairs: dict, described: Pairs, dataset,
            settings: dict[str, Any], seed: int, out: Path) -> dict[str, pd.Series]:
    """Each model of :data:`MODELS` chosen by cross-validation, trained, saved under ``out``
    and measured into ``report["models"]``; its out-of-fold AP per dev query."""
    dev_ap: dict[str, pd.Series] = {}
    for name, (kind, drop) in MODELS.items():
        features = names(drop)
        grid, point, rounds = cross_validate(pairs[kind], features, settings, seed)
        lgb_params = learner(settings, point, seed)
        model = fit(pairs[kind], features, lgb_params, rounds)
        model.save_model(str(out / f"{name}.txt"))
        oof = out_of_fold(pairs[kind], features, lgb_params, rounds, settings, seed)
        dev_ap[name] = score_run(oof, dataset, ["MAP"])["MAP"]
        report["models"][name] = {"query": kind, "drops": list(drop), "grid": grid,
                                  "chosen": point, "rounds": rounds,
                                  "out_of_fold_MAP": _map(oof, dataset),
                                  "importance_gain": importance(model, features),
                                  "importance_shap": contributions(model, pairs[kind],
                                                                   features),
                                  "importance_shap_descriptions": contributions(
                                      model, described, features)}
        log.info("train_ltr: %s out-of-fold MAP %s", name,
                 report["models"][name]["out_of_fold_MAP"])
    return dev_ap


def _learning_curves(report: dict[str, Any], masked: Pairs, described: Pairs, dataset,
                     aila_tuning, settings: dict[str, Any], seed: int) -> None:
    """The learning curve of ltr per kind of query (issue 58): out of fold on the dev queries
    (a judgment's text), and on the case descriptions of AILA_Q1..Q10 by the model trained on
    the same share of the dev queries."""
    ltr = report["models"]["ltr"]
    features, lgb_params = names(MODELS["ltr"][1]), learner(settings, ltr["chosen"], seed)
    report["learning_curve"], report["learning_curve_descriptions"] = [], []
    for share in settings["learning_curve"]:
        report["learning_curve"].append({"share": share, "out_of_fold_MAP": _map(out_of_fold(
            masked, features, lgb_params, ltr["rounds"], settings, seed, share), dataset)})
        model = on_share(masked, features, lgb_params, ltr["rounds"], seed, share)
        report["learning_curve_descriptions"].append(
            {"share": share, "MAP": _map(ranked(model, described, features), aila_tuning)})


def description_scores(params: Params, paths: IndexPaths, serving: dict[str, Any],
                       citations: Path, choices: Choices, aila: Path) -> dict[str, pd.Series]:
    """Every candidate's average precision per AILA tuning query (AILA_Q1..Q10), each system
    run as the evaluate stage runs it (the learned ones by the models just trained, which the
    stage writes where the registry reads them)."""
    tuning = load("aila2019/task1/tuning", aila)
    specs = [registered(name) for name in serving["candidates"]]
    result, _, _, _ = experiment(tuning, specs, paths, params.retrieve, params.evaluate, None,
                                 choices=choices, citations=citations)
    return {name: table["MAP"] for name, table in result.per_query.items()}


def choice(report: dict[str, Any], settings: dict) -> dict[str, Any]:
    """What ``configs/ltr_choice.yaml`` records: each model's chosen point and rounds, and
    whether the rule serves ``ltr``."""
    ltr, served = report["models"]["ltr"]["out_of_fold_MAP"], report["served"]["MAP"]
    serve = ltr >= served + settings["serve_margin"]
    return {"rule": (f"serve ltr if its out-of-fold MAP on the dev queries beats the served "
                     f"system's on the same queries by at least {settings['serve_margin']} "
                     "(configs/ltr_rule.yaml)"),
            "tuned_on": f"citations/tuning/dev ({report['dev_queries']} queries)",
            "serve": bool(serve),
            "dev_MAP": {"ltr_out_of_fold": ltr, report["served"]["system"]: served},
            "models": {name: {"chosen": m["chosen"], "rounds": m["rounds"]}
                       for name, m in report["models"].items()}}

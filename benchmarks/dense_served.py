"""Does dense retrieval earn its place in the served path? ``ltr_applicability`` against its twin
without dense (no ``dense_max``; its pool from the chunk BM25 and judgment BM25 top 100s alone),
both trained by configs/ltr_rule.yaml and scored out of fold on the citation collection's dev
queries, by the rule of configs/dense_rule.yaml (committed before this ran).

``python benchmarks/dense_served.py --out metrics/dense_served.json`` after stage train_ltr.
The twin with dense is ``ltr_applicability`` itself, rebuilt here: its out-of-fold MAP must be
the stage's (metrics/ltr.json), which the report checks.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import yaml

from countercase import layout
from countercase.citations.unmasked import unmasked_queries
from countercase.config import load_params
from countercase.datasets import load
from countercase.datasets.citations import read_citations
from countercase.experiment import score_run
from countercase.ltr.run import MODELS, pool_frames
from countercase.ltr.serving import lower_bound
from countercase.ltr.train import Pairs, cross_validate, learner, out_of_fold
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import POOL_SOURCES, FeatureSource, names, read_settings
from countercase.retrieve.load import IndexPaths
from countercase.retrieve.prior import citation_counts
from countercase.training.splits import tuning_split

log = logging.getLogger(__name__)
SERVED = "ltr_applicability"


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=layout.metrics("dense_served"))
    args = parser.parse_args(argv)
    params, paths, seed = load_params(), IndexPaths(), load_params().seed
    rule = yaml.safe_load(Path("configs/serving_rule.yaml").read_text())["settings"]
    settings = read_settings(layout.LTR_RULE)
    collection = read_citations(layout.CITATIONS)
    _, dev = tuning_split(collection, params.biencoder.dev_share, seed)
    dataset = load("citations/tuning", layout.CITATIONS).subset(dev, "dev")
    unmasked = unmasked_queries(dataset.qids, layout.DOCUMENTS, paths.chunks.parent,
                                params.citations.query_chars)
    texts = {q: unmasked.get(q, text) for q, text in dataset.queries.items()}
    counts = citation_counts(collection.links, dataset.qids, dataset.admits)
    relevant = sum(g > 0 for judged in dataset.qrels.values() for g in judged.values())
    kind, drop = MODELS[SERVED]
    twins = {"with_dense": (POOL_SOURCES, names(drop)),
             "without_dense": (tuple(s for s in POOL_SOURCES if s != "dense"),
                               [n for n in names(drop) if n != "dense_max"])}
    found, ap = {}, {}
    for label, (sources, features) in twins.items():
        source = FeatureSource.chosen(paths, layout.JUDGMENT_SHEETS, Choices(), layout.LTR_RULE,
                                      sources)
        try:
            pairs = Pairs.of(pool_frames(source, dataset, texts, counts, label), dataset.qrels)
        finally:
            source.close()
        _, point, rounds = cross_validate(pairs, features, settings, seed)
        run = out_of_fold(pairs, features, learner(settings, point, seed), rounds, settings,
                          seed)
        ap[label] = score_run(run, dataset, ["MAP"])["MAP"].reindex(list(dataset.qids)).fillna(0)
        found[label] = {"pool": list(sources), "features": len(features),
                        "chosen": point, "rounds": rounds, "pairs": len(pairs.labels),
                        "pool_recall": round(float(pairs.labels.sum()) / max(relevant, 1), 4),
                        "out_of_fold_MAP": round(float(ap[label].mean()), 4)}
        log.info("%s: out-of-fold MAP %.4f", label, ap[label].mean())
    diff = (ap["with_dense"] - ap["without_dense"]).to_numpy(dtype=float)
    bound = lower_bound(diff, rule["resamples"], seed, rule["quantile"])
    stage = json.loads(layout.metrics("ltr").read_text())["models"][SERVED]["out_of_fold_MAP"]
    report = {"rule": "configs/dense_rule.yaml", "system": SERVED, "dataset": dataset.id,
              "queries": len(dataset.qids), "twins": found,
              "mean_AP_difference": round(float(diff.mean()), 4),
              "lower_bound": round(bound, 4), "dense_earns_its_place": bool(bound > 0),
              "with_dense_reproduces_the_stage": found["with_dense"]["out_of_fold_MAP"] == stage}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""The leakage audit of AILA's statute task (stage ``leakage``, issue 45).

AILA drew a query's relevant precedents and its relevant statutes from one citing judgment, and
the statute bridge ranks the statutes cited by the judgments a query's search finds: a corpus
judgment that holds the query's text hands over the query's own statutes. The evaluate stage
keeps from the bridge every judgment holding half of a query's word 8-shingles
(:mod:`countercase.datasets.leakage`); here the statute systems of ``leakage.systems`` are
scored again with that bar lowered to each of ``leakage.thresholds``, and with the queries
that have a judgment above the evaluate stage's bar left out. Each MAP is paired with the
evaluate stage's own (the threshold 0.5) by a randomisation test on average precision.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.config import Params
from countercase.datasets import load
from countercase.datasets.leakage import overlapping_documents
from countercase.evaluate.run import composer, open_searchers, runnable
from countercase.experiment import Experiment
from countercase.experiment.families import randomisation
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.registry import CORPUS_SUPPLIES, system

log = logging.getLogger(__name__)

STAGE_BAR = 0.5  # the evaluate stage's (Searchers.corpus_copies)

Shares = dict[str, list[tuple[str, float]]]  # qid -> [(judgment, share of its 8-shingles)]


def kept_out(shares: Shares, bar: float) -> dict[str, list[str]]:
    """qid -> the judgments holding at least ``bar`` of its shingles (queries with none left
    out): what the statute bridge may not read at that bar."""
    found = {q: [d for d, share in docs if share >= bar] for q, docs in shares.items()}
    return {q: docs for q, docs in found.items() if docs}


def copy_queries(shares: Shares, bar: float = STAGE_BAR) -> list[str]:
    """The queries with a near-copy at ``bar``, sorted."""
    return sorted(kept_out(shares, bar))


def audit(params: Params, paths: IndexPaths, aila_dir: Path, citations: Path,
          choices: Choices) -> dict[str, Any]:
    """The statute systems' MAP on AILA_Q11..Q50 at each threshold and without the copy
    queries, the judgments each threshold keeps from the bridge, and the drop."""
    dataset = load("aila2019/task2/test", aila_dir)
    thresholds = sorted({*params.leakage.thresholds, STAGE_BAR, params.leakage.headline},
                        reverse=True)
    conditions, base = runnable([system(n) for n in params.leakage.systems], "statutes",
                                params.retrieve, None, choices, CORPUS_SUPPLIES,
                                paths.fact_index)
    searchers = open_searchers(conditions, "statutes", base, paths)
    chunks = searchers.precedents.chunks
    shares = overlapping_documents(dataset.queries, zip(chunks["doc_id"], chunks["text"]),
                                   min(thresholds))
    tables: dict[float, dict[str, pd.DataFrame]] = {}
    out: dict[str, Any] = {"queries": len(dataset.queries), "thresholds": {}}
    for bar in thresholds:
        exclude = kept_out(shares, bar)
        build = composer("statutes", paths, base, params.evaluate, choices, searchers, exclude,
                         None, dataset.admits, citations)
        result = Experiment({c.name: build.system(c.name) for c in conditions}, dataset,
                            measures=["MAP"])
        tables[bar] = result.per_query
        out["thresholds"][str(bar)] = {
            "judgments_kept_out": sum(len(d) for d in exclude.values()),
            "queries_affected": len(exclude),
            "MAP": {name: round(float(t["MAP"].mean()), 4)
                    for name, t in result.per_query.items()}}
        log.info("threshold %s: %s", bar, out["thresholds"][str(bar)])
    stage = tables[STAGE_BAR]
    for bar in thresholds:
        found = out["thresholds"][str(bar)]
        found["p_vs_stage"] = {name: round(randomisation(t["MAP"].to_numpy(float),
                                                         stage[name]["MAP"].to_numpy(float),
                                                         params.seed), 4)
                               for name, t in tables[bar].items()}
    copies = copy_queries(shares)
    kept = [q for q in dataset.qids if q not in copies]
    out["without_copy_queries"] = {
        "queries_left_out": copies, "n_queries": len(kept),
        "MAP": {name: round(float(t.loc[kept, "MAP"].mean()), 4) for name, t in stage.items()}}
    bar = str(params.leakage.headline)
    out["largest_overlap"] = {q: list(found[0]) for q, found in shares.items()}
    out["drop"] = {"threshold": params.leakage.headline, "MAP": {
        name: round(out["thresholds"][str(STAGE_BAR)]["MAP"][name]
                    - out["thresholds"][bar]["MAP"][name], 4) for name in stage}}
    return out


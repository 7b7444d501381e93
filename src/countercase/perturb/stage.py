"""Stage ``perturb``: the trees' fact weight chosen on the tuning cases, the validity rows of
the corpus query cases and the gold cases, a perturbation tree for every AILA query and for the
first validity cases, and the summary ``metrics/counterfactual.json`` reports (with the legal
audit, the confirmatory summaries and the holding profiles' accuracy, where they exist)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from countercase import layout
from countercase.config import Params, write_choice
from countercase.datasets.aila import read_queries
from countercase.errors import CountercaseError
from countercase.layout import IndexPaths
from countercase.perturb.audit import (CRITERIA_ENGINE, ENGINES, audit_results, criteria_results,
                                       read_audit_labels, read_criteria_labels)
from countercase.perturb.cases import ValidityInputs, load_cases
from countercase.perturb.run import (case_search, choose_tree_weight, corpus_trees, run_perturb,
                                     validity_rows, validity_rows_apart, validity_summary)
from countercase.retrieve.load import open_retriever
from countercase.retrieve.registry import tree_params
from countercase.retrieve.trees import tree_ranker
from countercase.runtime.processes import Apart


class SummaryFileError(CountercaseError, ValueError):
    """A summary or pool file the stage reports is not JSON; the message names it."""


@dataclass(frozen=True)
class PerturbInputs:
    """What the stage reads (checked by its command) and where it writes the trees and the
    trees' choice; the summaries of the confirmatory stages and of the holdings stage are
    reported where given."""

    queries: Path
    edges: Path
    out: Path
    paths: IndexPaths
    documents: Path
    sheets: Path
    metadata: Path
    groups: Path
    gold: Path
    choice: Path
    confirmatory: Path | None = None
    holdings: Path | None = None


def run_stage(params: Params, inputs: PerturbInputs) -> dict[str, Any]:
    """The stage's report: ``summary`` (metrics/counterfactual.json) and ``timing``."""
    sets = load_cases(params, ValidityInputs(inputs.documents, inputs.sheets, inputs.metadata,
                                             inputs.groups, inputs.gold))
    topics = read_queries(inputs.queries)
    paths, out = inputs.paths, inputs.out
    retriever = open_retriever("precedents", tree_params(params, 0.0), paths, facts=True)
    edge_table = pd.read_parquet(inputs.edges)
    weight = choose_tree_weight(retriever, params, sets)
    chosen = weight["chosen"]
    write_choice(inputs.choice, {"rule": weight["rule"], "fact_weight": chosen,
                                 "tuning_cases": weight["n_cases"], "grid": weight["grid"]},
                 "Written by `countercase perturb` (stage perturb) from its tuning cases. It sets "
                 "perturb.fact_weight,\nwhich the validity rows and a tree searched by a "
                 "pipeline system read; the trees searched\nby the learned system "
                 "(perturb.learned, configs/ltr_choice.yaml) read no fact weight.")
    # the validity cases in a second process while this one builds the gold rows and the trees
    with Apart(params.perturb.workers) as apart:
        validity_set = apart.submit(validity_rows_apart, paths, params, sets.validity,
                                    edge_table, chosen, sets.precedents)
        gold_rows = validity_rows("gold", sets.gold, case_search(retriever, params), edge_table,
                                  params, chosen, sets.precedents)
        trees = tree_ranker(params, paths, retriever.with_params(tree_params(params, chosen)))
        report = run_perturb(topics, trees, edge_table, out, params.perturb,
                             inputs.queries.parent)
        report["summary"]["corpus_trees"] = corpus_trees(
            sets.validity, trees, edge_table, params.perturb, out / layout.CORPUS_TREES.name)
        rows = validity_set.result() + gold_rows
    summary = report["summary"]
    summary["validity"] = validity_summary(rows, params, sets, weight, out)
    audit = legal_audit(layout.LEGAL_AUDIT)
    if audit is not None:
        summary["legal_audit"] = audit
    if inputs.confirmatory is not None:
        summary["validity_v2"] = read_json(inputs.confirmatory)
    if inputs.holdings is not None:
        summary["holding_profiles"] = holding_summary(read_json(inputs.holdings))
    return report


def read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        raise SummaryFileError(f"{path} is not JSON: {error}") from None


def legal_audit(folder: Path) -> dict | None:
    """The legal audit's results (data/gold/legal_audit.md) once both samples are labelled."""
    engines = [e for e in ENGINES if e != CRITERIA_ENGINE]
    paths = {e: folder / f"sample_{e}.jsonl" for e in engines}
    first, second = folder / "labels_A.jsonl", folder / "labels_B.jsonl"
    if not (paths["before"].exists() and paths["after"].exists() and first.exists()):
        return None
    samples = {e: [json.loads(line) for line in p.open(encoding="utf-8")]
               for e, p in paths.items() if p.exists()}
    who, labels = read_audit_labels(first)
    seconds = read_audit_labels(second)[1] if second.exists() else {}
    for engine in engines[2:]:  # a revision's sample, labelled on its own
        for found, labeller in ((labels, "A"), (seconds, "B")):
            path = folder / f"labels_{labeller}_{engine}.jsonl"
            if path.exists():
                found.update(read_audit_labels(path)[1])
    found = audit_results(samples, labels, seconds or None)
    pools = {e: read_json(folder / f"pool_{e}.json") for e in ENGINES
             if (folder / f"pool_{e}.json").exists()}
    # issue 57's engine, labelled under two criteria by two readers
    sample = folder / f"sample_{CRITERIA_ENGINE}.jsonl"
    readers = {who: folder / f"labels_{who}_{CRITERIA_ENGINE}.jsonl" for who in ("A", "B")}
    if sample.exists() and all(p.exists() for p in readers.values()):
        found[CRITERIA_ENGINE] = {
            **criteria_results([json.loads(line) for line in sample.open(encoding="utf-8")],
                               {w: read_criteria_labels(p)[1] for w, p in readers.items()}),
            "labelled_by": {w: read_criteria_labels(p)[0] for w, p in readers.items()}}
    # the last engine of one label is the rules before issue 57, its sample drawn from fresh
    # cases; the ones between the first revision and it were revised on each other's labels
    return {**found, "labelled_by": who, "root_edges": pools, "final": engines[-1],
            "exploratory": list(engines[2:-1])}


def holding_summary(found: dict) -> dict:
    """What metrics/counterfactual.json reports of the holding profiles: the learned scorer's
    precision and recall of provisions decided on the labelled sample's test half, beside the
    first rule's and the precise threshold's."""
    accuracy = found.get("accuracy", {})
    learned = accuracy.get("learned_test", accuracy.get("first_rule", {}))
    return {"precision": learned.get("precision"), "recall": learned.get("recall"),
            "n": learned.get("n"), "labeller": accuracy.get("labeller"),
            "first_rule": accuracy.get("first_rule"),
            "learned_precise": accuracy.get("learned_precise_test"),
            "judgments": found.get("judgments"), "empty": found.get("empty", {}).get("count")}

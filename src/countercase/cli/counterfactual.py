"""Subcommands of the counterfactual engine: perturb (stage perturb: the trees and the validity
rows), llm-check (stage llm_check) and tree (one case's tree, for a user)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from countercase import layout
from countercase.cli.base import (CASE_DOCUMENTS_OPTION, CITATIONS_OPTION, EDGES_OPTION,
                                  LIVE_OPTION, PARAMS_OPTION, PROFILES_OPTION, TIMING_OPTION,
                                  CaseFiles, UserError, app, case_files, index_paths,
                                  metrics_option, read_json, require, writable, write_json)
from countercase.cli.explain import tree_explainer
from countercase.config import load_params
from countercase.datasets.aila import read_queries
from countercase.explain.markdown import tree_markdown
from countercase.factsheet.llm import LlmUnavailableError, open_recording
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import validate_sheet
from countercase.layout import IndexPaths
from countercase.perturb.cases import ValidityInputs, load_cases
from countercase.perturb.llm_check import run_llm_check
from countercase.perturb.run import retriever_search
from countercase.perturb.stage import PerturbInputs, run_stage
from countercase.perturb.tree import PerturbationTree
from countercase.retrieve.load import open_retriever
from countercase.retrieve.registry import tree_params
from countercase.retrieve.trees import searching, tree_ranker

log = logging.getLogger("countercase")

# a tree's size: branching ** depth nodes at most, every one a search
MAX_DEPTH, MAX_BRANCHING = 6, 20


def validity_inputs(cases: CaseFiles) -> ValidityInputs:
    return ValidityInputs(cases.documents, cases.sheets, cases.metadata, cases.groups, cases.gold)


def case_sets(params, cases: CaseFiles, fresh: int = 0):
    """The corpus query cases of the audit's and the calibration's samples (inputs checked)."""
    return load_cases(params, validity_inputs(cases.require()), fresh)


def _reported(what: str, stage: str, key: str):
    """An optional summary of another stage that perturb's metrics report under ``key``."""
    return typer.Option(None, help=f"{what[0].upper()}{what[1:]} (stage {stage}), reported "
                        f"under {key}.")


@app.command()
@app.command()
@index_paths
@case_files
def perturb(
    paths: IndexPaths,
    cases: CaseFiles,
    queries: Path = typer.Option(layout.AILA_QUERIES, help="AILA topics."),
    out: Path = typer.Option(layout.TREES),
    metrics: Optional[Path] = metrics_option("the summary"),
    timing: Optional[Path] = TIMING_OPTION,
    choice: Path = typer.Option(layout.TREES_CHOICE,
                                help="Where the trees' fact weight and its rule go."),
    confirmatory: Optional[Path] = _reported("the confirmatory experiment's summary",
                                             "validity_v2", "validity_v2"),
    holdings: Optional[Path] = _reported("the holding profiles' metrics", "holdings",
                                         "holding_profiles"),
    system: Optional[str] = typer.Option(
        None, help="The system every node searches, by its name in configs/systems.yaml "
        "(default: the learned system when ltr is served, else params.yaml perturb.system)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The validity experiment on corpus query cases, then a perturbation tree for every AILA
    query (depth, branching from params.yaml; the fact channel at the weight chosen on the
    tuning cases)."""
    cases.require()
    require(confirmatory, "the confirmatory experiment's summary (stage validity_v2)")
    require(holdings, "the holding profiles' metrics (stage holdings)")
    # it writes the trees' choice, so adopts only the others
    params = searching(load_params(params_path, adopt=("tuning", "reranker", "ltr")), system)
    report = run_stage(params, PerturbInputs(
        queries, cases.edges, out, paths, cases.documents, cases.sheets, cases.metadata,
        cases.groups, cases.gold, choice, confirmatory, holdings))
    if metrics:
        write_json(metrics, report["summary"])
    if timing:
        write_json(timing, report["timing"])


@app.command("llm-check")
@case_files
def llm_check(
    cases: CaseFiles,
    validity: Path = typer.Option(layout.VALIDITY_ROWS, help="The validity rows (stage perturb)."),
    labels: Path = typer.Option(layout.PERTURBATION_LABELS, help="Hand labels of the sample."),
    calibration: Path = typer.Option(layout.LLM_CALIBRATION, help="The labelled candidates that "
                                     "measure it as a classifier (llm-calibration-sample)."),
    out: Path = typer.Option(layout.LLM_CHECK),
    metrics: Optional[Path] = metrics_option(),
    timing: Optional[Path] = TIMING_OPTION,
    sample_only: bool = typer.Option(False, help="Only write the sample to label (no LLM)."),
    recording: Path = typer.Option(layout.recording("llm_check"),
                                   help="The LLM's recorded answers."),
    live: bool = LIVE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The LLM check on the root candidates of the corpus query cases: acceptance, whether it
    separates the perturbations that matter, agreement with the hand-labelled sample."""
    cases.require()
    if not sample_only:
        require(validity, "validity rows (stage `perturb`)")
        require(labels, "hand labels of the sample")
    params = load_params(params_path)
    started = time.perf_counter()
    try:
        with open_recording("llm_check", "live" if live else params.llm.mode,
                            recording) as answers:
            report = run_llm_check(params, validity_inputs(cases), pd.read_parquet(cases.edges),
                                   validity, labels, out, answers,
                                   sample_only, calibration)
    except LlmUnavailableError as error:
        raise UserError(f"the LLM check asks prompts its recording {recording} lacks, and "
                        f"needs the local LLM for them (make llm): {error}") from None
    seconds = time.perf_counter() - started
    if sample_only:
        log.info("%d candidates; the sample to label is in %s", report["n_candidates"],
                 out / "label_sample.jsonl")
        return
    if metrics:
        write_json(metrics, report)
    if timing:
        calls = report["model_calls"]
        write_json(timing, {"seconds": round(seconds, 1), "model_calls": calls,
                            "seconds_per_call": round(seconds / calls, 2) if calls else None})
    log.info("acceptance %s over %d candidates of %d cases", report["acceptance_rate"],
             report["n_candidates"], report["n_cases"])


@app.command()
@index_paths
def tree(
    paths: IndexPaths,
    query: Optional[str] = typer.Option(None, help="An AILA query id (AILA_Q12)."),
    text: Optional[str] = typer.Option(None, help="Case text to read the fact sheet from."),
    sheet: Optional[Path] = typer.Option(None, help="A fact sheet JSON (structured queries)."),
    depth: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.depth."),
    branching: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.branching."),
    system: Optional[str] = typer.Option(
        None, help="The system every node searches, by its name in configs/systems.yaml (a "
        "pipeline over the built indexes or a learned system; default: the learned system "
        "when ltr is served, else params.yaml perturb.system)."),
    out: Path = typer.Option(Path("tree.json")),
    markdown: Optional[Path] = typer.Option(
        None, help="Also explain the tree (JSON with explanations) and write its Markdown here."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS,
                                help="The judgments' fact sheets (for --markdown)."),
    profiles: Optional[Path] = PROFILES_OPTION,
    citations: Path = CITATIONS_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    queries: Path = typer.Option(layout.AILA_QUERIES),
    edges: Path = EDGES_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """One perturbation tree, from a query id, raw text or a fact sheet, written as JSON."""
    if len([x for x in (query, text, sheet) if x]) != 1:
        raise UserError("give exactly one of --query, --text, --sheet")
    require(edges, "section adjacency map (stage `adjacency`)")
    writable(out, "tree file")
    writable(markdown, "Markdown file")
    params = searching(load_params(params_path), system)  # an unknown one: exit 2
    depth = params.perturb.depth if depth is None else depth
    branching = params.perturb.branching if branching is None else branching
    # checked before any search: depth 5 at the default branching already holds 1,335 nodes
    for name, value, most in (("--depth", depth, MAX_DEPTH), ("--branching", branching,
                                                               MAX_BRANCHING)):
        if not 1 <= value <= most:
            raise UserError(f"{name} {value}: give 1 to {most}")
    if query:
        topics = read_queries(queries)
        if query not in topics:
            raise UserError(f"no query {query!r} in {queries}")
        text = topics[query]
        root = extract_rules(text, query, "query")
    elif text:
        root = extract_rules(text, "text", "text")
    else:
        require(sheet, "fact sheet file")
        root = validate_sheet(read_json(sheet))
    retriever = tree_ranker(params, paths, open_retriever("precedents", tree_params(params), paths))
    built = PerturbationTree(root, retriever_search(retriever), pd.read_parquet(edges),
                             params.perturb.k, text=text, prune_below=params.perturb.prune_below,
                             granularity=params.perturb.granularity).build(depth, branching)
    model = built.to_model({**params.perturb.model_dump(), "depth": depth,
                            "branching": branching})
    if markdown is not None:
        require(sheets, "fact sheets (stage `factsheets`)")
        model, _ = tree_explainer(sheets, paths.chunks, profiles, citations, documents,
                              params_path).explain(model)
        markdown.write_text(tree_markdown(model), encoding="utf-8")
    out.write_text(model.model_dump_json(indent=1), encoding="utf-8")
    log.info("%d nodes; sensitivity %s -> %s", len(built.nodes), built.sensitivity(), out)

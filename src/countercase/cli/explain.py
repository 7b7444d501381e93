"""Subcommands of the explanations: explain (stage explain: every tree's results and edges,
grounded in their sources) and topology (stage topology: the trees' shapes)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CASE_DOCUMENTS_OPTION, CHUNKS_OPTION, CITATIONS_OPTION,
                                  METADATA_OPTION, PARAMS_OPTION, PROFILES_OPTION, TIMING_OPTION,
                                  app, metrics_option, require, require_each, write_json)
from countercase.config import load_params
from countercase.explain.run import open_explainer, run_explain
from countercase.holdings.case_targets import Inputs
from countercase.holdings.targets import Settings
from countercase.topology.run import run_topology

log = logging.getLogger("countercase")


@app.command()
def explain(
    trees: Path = typer.Option(layout.TREES, help="The trees (stage perturb)."),
    tree_file: Optional[Path] = typer.Option(None, "--tree", help="Explain this one tree."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets."),
    chunks: Path = CHUNKS_OPTION,
    out: Path = typer.Option(layout.EXPLANATIONS,
                             help="A folder (every tree) or, with --tree, a Markdown file."),
    metrics: Optional[Path] = metrics_option("faithfulness"),
    timing: Optional[Path] = TIMING_OPTION,
    profiles: Optional[Path] = PROFILES_OPTION,
    citations: Path = CITATIONS_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Grounded explanations of every result and edge of the trees, each sentence re-verified
    against its sources; with --tree, one tree's Markdown report."""
    require_each((sheets, "fact sheets (stage `factsheets`)"), (chunks, "chunks"))
    if tree_file is not None:
        require(tree_file, "tree JSON")
    else:
        require(trees, "trees (stage `perturb`)")
    explainer = tree_explainer(sheets, chunks, profiles, citations, documents, params_path)
    report = run_explain(trees, explainer, out, tree_file)
    seconds = {"ms_per_node": report.pop("ms_per_node")}
    if metrics:
        write_json(metrics, report)
    if timing:
        write_json(timing, seconds)
    log.info("%d sentences over %d nodes: faithfulness %s", report["sentences"], report["nodes"],
             report["faithfulness"])


def tree_explainer(sheets: Path, chunks: Path, profiles: Path | None, citations: Path,
               documents: Path, params_path: Path):
    """The explainer; with ``profiles``, also the holdings each result turns on and each edge's
    citation-grounded targets (the citation graph and the ``targets`` settings)."""
    if profiles is None:
        return open_explainer(sheets, chunks)
    require_each((profiles, "holding profiles (stage `holdings`)"),
                 (citations, "citation collection (stage `citations`)"),
                 (documents, "judgment texts (stage `ingest`)"))
    grounds = Inputs(citations=citations, documents=documents, sheets=sheets, profiles=profiles)
    return open_explainer(sheets, chunks, grounds, Settings.of(load_params(params_path).targets))


@app.command()
def topology(
    trees: Path = typer.Option(layout.TREES, help="The trees (stage perturb)."),
    groups: Path = typer.Option(layout.RERANKER_GROUPS,
                                help="Resolved citations (stage train_reranker): in-degree."),
    metadata: Path = METADATA_OPTION,
    out: Path = typer.Option(layout.metrics("topology"), help="The metrics (JSON)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Tree shapes and precedent robustness, against citation in-degree and bench size."""
    require_each((trees, "trees (stage `perturb`)"),
                 (groups, "citation groups (stage `train_reranker`)"),
                 (metadata, "metadata file"))
    report = run_topology(trees, groups, metadata, load_params(params_path).seed)
    write_json(out, report)
    found = report["robustness_vs_indegree"]
    log.info("%d trees, %d precedents; robustness vs in-degree: Spearman %s (CI %s, n %d)",
             report["trees"]["n"], report["precedents"]["n"], found["spearman"], found["ci"],
             found["n"])

"""The confirmatory validity tests: stage validity-v2 (the preregistered run on corpus cases) and
stage validity-v3 (the directional test; its case list: countercase lab validity-v3-cases)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CASE_DOCUMENTS_OPTION, CASE_SHEETS_OPTION, CHUNKS_OPTION,
                                  CITATIONS_OPTION, DENSE_DIR_OPTION, EDGES_OPTION, GOLD_OPTION,
                                  GROUPS_OPTION, INDEX_DIR_OPTION, METADATA_OPTION, PARAMS_OPTION,
                                  TIMING_OPTION, UserError, app, require, write_json)
from countercase.config import load_params
from countercase.confirm.prereg import PreregistrationError
from countercase.retrieve.load import IndexPaths
from countercase.retrieve.trees import searching

log = logging.getLogger(__name__)


@app.command("validity-v3")
def validity_v3(
    out: Path = typer.Option(layout.VALIDITY_V3_OUT, help="Rows and summary."),
    citations: Path = CITATIONS_OPTION,
    targets: Path = typer.Option(layout.CASE_TARGETS, help="Stage targets' targets.jsonl."),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    prereg: Path = typer.Option(layout.VALIDITY_V3, help="The preregistration."),
    pilot: int = typer.Option(0, min=0, help="Run on this many tuning cases with targets "
                              "instead, without the guard (the pilot: code, time, sample size)."),
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here too (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The confirmatory test of directional sensitivity (docs/preregistration/validity_v3.md),
    refused unless the preregistration is final, committed before this commit and unchanged."""
    from countercase.confirm.v3 import Inputs, run_validity_v3

    # every choice adopted: the trees' system as the perturb stage has it (the learned one
    # when ltr is served) and its fact weight
    params = searching(load_params(params_path), None)
    require(targets, "targets (stage `targets`)")
    require(citations, "citation collection (stage `citations`)")
    paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
    try:
        summary = run_validity_v3(params, Inputs(paths, citations, targets=targets,
                                                 prereg=prereg), out, pilot=pilot)
    except PreregistrationError as error:
        raise UserError(str(error)) from None
    write_json(out / "summary.json", summary)
    if metrics:
        write_json(metrics, summary)
    if timing:
        write_json(timing, {"seconds": summary["seconds"]})
    log.info("validity v3: %s", summary["by_ranker"].get("trees"))


@app.command("validity-v2")
def validity_v2(
    out: Path = typer.Option(layout.VALIDITY_V2_OUT, help="Rows and summary."),
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    citations: Path = CITATIONS_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    prereg: Path = typer.Option(layout.VALIDITY_V2, help="The preregistration."),
    pilot: int = typer.Option(0, min=0, help="Run on this many of v1's development cases "
                              "instead, without the guard (a test of the code and its time)."),
    rerun: bool = typer.Option(False, help="Run the preregistered cases again on this build, "
                               "under the guard, the summary marked exploratory (the "
                               "confirmatory result stays the preregistered run's)."),
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here too (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The confirmatory validity experiment (docs/preregistration/validity_v2.md), refused
    unless the preregistration is final, committed before this commit and unchanged; its
    summary goes to OUT/summary.json (metrics/counterfactual.json validity_v2)."""
    from countercase.confirm.run import Inputs, run_validity_v2
    if pilot and rerun:
        raise UserError("give --pilot or --rerun, not both: a pilot reads development cases, "
                        "a rerun the preregistered ones")
    params = load_params(params_path)
    paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
    for path, what in ((citations, "citation collection (stage `citations`)"),
                       (groups, "citation groups (stage `train_reranker`)"),
                       (sheets, "fact sheets (stage `factsheets`)"),
                       (edges, "section adjacency map (stage `adjacency`)")):
        require(path, what)
    try:
        summary = run_validity_v2(params, Inputs(paths, citations, documents, sheets, edges,
                                                 groups, gold, prereg=prereg), out,
                                  pilot=pilot, rerun=rerun)
    except PreregistrationError as error:
        raise UserError(str(error)) from None
    write_json(out / "summary.json", summary)
    if metrics:
        write_json(metrics, summary)
    if timing:
        write_json(timing, {"seconds": summary["seconds"]})
    log.info("validity v2: %s", json.dumps(summary["by_ranker"].get("bm25", {}))[:300])

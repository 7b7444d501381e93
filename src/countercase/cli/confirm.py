"""The confirmatory validity tests: stage validity-v2 (the preregistered run on corpus cases) and
stage validity-v3 (the directional test; its case list: countercase lab validity-v3-cases)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CITATIONS_OPTION, PARAMS_OPTION, PART_OPTION, PARTS_OPTION,
                                  TARGETS_OPTION, TIMING_OPTION, CaseFiles, UserError, app,
                                  case_files, index_paths, part_of, require, write_json)
from countercase.config import load_params
from countercase.confirm.prereg import PreregistrationError
from countercase.confirm.run import Inputs as V2Inputs, run_validity_v2
from countercase.confirm.v3 import Inputs as V3Inputs, run_validity_v3
from countercase.layout import IndexPaths
from countercase.retrieve.trees import searching

log = logging.getLogger(__name__)


def _report(summary: dict, out: Path, metrics: Optional[Path], timing: Optional[Path]) -> None:
    """A test's summary in its folder, and in metrics/ and its seconds in metrics/timing/."""
    write_json(out / "summary.json", summary)
    if metrics:
        write_json(metrics, summary)
    if timing:
        write_json(timing, {"seconds": summary["seconds"]})


@app.command("validity-v3")
@index_paths
def validity_v3(
    paths: IndexPaths,
    out: Path = typer.Option(layout.VALIDITY_V3_OUT, help="Rows and summary."),
    citations: Path = CITATIONS_OPTION,
    targets: Path = TARGETS_OPTION,
    prereg: Path = typer.Option(layout.VALIDITY_V3, help="The preregistration."),
    pilot: int = typer.Option(0, min=0, help="Run on this many tuning cases with targets "
                              "instead, without the guard (the pilot: code, time, sample size)."),
    part: Optional[str] = PART_OPTION,
    parts: int = PARTS_OPTION,
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here too (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The confirmatory test of directional sensitivity (docs/preregistration/validity_v3.md),
    refused unless the preregistration is final, committed before this commit and unchanged."""
    share = part_of(part, parts)
    # every choice adopted: the trees' system as the perturb stage has it (the learned one
    # when ltr is served) and its fact weight
    params = searching(load_params(params_path), None)
    require(targets, "targets (stage `targets`)")
    require(citations, "citation collection (stage `citations`)")
    try:
        summary = run_validity_v3(params, V3Inputs(paths, citations, targets=targets,
                                                   prereg=prereg), out, pilot=pilot, part=share,
                                  parts=parts)
    except PreregistrationError as error:
        raise UserError(str(error)) from None
    if share:
        log.info("validity v3 part %d of %d: %d cases, %d rows", *share, summary["cases"],
                 summary["rows"])
        return
    _report(summary, out, metrics, timing)
    log.info("validity v3: %s", summary["by_ranker"].get("trees"))


@app.command("validity-v2")
@index_paths
@case_files
def validity_v2(
    paths: IndexPaths,
    cases: CaseFiles,
    out: Path = typer.Option(layout.VALIDITY_V2_OUT, help="Rows and summary."),
    citations: Path = CITATIONS_OPTION,
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
    summary goes to OUT/summary.json. The preregistered run's record
    (metrics/validity_v2.json, committed) is never written over: later runs are --rerun."""
    if pilot and rerun:
        raise UserError("give --pilot or --rerun, not both: a pilot reads development cases, "
                        "a rerun the preregistered ones")
    if metrics and metrics.exists() and not (pilot or rerun):
        raise UserError(f"{metrics} already holds the preregistered run's record, which the "
                        "confirmatory run writes once; run the same cases on this build with "
                        "--rerun (exploratory), or give another --metrics")
    params = load_params(params_path)
    require(citations, "citation collection (stage `citations`)")
    cases.require()
    try:
        summary = run_validity_v2(params, V2Inputs(paths, citations, cases.documents, cases.sheets,
                                                   cases.edges, cases.groups, cases.gold,
                                                   prereg=prereg), out,
                                  pilot=pilot, rerun=rerun)
    except PreregistrationError as error:
        raise UserError(str(error)) from None
    _report(summary, out, metrics, timing)
    log.info("validity v2: %s", json.dumps(summary["by_ranker"].get("bm25", {}))[:300])

"""Subcommands of holding profiles and citation-grounded targets: holdings, targets."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CITATIONS_OPTION, METADATA_OPTION, PARAMS_OPTION, app, require,
                                  require_each, write_json)
from countercase.config import load_params
from countercase.holdings.case_targets import Inputs, run_targets
from countercase.holdings.run import run_holdings
from countercase.holdings.targets import Settings


@app.command("holdings")
def holdings(
    documents: Path = typer.Option(layout.DOCUMENTS, help="The ingest stage's judgments."),
    metadata: Path = METADATA_OPTION,
    gold: Optional[Path] = typer.Option(layout.HOLDING_GOLD,
                                        help="Labelled provisions of the accuracy sample."),
    choice: Path = typer.Option(layout.HOLDINGS_CHOICE, help="The learned scorer (holdings-fit)."),
    out: Path = typer.Option(layout.HOLDINGS, help="profiles.jsonl goes here."),
    metrics: Path = typer.Option(layout.metrics("holdings")),
) -> None:
    """Every judgment's holding profile and, where labels are committed, its accuracy."""
    require(documents, "documents")
    require(metadata, "metadata")
    write_json(metrics, run_holdings(documents, metadata, out, gold, choice))


@app.command("targets")
def targets(
    citations: Path = CITATIONS_OPTION,
    documents: Path = typer.Option(layout.DOCUMENTS),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS),
    metadata: Path = METADATA_OPTION,
    edges: Path = typer.Option(layout.SECTION_EDGES),
    profiles: Path = typer.Option(layout.HOLDING_PROFILES),
    out: Path = typer.Option(layout.TARGETS, help="targets.jsonl goes here."),
    metrics: Path = typer.Option(layout.metrics("targets")),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Every citation case's root edits and their citation-grounded appear and drop sets."""
    require_each((citations, "citation collection"), (sheets, "fact sheets"),
                 (profiles, "holding profiles"), (edges, "section edges"))
    params = load_params(params_path)
    write_json(metrics, run_targets(Inputs(citations, documents, sheets, metadata, edges, profiles),
                                    out, Settings.of(params.targets), params.targets.per_type,
                                    params.perturb.case_chars))

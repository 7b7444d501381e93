"""Subcommand train-biencoder (stage train_biencoder): the dense encoder on citation pairs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.biencoder.run import run_train_biencoder
from countercase.cli.base import (CITATIONS_OPTION, PARAMS_OPTION, app, metrics_option, require,
                                  require_folder, resume_option, write_json)
from countercase.config import load_params
from countercase.report import stage_times

log = logging.getLogger("countercase")


@app.command("train-biencoder")
def train_biencoder(
    groups: Path = typer.Option(layout.RERANKER_GROUPS,
                                help="The mined citation groups (stage train_reranker)."),
    citations: Path = CITATIONS_OPTION,
    out: Path = typer.Option(layout.BIENCODER),
    metrics: Optional[Path] = metrics_option(),
    resume_dir: Path = resume_option(layout.BIENCODER_RESUME, "biencoder"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Fine-tune the dense encoder on the citation collection's tuning pairs (dev: checkpoints)."""
    require(groups, "citation groups (stage train_reranker)")
    require_folder(citations, "citation collection (stage citations)")
    params = load_params(params_path)
    report = run_train_biencoder(params, groups, citations, out, resume_dir)
    stage_times.carry(report["training"]["seconds_in_earlier_runs"])
    if metrics:
        write_json(metrics, report)
    log.info("bi-encoder -> %s (dev MAP %s)", out / "model", report["dev_MAP"])

"""Subcommands of the legal entity tagger: train-ner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (PARAMS_OPTION, TIMING_OPTION, app, metrics_option, require,
                                  write_json)
from countercase.config import load_params
from countercase.ner.train import first_window as probe, train_ner as run
from countercase.runtime.cpu import facts


@app.command("train-ner")
def train_ner(
    data: Path = typer.Option(layout.NER_DATA,
                              help="InLegalNER BIO files NER_{TRAIN,DEV}_{JUDGEMENT,PREAMBLE}.txt."),
    out: Path = typer.Option(layout.NER, help="The model goes to OUT/model."),
    metrics: Optional[Path] = metrics_option("the dev scores"),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
    first_window: int = typer.Option(
        0, min=0, help="Train only this many steps of the full run and print their mean loss "
                "and seconds a step; nothing is written (metrics/ner.json's loss_first is the "
                "first ner.log_every steps)."),
) -> None:
    """Train the legal entity tagger (params.yaml `ner`) and score it on the dev set."""
    require(data, "InLegalNER folder")
    params = load_params(params_path)
    if first_window:
        found = probe(data, params.ner, params.seed, first_window)
        print(json.dumps({"cpu": facts(), "first_window": found}, indent=2))
        return
    report = run(data, out, params.ner, params.seed, device=params.device)
    if metrics:
        write_json(metrics, {k: v for k, v in report.items() if k != "timing"})
    if timing:
        write_json(timing, {**report["timing"], "cpu": facts()})

"""Subcommand of the learned ranker: train-ltr (stage train_ltr)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (PARAMS_OPTION, TIMING_OPTION, app, index_paths, metrics_option,
                                  require_each, require_folder, write_json)
from countercase.config import load_params, write_choice
from countercase.layout import IndexPaths
from countercase.ltr.run import choice as chosen, run_train_ltr
from countercase.ltr.serving import decide, read_rule
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import read_settings

log = logging.getLogger("countercase")


@app.command("train-ltr")
@index_paths
def train_ltr(
    paths: IndexPaths,
    citations: Path = typer.Option(layout.CITATIONS, help="The citation collection (stage "
                                   "citations): its tuning half's dev queries train."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets."),
    documents: Path = typer.Option(layout.DOCUMENTS, help="The judgments (the unmasked "
                                   "queries are cut from them)."),
    rule: Path = typer.Option(layout.LTR_RULE, help="The rule, written before any feature."),
    choice: Path = typer.Option(layout.TUNING_CHOICE, help="The tune stage's choice."),
    out: Path = typer.Option(layout.LTR, help="Where the models go."),
    ltr_choice: Path = typer.Option(layout.LTR_CHOICE, help="Where the choice goes."),
    serving_rule: Path = typer.Option(layout.SERVING_RULE, help="The serving rule (issue 58)."),
    serving_choice: Path = typer.Option(layout.SERVING_CHOICE,
                                        help="Where the serving choice goes."),
    aila_dir: Path = typer.Option(layout.AILA, help="AILA 2019 (its tuning queries)."),
    metrics: Optional[Path] = metrics_option(),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Train the learned rankers by their rule on the dev queries, measure them out of fold,
    and write whether the rule serves ltr, before any test query is scored."""
    require_folder(citations, "citation collection (stage citations)")
    require_each((sheets, "fact sheets (stage factsheets)"), (documents, "documents"),
                 (choice, "tuning choice (stage tune)"), (rule, "the ltr rule"),
                 (serving_rule, "the serving rule"))
    require_folder(paths.fact_index, "fact index (stage index_facts)")
    params = load_params(params_path, adopt=("tuning", "reranker"))  # its own choice: none
    serving = read_rule(serving_rule)
    report = run_train_ltr(params, paths, citations, sheets, documents, rule,
                           Choices({"tuning": choice}), out, serving, aila_dir)
    report["serving"] = decide(report.pop("scores"), serving, params.seed)
    write_choice(serving_choice, report["serving"], "Written by `countercase train-ltr` (stage "
                 "train_ltr) by configs/serving_rule.yaml, on tuning queries only, before the "
                 "choice is scored\n"
                 "on any test query.")
    log.info("serving: %s", report["serving"]["route"])
    if metrics:
        write_json(metrics, report)
    if timing:
        write_json(timing, {"seconds": report["seconds"]})
    picked = chosen(report, read_settings(rule))
    write_choice(ltr_choice, picked, "Written by `countercase train-ltr` (stage train_ltr) before "
                 "any test query is scored by a learned ranker;\nthe measurements are in "
                 "metrics/ltr.json.")
    log.info("train-ltr: %s", {k: picked[k] for k in ("serve", "dev_MAP")})

"""Subcommands of the domain reranker: train-reranker (stage train_reranker) and citations
(stage citations, the citation collection)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.citations.run import run_citations
from countercase.cli.base import (AILA_OPTION, PARAMS_OPTION, TIMING_OPTION, UserError, app,
                                  metrics_option, require_each, require_folder, resume_option,
                                  write_json)
from countercase.config import load_params, write_choice
from countercase.datasets import aila
from countercase.report import stage_times
from countercase.reranker.choice import decide
from countercase.reranker.run import run_train_reranker

log = logging.getLogger("countercase")


def _carried_seconds(report: dict, timing: dict) -> float:
    """The training seconds of the interrupted runs this one went on from: the report's are
    all runs' together, the timing's this run's alone."""
    training = report["training"]
    if not training.get("resumed_after_steps"):
        return 0.0
    return max(0.0, training["seconds"] - timing["train_seconds"])


@app.command("train-reranker")
def train_reranker(
    documents: Path = typer.Option(layout.DOCUMENTS),
    extract_dir: Path = typer.Option(layout.EXTRACT, help="Extract stage output."),
    index_dir: Path = typer.Option(layout.INDEX, help="Index stage output."),
    dense_dir: Path = typer.Option(layout.DENSE,
                                   help="Embed stage output (optional: BM25 negatives only)."),
    aila_dir: Path = AILA_OPTION,
    citations: Path = typer.Option(layout.CITATIONS,
                                   help="The citation collection (stage citations): its dev "
                                        "queries choose, its held-out ones never train."),
    out: Path = typer.Option(layout.RERANKER),
    metrics: Optional[Path] = metrics_option(),
    timing: Optional[Path] = TIMING_OPTION,
    choice: Path = typer.Option(layout.RERANKER_CHOICE,
                                help="Where the choice (reranker on or off) and its rule go."),
    judgments: int = typer.Option(0, help="Mine only this many citing judgments (0: all)."),
    resume_dir: Path = resume_option(layout.RERANKER_RESUME, "reranker"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Mine citation pairs, train the domain cross-encoder, export it to ONNX, measure it, and
    decide whether the pipeline reranks."""
    # the validation's candidates are the tuned first stage; the choice it writes is no input
    params = load_params(params_path, adopt=("tuning",))
    if params.reranker.validate_on == "citations":
        require_folder(citations, "citation collection (stage citations)")
    require_each((documents, "documents file"), (extract_dir / "chunks.parquet", "chunks"),
                 (extract_dir / "sections.parquet", "sections"),
                 (extract_dir / "metadata.parquet", "metadata"),
                 (index_dir / "precedents_chunks", "precedents BM25 index"),
                 (index_dir / "statutes_chunks", "statutes BM25 index"),
                 (index_dir / "statute_sections.json", "statute-to-section map"),
                 (aila_dir / "Query_doc.txt", "AILA topics"))
    if judgments < 0:
        raise UserError(f"--judgments must be 0 or more, got {judgments}")
    found = run_train_reranker(params, documents, extract_dir, index_dir, dense_dir, aila_dir,
                               citations, out, judgments, resume_dir)
    stage_times.carry(_carried_seconds(found["report"], found["timing"]))
    if metrics:
        write_json(metrics, found["report"])
    if timing:
        write_json(timing, found["timing"])
    picked = decide(found["report"]["validation"], params.reranker.select_by)
    write_choice(choice, picked, "Written by `countercase train-reranker` (stage train_reranker) "
                 "before any test query sees the model;\nthe measurements are in "
                 "metrics/reranker.json. The stages that retrieve read it.")
    log.info("reranker -> %s (%s); %s", out, found["timing"], picked["decision"])


@app.command()
def citations(
    documents: Path = typer.Option(layout.DOCUMENTS),
    extract_dir: Path = typer.Option(layout.EXTRACT, help="Extract stage output."),
    aila_dir: Path = AILA_OPTION,
    out: Path = typer.Option(layout.CITATIONS),
    metrics: Optional[Path] = metrics_option("the collection's counts"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The citation collection: corpus judgments that cite others as queries, masked."""
    require_each((documents, "documents file"),
                 (extract_dir / "sections.parquet", "sections"),
                 (extract_dir / "metadata.parquet", "metadata"),
                 (aila_dir / "Query_doc.txt", "AILA topics"))
    params = load_params(params_path)
    report = run_citations(params.citations, params.seed, documents, extract_dir,
                           aila.queries(aila_dir), out)
    if metrics:
        write_json(metrics, report)
    log.info("citations: %s queries in %s", report["queries"], out)

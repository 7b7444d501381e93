"""Subcommands of the local LLM: rerank-llm (stage rerank_llm), llm-replay (stage llm_replay)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (AILA_OPTION, LIVE_OPTION, PARAMS_OPTION, UserError, app,
                                  index_paths, metrics_option, require, require_each, write_json)
from countercase.config import load_params
from countercase.factsheet.llm import LlmUnavailableError, open_recording
from countercase.factsheet.llm_replay import check
from countercase.layout import IndexPaths
from countercase.reranker.llm_run import run_rerank_llm

log = logging.getLogger("countercase")


@app.command("rerank-llm")
@index_paths
def rerank_llm(
    paths: IndexPaths,
    aila_dir: Path = AILA_OPTION,
    out: Path = typer.Option(layout.RERANK_LLM),
    metrics: Optional[Path] = metrics_option(),
    recording: Path = typer.Option(layout.recording("rerank_llm"),
                                   help="The LLM's recorded answers."),
    live: bool = LIVE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Rerank the configured pipeline's top documents by the local LLM's P(yes) (AILA 2019
    Tasks 1 and 2, test queries) and compare with no reranking."""
    require_each((aila_dir / "Query_doc.txt", "AILA topics"),
                 (paths.chunks, "chunks"), (paths.metadata, "metadata"),
                 (paths.index_dir / "precedents_chunks", "precedents BM25 index"),
                 (paths.index_dir / "statutes_chunks", "statutes BM25 index"))
    params = load_params(params_path)
    try:
        with open_recording("rerank_llm", "live" if live else params.llm.mode,
                            recording) as answers:
            found = run_rerank_llm(params, aila_dir,
                                   paths, out, answers)
    except LlmUnavailableError as error:
        raise UserError(f"the LLM reranker asks pairs its recording {recording} lacks, and "
                        f"needs the local LLM for them (make llm): {error}") from None
    if metrics:
        write_json(metrics, found)
    for name, task in found["tasks"].items():
        log.info("%s MAP %.4f -> %.4f (%d queries, %.1f s a query)", name,
                 task["scores"]["no_rerank"]["MAP"], task["scores"]["llm"]["MAP"],
                 len(task["queries"]), task["cost"]["model_seconds_per_query"])


@app.command("llm-replay")
def llm_replay(
    recordings: Path = typer.Option(layout.RECORDINGS, help="The recordings' folder."),
    metrics: Optional[Path] = metrics_option("the agreement"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Ask a seeded sample of the recorded LLM prompts again and report how many answers match
    (stage llm_replay)."""
    require(recordings, "recordings folder")
    params = load_params(params_path)
    try:
        report = check(recordings, params.llm.check_sample, params.seed, params.llm.model_sha256)
    except LlmUnavailableError as error:
        raise UserError(f"the replay check asks the local LLM (make llm): {error}") from None
    if metrics:
        write_json(metrics, report)
    log.info("%s of %d re-asked prompts match their recorded answers", report["matches"],
             report["sample"])

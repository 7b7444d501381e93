"""``countercase scaleout``: the corpus stages (ingest of PDFs, extract, rule fact sheets,
chunking, embedding, BM25) as a sharded dataflow in this process or on a Dask cluster
(countercase.scaleout); ``dvc repro`` keeps the single-process stages."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import PARAMS_OPTION, UserError, app, metrics_option, require, write_json
from countercase.config import load_params
from countercase.scaleout.dataflow import run_dataflow


@app.command()
def scaleout(
    out: Path = typer.Option(..., help="Output folder: ingest/, extract/, factsheets/, dense/, "
                                       "index/ as the pipeline lays them out."),
    documents: Optional[Path] = typer.Option(None, help="An ingested documents.jsonl."),
    pdfs: Optional[Path] = typer.Option(None, help="A folder of PDFs (read recursively)."),
    engine: Optional[str] = typer.Option(None, help="local or dask (default: params.yaml)."),
    address: Optional[str] = typer.Option(
        None, help="A Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster)."),
    workers: Optional[int] = typer.Option(None, help="Workers of the local cluster."),
    embed: bool = typer.Option(True, help="Embed the chunks (the slowest phase)."),
    statutes: Path = typer.Option(layout.STATUTE_TEXTS, help="Shipped statute texts."),
    sc_metadata: Optional[Path] = typer.Option(
        layout.SC_METADATA, help="Supreme Court metadata records (JSON)."),
    timing: Optional[Path] = metrics_option("the phases' timings"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Run the corpus stages as shards on a local or remote Dask cluster and merge them into
    the files the single-process stages write."""
    params = load_params(params_path)
    overrides = {k: v for k, v in (("engine", engine), ("address", address),
                                   ("workers", workers)) if v is not None}
    if engine is not None and engine not in ("local", "dask"):
        raise UserError(f"--engine {engine}: use local or dask")
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: give 1 or more")
    settings = params.scaleout.model_copy(update=overrides)
    if documents is None and pdfs is None:
        raise UserError("give --documents (an ingested documents.jsonl) and/or --pdfs (a folder)")
    require(documents, "documents file")
    require(statutes, "statutes folder")
    pdf_files = None
    if pdfs is not None:
        if not pdfs.is_dir():
            raise UserError(f"--pdfs {pdfs} is not a folder")
        pdf_files = sorted(p for p in pdfs.rglob("*") if p.suffix.lower() == ".pdf")
        if not pdf_files:
            raise UserError(f"no PDF in {pdfs}")
    sc = sc_metadata if sc_metadata is not None and sc_metadata.is_dir() else None
    result = run_dataflow(out, settings, params.extract, params.ingest, params.index, statutes,
                          documents, pdf_files, sc, embed=embed)
    if timing:
        write_json(timing, result["timing"])
    typer.echo(f"scaleout: {result['n_judgments']} judgments, {result['n_chunks']} chunks, "
               f"{result['n_failures']} failures -> {out} ({result['timing']})")

"""Subcommands of retrieval and evaluation: index, embed, search, latency, evaluate, tune."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from countercase.cli.base import (CHUNKS_OPTION, DENSE_DIR_OPTION, INDEX_DIR_OPTION,
                                  METADATA_OPTION, PARAMS_OPTION, TIMING_OPTION, UserError, app,
                                  require, write_json)
from countercase.config import load_params

log = logging.getLogger("countercase")


@app.command()
def index(
    chunks: Path = typer.Option(Path("data/processed/extract/chunks.parquet")),
    metadata: Path = typer.Option(Path("data/processed/extract/metadata.parquet")),
    documents: Path = typer.Option(Path("data/processed/ingest/documents.jsonl")),
    statutes: Path = typer.Option(Path("data/raw/aila2019/Object_statutes.tar.gz"),
                                  help="The AILA Task-2 statutes."),
    statute_table: Path = typer.Option(Path("data/processed/extract/statutes.parquet"),
                                       help="The statute table of the extract stage."),
    out: Path = typer.Option(Path("data/processed/index")),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """BM25 indexes of both tasks at chunk and at document level."""
    from countercase.index.run import run_index

    for path, what in ((chunks, "chunks file"), (metadata, "metadata file"),
                       (documents, "documents file"), (statutes, "statutes archive"),
                       (statute_table, "statute table")):
        require(path, what)
    params = load_params(params_path)
    stats = run_index(chunks, metadata, documents, statutes, statute_table, out, params.index,
                      params.extract)
    if timing:
        write_json(timing, stats["timing"])


@app.command()
def embed(
    chunks: Path = typer.Option(Path("data/processed/extract/chunks.parquet")),
    statute_chunks: Path = typer.Option(Path("data/processed/index/statutes_chunks.parquet")),
    out: Path = typer.Option(Path("data/processed/dense")),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Dense embeddings of both tasks' chunks (reused when the texts are unchanged)."""
    from countercase.index.encoders import EncoderUnavailableError
    from countercase.index.run import run_embed

    require(chunks, "chunks file")
    require(statute_chunks, "statute chunk table (stage `index`)")
    try:
        stats = run_embed(chunks, statute_chunks, out, load_params(params_path).index)
    except EncoderUnavailableError as error:
        raise UserError(str(error)) from None
    if timing:
        write_json(timing, {**stats["timing"], "encoder": stats["encoder"],
                             "precision": stats["precision"]})


@app.command()
def search(
    query: str = typer.Argument(..., help="The facts of a case, or any text."),
    task: str = typer.Option("precedents", help="precedents or statutes."),
    year_from: Optional[int] = typer.Option(None),
    year_to: Optional[int] = typer.Option(None),
    section: list[str] = typer.Option([], help="Act section, e.g. IPC-302 (repeatable)."),
    bench: list[str] = typer.Option([], help="Bench type, e.g. Constitution (repeatable)."),
    section_type: list[str] = typer.Option([], help="Facts, Held, Ratio, ... (repeatable)."),
    judge: list[str] = typer.Option([], help="Judge surname (post-filter, repeatable)."),
    k: Optional[int] = typer.Option(None, help="Results to show (default: params)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Search precedents (judgments) or statutes, with the passage that ranked each."""
    from countercase.index.query_reduction import EmptyQueryError
    from countercase.index.run import TASKS
    from countercase.retrieve.filters import FilterError, SearchFilter
    from countercase.retrieve.load import (IndexPaths, MissingIndexError, open_retriever,
                                           open_statute_search)
    from countercase.retrieve.pipeline import NoMatchError

    if task not in TASKS:
        raise UserError(f"unknown task {task!r}: use precedents or statutes")
    if not query.strip():
        raise UserError("empty query: give the facts of a case to search with")
    params = load_params(params_path).retrieve
    try:
        filters = SearchFilter.build(year_from, year_to, section, bench, section_type, (), judge)
        paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
        retriever = (open_retriever(task, params, paths) if task == "precedents"
                     else open_statute_search(params, paths))
        result = retriever.search(query, filters, k)
    except (EmptyQueryError, FilterError, NoMatchError, MissingIndexError) as error:
        raise UserError(str(error)) from None
    _print_rows([_result_row(hit, task) for hit in result.documents], as_json)


@app.command()
def latency(
    queries: Path = typer.Option(Path("data/raw/aila2019/Query_doc.txt"), help="AILA topics."),
    out: Path = typer.Option(Path("metrics/latency.json")),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Per-stage p50/p95 latency of the retrieval pipeline over the AILA queries."""
    from countercase.aila import TopicsError, read_queries
    from countercase.retrieve.latency import run_latency
    from countercase.retrieve.load import IndexPaths, MissingIndexError

    require(queries, "topics file")
    try:
        texts = list(read_queries(queries).values())
        report = run_latency(texts, load_params(params_path).retrieve,
                             IndexPaths(index_dir, dense_dir, chunks, metadata))
    except (TopicsError, MissingIndexError) as error:
        raise UserError(str(error)) from None
    write_json(out, report)
    log.info("latency of %d queries -> %s", len(texts), out)


@app.command()
def evaluate(
    collection: list[str] = typer.Option(
        [], help="aila2019-task1 and/or aila2019-task2 (default: both)."),
    condition: list[str] = typer.Option([], help="Conditions to run (default: all)."),
    aila_dir: Path = typer.Option(Path("data/raw/aila2019")),
    docs: Optional[Path] = typer.Option(None, help="Another collection: documents JSONL."),
    topics: Optional[Path] = typer.Option(None, help="Its topics: qid<TAB>text."),
    qrels: Optional[Path] = typer.Option(None, help="Its qrels (TREC format)."),
    out: Path = typer.Option(Path("data/processed/evaluate")),
    metrics: Optional[Path] = typer.Option(None, help="Write the scores here (JSON)."),
    summary: Optional[Path] = typer.Option(None, help="Write tests, timings, notes here (JSON)."),
    regressions: Optional[Path] = typer.Option(None, help="Write regression files here."),
    timing: Optional[Path] = TIMING_OPTION,
    documents: Path = typer.Option(Path("data/processed/ingest/documents.jsonl"),
                                   help="Judgments to cut the chunking variants from."),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Score every condition on AILA 2019 (or a TREC collection), with significance tests."""
    import time

    from countercase.aila import TopicsError
    from countercase.evaluate.collection import QrelsError
    from countercase.evaluate.conditions import BY_NAME, CONDITIONS
    from countercase.evaluate.regressions import write_regressions
    from countercase.evaluate.run import VariantSource, aila_jobs, evaluate_collection, trec_job
    from countercase.evaluate.trec import CollectionError
    from countercase.retrieve.load import IndexPaths, MissingIndexError

    started = time.perf_counter()
    params = load_params(params_path)
    unknown = [c for c in condition if c not in BY_NAME]
    if unknown:
        raise UserError(f"unknown condition(s) {', '.join(unknown)}: use {', '.join(BY_NAME)}")
    chosen = [BY_NAME[c] for c in condition] or list(CONDITIONS)
    if (docs or topics or qrels) and not (docs and topics and qrels):
        raise UserError("a TREC collection needs --docs, --topics and --qrels together")
    for path, what in ((docs, "documents"), (topics, "topics"), (qrels, "qrels")):
        require(path, what)
    scores, notes = {}, {}
    try:
        jobs = (trec_job(docs, topics, qrels, out / "index", params) if docs else
                aila_jobs(collection, aila_dir, IndexPaths(index_dir, dense_dir, chunks, metadata)))
        for found, paths, doc_ids in jobs:
            variants = (VariantSource(documents, paths.chunks.parent)
                        if not docs and documents.exists() else None)
            result = evaluate_collection(found, chosen, paths, params.retrieve, params.evaluate,
                                         out, doc_ids, variants)
            scores[found.name] = result.pop("scores")
            notes[found.name] = result
            if regressions:
                write_regressions(regressions, found, chosen, scores[found.name], params)
    except (TopicsError, QrelsError, CollectionError, MissingIndexError, OSError) as error:
        raise UserError(str(error)) from None
    if metrics:
        write_json(metrics, scores)
    if summary:
        write_json(summary, notes)
    if timing:
        write_json(timing, {"total_seconds": round(time.perf_counter() - started, 1),
                             **{f"{name}_seconds": note["seconds"] for name, note in notes.items()}})
    _print_scores(scores)


@app.command()
def tune(
    aila_dir: Path = typer.Option(Path("data/raw/aila2019")),
    out: Path = typer.Option(Path("metrics/tuning.json")),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The tuning grids of the retrieve defaults, scored on AILA_Q1..Q10 (and Q11..Q50)."""
    from countercase.evaluate.collection import aila_collection
    from countercase.evaluate.tuning import tune_precedents, tune_statutes
    from countercase.retrieve.load import IndexPaths, MissingIndexError

    params = load_params(params_path)
    paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
    try:
        report = {
            "aila2019-task1": tune_precedents(aila_collection("aila2019-task1", aila_dir), params,
                                              paths),
            "aila2019-task2": tune_statutes(aila_collection("aila2019-task2", aila_dir), params,
                                            paths)}
    except MissingIndexError as error:
        raise UserError(str(error)) from None
    write_json(out, report)
    for name, found in report.items():
        log.info("%s: best on the tuning queries %s", name, found["best"])


def _print_scores(scores: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    for name, by_condition in scores.items():
        table = Table(title=name)
        measures = list(next(iter(by_condition.values())))
        for column in ["condition", *measures]:
            table.add_column(column)
        for cond, values in by_condition.items():
            table.add_row(cond, *[f"{values[m]:.4f}" for m in measures])
        Console(stderr=True).print(table)


def _result_row(hit, task: str) -> dict:
    who = ({"statute": hit.doc_id} if task == "statutes" else
           {"judgment": hit.doc_id, "case_id": hit.metadata.get("case_id"),
            "year": hit.metadata.get("year")})
    return {"rank": hit.rank, **who, "chunk_id": hit.chunk_id, "page": hit.page_number,
            "section_type": hit.section_type, "source_path": hit.source_path,
            **{name: round(v, 4) for name, v in hit.scores.items()},
            "text": hit.text[:160].replace("\n", " ")}


def _print_rows(rows: list[dict], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    # The passage text and paths are in --json; the table keeps what fits a terminal.
    columns = [c for c in (rows[0] if rows else {}) if c not in ("source_path", "text", "chunk_id")]
    for column in columns:
        table.add_column(column, overflow="fold", max_width=50 if column == "title" else None)
    for row in rows:
        table.add_row(*["" if row[c] is None else str(row[c]) for c in columns])
    Console().print(table if rows else "no results")

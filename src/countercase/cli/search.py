"""Subcommands a user runs first to find precedents: search (the corpus, or your own
judgments with --docs) and serve (the same over HTTP, the system kept open). They parse and
print; the searching is :mod:`countercase.explore.search`'s."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from countercase import layout
from countercase.cli.base import (CHOICE_OPTION, CITATIONS_OPTION, PARAMS_OPTION,
                                  VARIANT_DOCUMENTS_OPTION, UserError, app, index_paths,
                                  option_group, require)
from countercase.config import load_params
from countercase.datasets.limits import KINDS
from countercase.evaluate.variants import chunk_variant
from countercase.explore.search import OpenedSystem, folder_rows, pipeline_rows, readable_rows
from countercase.explore.serve import server
from countercase.layout import IndexPaths
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.registry import system as registered
from countercase.retrieve.served import served_system

log = logging.getLogger("countercase")


@dataclass(frozen=True)
class ServedFiles:
    """What search and serve open beside the indexes: the fact sheets and holding profiles
    each hit is explained with, the citation collection and the tuning choice the systems
    read."""

    sheets: Path
    profiles: Path
    citations: Path
    choice: Path


served_files = option_group(ServedFiles, {
    "sheets": typer.Option(layout.JUDGMENT_SHEETS,
                           help="The judgments' fact sheets (the one-line explanation)."),
    "profiles": typer.Option(layout.HOLDING_PROFILES, help="The holding profiles (the "
                             "explanation's holding, stage holdings)."),
    "citations": CITATIONS_OPTION, "choice": CHOICE_OPTION})


@app.command()
@index_paths
@served_files
def search(
    paths: IndexPaths,
    files: ServedFiles,
    query: str = typer.Argument(..., help="The facts of a case, or any text."),
    task: str = typer.Option("precedents", help="precedents or statutes."),
    year_from: Optional[int] = typer.Option(None),
    year_to: Optional[int] = typer.Option(None),
    section: list[str] = typer.Option([], help="Act section, e.g. IPC-302 (repeatable)."),
    bench: list[str] = typer.Option([], help="Bench type, e.g. Constitution (repeatable)."),
    section_type: list[str] = typer.Option([], help="Facts, Held, Ratio, ... (repeatable)."),
    judge: list[str] = typer.Option([], help="Judge surname (post-filter, repeatable)."),
    k: Optional[int] = typer.Option(None, help="Results to show (default: params)."),
    system: Optional[str] = typer.Option(
        None, help="A system of configs/systems.yaml (default: params.yaml retrieve.system)."),
    kind: str = typer.Option("description", help="What the query is, which the served system "
                             "routes by: description (a case told in prose) or judgment (a "
                             "judgment's own text)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    docs: Optional[Path] = typer.Option(
        None, "--docs", help="Search your own judgments instead of the corpus: a JSONL file of "
        "{id, contents} (a TREC folder's docs.jsonl), indexed once under --collections and "
        "served as a collection of documents only."),
    collections: Path = typer.Option(layout.USER_COLLECTIONS, help="Where the indexes of a "
                                     "--docs file are kept, one folder per file."),
    documents: Path = VARIANT_DOCUMENTS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Search precedents (judgments) or statutes with any system of the registry: a pipeline
    system (a chunking variant too) shows the passage that ranked each judgment; the others
    rank whole judgments."""
    _check(query, task, k, kind, {"--section": section, "--bench": bench,
                                  "--section-type": section_type, "--judge": judge})
    params = load_params(params_path)
    if docs is not None:
        filtered = any((year_from, year_to, section, bench, section_type, judge))
        _print_hits(_your_judgments(query, docs, system or served_system(params, task), task,
                                    kind, k or params.retrieve.k, params, collections,
                                    filtered), as_json)
        return
    spec = registered(system or served_system(params, task))
    if task not in spec.tasks:
        raise UserError(f"system {spec.name} ranks {', '.join(spec.tasks)} only, not {task}")
    if spec.chunking is not None:  # BM25 over the judgments cut again, as stage chunkings built it
        require(documents, "documents file (stage ingest)")
        paths = chunk_variant(documents, paths.chunks.parent, *spec.chunking,
                              layout.CHUNKINGS, params.extract)
    elif not spec.pipeline:
        # every system applies a collection's limit (decided no later than a year) in its search
        if any((year_from, section, bench, section_type, judge)):
            raise UserError(f"system {spec.name} takes no filter but --year-to (it is no "
                            "pipeline over the built indexes); the pipeline systems take "
                            "--year-from, --section, ...")
        rows = OpenedSystem(spec, task, paths, params, files.citations, files.choice).rows(
            query, k or params.retrieve.k, kind, year_to)
    if spec.pipeline or spec.chunking is not None:
        filters = SearchFilter.build(year_from, year_to, section, bench, section_type, (), judge)
        rows = pipeline_rows(query, task, spec, paths, params, filters, k)
    _print_hits(readable_rows(query, rows, paths, files.sheets, files.profiles)
                if task == "precedents" else rows, as_json)


def _check(query: str, task: str, k: int | None, kind: str,
           filters: dict[str, list[str]]) -> None:
    """Refuse a search that cannot be run as asked, naming the option."""
    if task not in layout.TASKS:
        raise UserError(f"unknown task {task!r}: use precedents or statutes")
    if not query.strip():
        raise UserError("empty query: give the facts of a case to search with")
    if k is not None and k < 1:
        raise UserError(f"--k {k}: give the number of results to show, 1 or more")
    if kind not in KINDS:
        raise UserError(f"--kind {kind}: use {' or '.join(KINDS)}")
    for option, values in filters.items():
        if any(not value.strip() for value in values):
            raise UserError(f"{option} '': an empty filter; give a value or leave the option out")


def _your_judgments(query: str, docs: Path, system: str, task: str, kind: str, k: int, params,
                    collections: Path, filtered: bool) -> list[dict]:
    """The readable hits of ``system`` over the judgments of ``docs`` (indexed once)."""
    if task != "precedents":
        raise UserError("--docs searches your judgments (the precedents task), not statutes")
    if filtered:
        raise UserError("--docs: your judgments carry no metadata to filter by; leave out "
                        "--year-from, --year-to, --section, --bench, --section-type, --judge")
    require(docs, "documents file (--docs)")
    rows, paths = folder_rows(query, docs, system, kind, k, params, collections)
    # no sheets or profiles of your judgments: the explanation names the shared terms
    return readable_rows(query, rows, paths, paths.holdings, paths.holdings)


@app.command()
@index_paths
@served_files
def serve(
    paths: IndexPaths,
    files: ServedFiles,
    host: str = typer.Option("127.0.0.1", help="The address to listen on."),
    port: int = typer.Option(8765, help="The port (0: any free one)."),
    system: Optional[str] = typer.Option(
        None, help="A system of configs/systems.yaml (default: params.yaml retrieve.system)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Keep the served system open and answer searches over HTTP at its latency:
    GET /search?q=TEXT[&kind=judgment][&k=10] gives the hits as `search --json` prints them."""
    params = load_params(params_path)
    spec = registered(system or served_system(params, "precedents"))
    if spec.pipeline or spec.chunking is not None:
        raise UserError(f"system {spec.name}: serve answers with a system ranked as evaluate "
                        "ranks it (the served route, a learned ranker, BM25 over judgments)")
    opened = OpenedSystem(spec, "precedents", paths, params, files.citations, files.choice)

    def search(query: str, kind: str, k: int) -> list[dict]:
        return readable_rows(query, opened.rows(query, k, kind), paths, files.sheets,
                             files.profiles)

    for kind in KINDS:  # every route's indexes and models loaded before the first user
        search("warm-up", kind, 1)
    httpd = server(search, spec.name, KINDS, params.retrieve.k, host, port)
    log.info("serving %s at http://%s:%d/search?q=... (Ctrl-C stops)", spec.name,
             *httpd.server_address[:2])
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()



def _print_hits(rows: list[dict], as_json: bool) -> None:
    """Each judgment as a reader wants it (parties, case, passage, why); --json keeps every
    field; statutes as a table."""
    if as_json or not rows or "why" not in rows[0]:
        _print_rows(rows, as_json)
        return
    for row in rows:
        score = next((row[k] for k in ("score", "final", "fused", "bm25") if k in row), None)
        where = ", ".join(str(row[k]) for k in ("case_id", "date") if row.get(k))
        typer.echo(f"{row['rank']}. {row['judgment']}  {row.get('parties') or ''}"
                   + (f"  ({where})" if where else "")
                   + (f"  score {score:.4f}" if isinstance(score, float) else ""))
        typer.echo(f"   why: {row['why']}")
        if row.get("passage"):
            typer.echo(f"   passage: {row['passage']}")
        typer.echo("")


def _print_rows(rows: list[dict], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(show_lines=False)
    # The passage text and paths are in --json; the table keeps what fits a terminal.
    columns = [c for c in (rows[0] if rows else {}) if c not in ("source_path", "text", "chunk_id")]
    for column in columns:
        table.add_column(column, overflow="fold", max_width=50 if column == "title" else None)
    for row in rows:
        table.add_row(*["" if row[c] is None else str(row[c]) for c in columns])
    Console().print(table if rows else "no results")

"""Subcommands of the fact sheets: factsheets (stage factsheets: every judgment and query),
adjacency (stage adjacency: the section map the edits move along) and factsheet (one case's
sheet, for a user)."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from countercase import layout
from countercase.cli.base import (LIVE_OPTION, PARAMS_OPTION, TIMING_OPTION, UserError, app,
                                  metrics_option, read_json, require, require_each, write_json)
from countercase.config import load_params
from countercase.datasets.aila import read_queries
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.run import run_stage
from countercase.factsheet.schema import validate_sheet
from countercase.factsheet.show import case_text, find_sheet, render, stage_records
from countercase.legal.adjacency import build_adjacency
from countercase.ner.candidates import tag_sheet_texts
from countercase.ner.confidence import sheet_confidence
from countercase.ner.entities import EntityTag, EntityTagger

log = logging.getLogger("countercase")


@app.command()
def factsheets(
    documents: Path = typer.Option(layout.DOCUMENTS),
    extract_dir: Path = typer.Option(layout.EXTRACT),
    queries: Path = typer.Option(layout.AILA_QUERIES, help="AILA topics."),
    out: Path = typer.Option(layout.FACTSHEETS),
    metrics: Optional[Path] = metrics_option("the coverage"),
    timing: Optional[Path] = TIMING_OPTION,
    ner_model: Optional[Path] = typer.Option(
        None, help="The trained entity tagger (stage train_ner): tag the sheets' texts."),
    recording: Path = typer.Option(layout.recording("factsheets"),
                                   help="The LLM's recorded answers."),
    live: bool = LIVE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Rule fact sheets of every judgment and every AILA query."""
    require_each((documents, "documents file"), (extract_dir, "extract folder"),
                 (queries, "topics file"))
    topics = read_queries(queries)
    params = load_params(params_path)
    tag = None
    if ner_model is not None:  # entity tags beside the sheets (rules alone if no model)
        tag = partial(tag_sheet_texts, model_dir=ner_model,
                      n_judgments=params.factsheets.ner_judgments, seed=params.seed,
                      threads=params.ner.threads)
    report = run_stage(params, documents, extract_dir, topics, out, recording,
                       "live" if live else params.llm.mode, tag)
    if metrics:
        write_json(metrics, {k: v for k, v in report.items() if k != "timing"})
    if timing:
        write_json(timing, report["timing"])


@app.command()
def adjacency(
    extract_dir: Path = typer.Option(layout.EXTRACT),
    out: Path = typer.Option(layout.SECTION_EDGES),
    metrics: Optional[Path] = metrics_option("the edge counts"),
    min_count: int = typer.Option(3, min=1, help="Co-citations needed for an edge."),
) -> None:
    """The section adjacency map (chapters, cross-references, co-citation, IPC->BNS, CrPC->BNSS)."""
    for name in ("statutes.parquet", "constitution_crossrefs.parquet", "metadata.parquet"):
        require(extract_dir / name, f"extract stage output {name}")
    metadata = pd.read_parquet(extract_dir / "metadata.parquet", columns=["act_sections"])
    edges = build_adjacency(pd.read_parquet(extract_dir / "statutes.parquet"),
                            pd.read_parquet(extract_dir / "constitution_crossrefs.parquet"),
                            (s for s in metadata["act_sections"] if s is not None), min_count)
    out.parent.mkdir(parents=True, exist_ok=True)
    edges.to_parquet(out, index=False)
    nodes = set(edges["source"]) | set(edges["target"])
    if metrics:
        write_json(metrics, {"n_edges": len(edges), "n_sections": len(nodes),
                              "edges_per_kind": edges["kind"].value_counts().sort_index().to_dict()})
    log.info("%d edges over %d sections -> %s", len(edges), len(nodes), out)


@app.command()
def factsheet(
    text: Optional[str] = typer.Argument(None, help="Case text (facts) to read."),
    case_id: Optional[str] = typer.Option(None, help="A judgment or AILA query id (C12, AILA_Q3)."),
    file: Optional[Path] = typer.Option(None, help="A fact sheet JSON to check and show."),
    text_file: Optional[Path] = typer.Option(
        None, help="Read the case text from this file ('-': standard input), for long texts."),
    sheets_dir: Path = typer.Option(layout.FACTSHEETS),
    ner_model: Optional[Path] = typer.Option(
        None, help="Entity tagger (default: data/processed/ner/model when it is there)."),
    documents: Path = typer.Option(layout.DOCUMENTS,
                                   help="Judgment texts, for --case-id."),
    queries: Path = typer.Option(layout.AILA_QUERIES,
                                 help="AILA topics, for --case-id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One fact sheet, from raw text, a corpus or query id, or a fact sheet file, with the
    confidence of each value and the entity tags highlighted in its text."""
    given = [x for x in (text, case_id, file, text_file) if x is not None]
    if len(given) != 1:
        raise UserError("give exactly one of: case text, --text-file, --case-id, --file")
    if text_file is not None:
        text = _read_text(text_file)
    if text is not None and not text.strip():
        raise UserError("empty text: give the facts of a case")
    if ner_model is not None:
        require(ner_model, "NER model folder")
    source_text, tags, others = None, None, []
    if file:
        require(file, "fact sheet file")
        if file.is_dir():
            raise UserError(f"fact sheet file {file} is a folder, not a JSON file")
        sheet = validate_sheet(read_json(file))
    elif case_id:
        sheet = find_sheet(case_id, sheets_dir)
        others = [validate_sheet(r) for r in stage_records(case_id, sheets_dir / "llm.jsonl")]
        stored = stage_records(case_id, sheets_dir / "entities.jsonl")
        tags = [EntityTag(**t) for t in stored[0]["tags"]] if stored else None
        source_text = case_text(case_id, queries, documents)
    else:
        sheet, source_text = extract_rules(text, "text", "text"), text
    if tags is None and source_text is not None:
        tags = _tag_facts(sheet, source_text, ner_model)
    if as_json:
        typer.echo(sheet.model_dump_json(indent=2))
    else:
        render(sheet, source_text, sheet_confidence(sheet, others, tags), tags)


def _read_text(path: Path) -> str:
    """A case text from a file or, for '-', standard input; undecodable bytes are replaced."""
    if str(path) == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    require(path, "text file")
    if path.is_dir():
        raise UserError(f"text file {path} is a folder")
    return path.read_bytes().decode("utf-8", errors="replace")


def _tag_facts(sheet, text: str, ner_model: Optional[Path]) -> list:
    """Entity tags of the sheet's facts, offsets into the whole text."""
    model = ner_model if ner_model is not None else layout.NER_MODEL
    start, end = sheet.facts_span.start, sheet.facts_span.end
    if sheet.source != "judgment":
        start, end = 0, len(text)
    tags = EntityTagger(model).tag(text[start:end])
    return [replace(t, start=t.start + start, end=t.end + start) for t in tags]

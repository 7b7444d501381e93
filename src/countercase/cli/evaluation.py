"""Subcommands that score systems: evaluate (stage evaluate: every system on the test queries,
with significance tests), regress (stage regress: the scores against regressions/) and
leakage-audit (stage leakage)."""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from countercase import layout
from countercase.cli.base import (AILA_OPTION, CHOICE_OPTION, CITATIONS_OPTION, PARAMS_OPTION,
                                  PART_OPTION, PARTS_OPTION, TIMING_OPTION,
                                  VARIANT_DOCUMENTS_OPTION, UserError, app, index_paths,
                                  metrics_option, part_of, require, require_folder, writable,
                                  write_json)
from countercase.config import load_params
from countercase.datasets import AILA_COLLECTIONS
from countercase.datasets.limits import KINDS
from countercase.evaluate import verify as run
from countercase.evaluate.leakage_audit import audit
from countercase.evaluate.regressions import select
from countercase.evaluate.run import EvaluateInputs, VariantSource, run_evaluate
from countercase.evaluate.variants import build_all
from countercase.layout import IndexPaths
from countercase.report import stage_times
from countercase.retrieve.choices import Choices
from countercase.retrieve.registry import BY_NAME, DEFAULT, OPT_IN
from countercase.runtime.cpu import cpu_class as here

log = logging.getLogger("countercase")
# what the scoring commands run the conditions with
FT_CHOICE_OPTION = typer.Option(layout.TUNING_FT_CHOICE,
                                help="The tune_ft stage's choice (the fine-tuned encoder).")
OPT_IN_OPTION = typer.Option(False, "--opt-in", help="The conditions of the opt-in pipeline "
                             "(experiments/dvc.yaml): those of the fine-tuned encoder.")


@app.command("leakage-audit")
@index_paths
def leakage_audit(
    paths: IndexPaths,
    aila_dir: Path = AILA_OPTION,
    citations: Path = CITATIONS_OPTION,
    choice: Path = CHOICE_OPTION,
    metrics: Path = typer.Option(layout.metrics("leakage"), help="Write the audit here (JSON)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The statute task's leakage audit: its statute systems scored again with the near-copies
    of each query kept from the statute bridge at lower shares of its text, and without the
    queries that have one (params.yaml leakage)."""
    writable(metrics, "metrics file")
    params = load_params(params_path)
    report = audit(params, paths, aila_dir,
                   citations, Choices({"tuning": choice}))
    write_json(metrics, report)
    log.info("leakage audit: the drop at %s -> %s", params.leakage.headline, metrics)


@app.command()
def chunkings(
    documents: Path = VARIANT_DOCUMENTS_OPTION,
    extract_dir: Path = typer.Option(layout.EXTRACT, help="The extract stage's folder."),
    out: Path = typer.Option(layout.CHUNKINGS),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Cut the judgments again at every chunking variant configs/systems.yaml names, each with
    its BM25 index (read by evaluate, regress and search)."""
    require_folder(extract_dir, "extract folder (stage extract)")
    require(documents, "documents file (stage ingest)")
    writable(out, "output folder", folder=True)
    made = build_all(documents, extract_dir, out, load_params(params_path).extract)
    log.info("chunkings %s -> %s", ", ".join(f"{s}/{o}" for s, o in made), out)


@app.command()
@index_paths
def evaluate(
    paths: IndexPaths,
    collection: list[str] = typer.Option(
        [], help="aila2019-task1, aila2019-task2 and/or citations (the citation collection's "
                 "held-out half; default: all three)."),
    system: list[str] = typer.Option(
        [], "--system", "--condition", help="Systems of configs/systems.yaml to run (default: "
        "every one the default pipeline builds; with --opt-in, the opt-in ones)."),
    opt_in: bool = OPT_IN_OPTION,
    aila_dir: Path = AILA_OPTION,
    docs: Optional[Path] = typer.Option(None, help="Another collection: documents JSONL."),
    topics: Optional[Path] = typer.Option(None, help="Its topics: qid<TAB>text."),
    qrels: Optional[Path] = typer.Option(None, help="Its qrels (TREC format)."),
    kind: str = typer.Option("description", help="What its topics are, which the served system "
                             "routes by: description (cases told in prose) or judgment "
                             "(judgments' own texts)."),
    out: Path = typer.Option(layout.EVALUATE),
    citations: Path = CITATIONS_OPTION,
    choice: Path = CHOICE_OPTION,
    ft_choice: Path = FT_CHOICE_OPTION,
    metrics: Optional[Path] = metrics_option("the scores"),
    summary: Optional[Path] = metrics_option("tests, timings, notes"),
    timing: Optional[Path] = TIMING_OPTION,
    documents: Path = VARIANT_DOCUMENTS_OPTION,
    chunkings_dir: Path = typer.Option(layout.CHUNKINGS, "--chunkings",
                                       help="The chunking variants (stage chunkings)."),
    resume_dir: Optional[Path] = typer.Option(
        layout.EVALUATE_RESUME, help="Each condition's run is kept here as it is ranked; a run "
        "on the same inputs (files, parameters, code) reads them back. Cleared when done."),
    compare_runs: Optional[Path] = typer.Option(
        None, help="Another evaluation's runs (the default pipeline's, for --opt-in): its "
                   "reference runs are read back and tested against, not ranked again."),
    part: Optional[str] = PART_OPTION,
    parts: int = PARTS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Score every system on the AILA 2019 test queries and the citation collection's
    held-out half (or a TREC collection), with significance tests."""
    started = time.perf_counter()
    share = part_of(part, parts)
    for path, what in ((metrics, "metrics file"), (summary, "summary file"),
                       (timing, "timing file")):
        writable(path, what)
    writable(out, "output folder", folder=True)
    params = load_params(params_path)
    chosen = _systems(system, opt_in)
    if (docs or topics or qrels) and not (docs and topics and qrels):
        raise UserError("a TREC collection needs --docs, --topics and --qrels together")
    known = _check_collections(kind, docs, collection)
    inputs = EvaluateInputs(paths, aila_dir,
                            citations, choice, ft_choice, documents,
                            (docs, topics, qrels) if docs else None, trec_kind=kind,
                            chunkings=chunkings_dir)
    resume = (resume_dir, json.dumps([collection, system, opt_in, kind])) if resume_dir else None
    scores, notes = run_evaluate(params, chosen, bool(system), collection or known, inputs,
                                 out, resume, compare_runs, share, parts)
    stage_times.carry(sum(note["seconds_in_earlier_runs"] for note in notes.values()))
    if resume_dir is not None:
        shutil.rmtree(resume_dir, ignore_errors=True)
    if share:
        log.info("evaluate part %d of %d: runs in %s", *share, layout.part(out, *share))
        return
    if metrics:
        write_json(metrics, scores)
    if summary:
        write_json(summary, notes)
    if timing:
        write_json(timing, {"total_seconds": round(time.perf_counter() - started, 1),
                             **{f"{name}_seconds": note["seconds"] for name, note in notes.items()}})
    _print_scores(scores)


def _check_collections(kind: str, docs: Optional[Path], collection: list[str]) -> list[str]:
    """The corpus's collections, once ``kind`` and ``collection`` are known to be valid."""
    if kind not in KINDS:
        raise UserError(f"--kind {kind}: use {' or '.join(KINDS)}")
    if kind != "description" and not docs:
        raise UserError("--kind is what a TREC collection's topics are (with --docs); the "
                        "corpus's collections say their own")
    known = [*AILA_COLLECTIONS, "citations"]
    unknown = [c for c in collection if c not in known]
    if unknown:
        raise UserError(f"unknown collection(s) {', '.join(unknown)}: use {', '.join(known)}")
    return known


def _systems(names: list[str], opt_in: bool = False) -> list:
    unknown = [c for c in names if c not in BY_NAME]
    if unknown:
        raise UserError(f"unknown system(s) {', '.join(unknown)} (configs/systems.yaml): use "
                        f"{', '.join(BY_NAME)}")
    return [BY_NAME[c] for c in names] or list(OPT_IN if opt_in else DEFAULT)


@app.command()
@index_paths
def regress(
    paths: IndexPaths,
    refs: Optional[list[str]] = typer.Argument(None, help="collection/condition, or a condition of "
                                                 "every collection (default with --all: all)."),
    verify: bool = typer.Option(False, "--verify", help="Score again and fail on drift."),
    update: bool = typer.Option(False, "--update", help="Record new expected scores."),
    all_: bool = typer.Option(False, "--all", help="Every regression file of the default "
                              "pipeline's conditions (with --opt-in, of the opt-in ones)."),
    opt_in: bool = OPT_IN_OPTION,
    reason: str = typer.Option("", help="Why the expected scores change (with --update)."),
    cpu_class: bool = typer.Option(
        False, "--cpu-class", help="With --update: record the scores as this machine's CPU "
        "class's own, beside the reference record (a class whose trained models differ)."),
    runs: Optional[Path] = typer.Option(
        None, help="Score the run files here (the evaluate stage's out) instead of re-running."),
    regressions: Path = typer.Option(layout.REGRESSIONS, help="The regression files."),
    metrics: Optional[Path] = metrics_option("the verification"),
    aila_dir: Path = AILA_OPTION,
    documents: Path = VARIANT_DOCUMENTS_OPTION,
    variants_dir: Path = typer.Option(layout.CHUNKINGS,
                                      help="The chunking variants (stage chunkings)."),
    citations: Path = CITATIONS_OPTION,
    choice: Path = CHOICE_OPTION,
    ft_choice: Path = FT_CHOICE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Check the scores of the conditions against regressions/ (--verify), or record new
    expected scores with a reason (--update)."""
    refs = refs or []
    if verify == update:
        raise UserError("give one of --verify and --update")
    if bool(refs) == all_:
        raise UserError("name the regressions (collection/condition) or give --all")
    require_folder(runs, "runs folder (--runs: the evaluate stage's out)")
    writable(metrics, "metrics file")
    params = load_params(params_path)
    variants = (VariantSource(documents, paths.chunks.parent, variants_dir)
                if documents.exists() else None)
    choices = Choices({"tuning": choice, "tuning_ft": ft_choice})
    linked = citations if citations.is_dir() else None

    if update:
        if not reason.strip():
            raise UserError("--update needs --reason: say why the expected scores change")
        records = ([run.new_record(ref) for ref in refs] if refs
                   else select(regressions, [], opt_in))
        for path in run.update(records, regressions, params, paths, variants, runs, aila_dir,
                               reason, choices, linked, here() if cpu_class else None):
            log.info("%s: expected scores recorded", path)
        return
    records = select(regressions, refs, opt_in)
    drifts = run.verify(records, params, paths, variants, runs, aila_dir, choices, linked)
    columns = ["collection", "condition", "measure", "expected", "found", "diff"]
    if metrics:
        cpu = here()
        write_json(metrics, {"regressions": len(records), "drifts": len(drifts),
                             "passed": not drifts, "cpu_class": cpu,
                             "own_records": sum(cpu in (r.get("by_cpu") or {}) for r in records),
                             "moved": [dict(zip(columns, d.row())) for d in drifts]})
    if drifts:
        _print_table("regressions that moved", columns, [d.row() for d in drifts])
        typer.echo(f"regress: {len(drifts)} drift(s) in {len(records)} regression(s)", err=True)
        raise typer.Exit(1)
    typer.echo(f"regress: {len(records)} regression(s) verified, no drift", err=True)


def _print_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console(stderr=True, width=160).print(table)


def _print_scores(scores: dict) -> None:
    for name, by_condition in scores.items():
        if not by_condition:  # --opt-in scores the precedent collections only
            continue
        measures = [m for m, v in next(iter(by_condition.values())).items()
                    if isinstance(v, (int, float))]
        _print_table(name, ["condition", *measures],
                     [[f"{cond} ({values['system']})" if "system" in values else cond,
                       *(f"{values[m]:.4f}" for m in measures)]
                      for cond, values in by_condition.items()])

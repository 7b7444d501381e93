"""Subcommands of the retrieval stages: index, index-facts, embed, latency, tune, tune-ft."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from countercase import layout
from countercase.cli.base import (AILA_OPTION, CHOICE_OPTION, CITATIONS_OPTION, PARAMS_OPTION,
                                  PART_OPTION, PARTS_OPTION, TIMING_OPTION, UserError, app,
                                  index_paths, metrics_option, part_of, require, require_each,
                                  require_folder, write_json)
from countercase.config import load_params, write_choice
from countercase.datasets import load
from countercase.datasets.aila import read_queries
from countercase.datasets.citations import read_citations
from countercase.evaluate.tuning import choice as chosen, tune_precedents, tune_statutes
from countercase.evaluate.tuning_ft import choice_ft, tune_ft as run_tune_ft
from countercase.extract.years import read_years
from countercase.factsheet.store import read_sheets
from countercase.index.dense import read_meta
from countercase.index.facts import build_fact_index, statute_chapters
from countercase.index.run import run_embed, run_index
from countercase.layout import IndexPaths
from countercase.report import stage_times
from countercase.retrieve.choices import Choices
from countercase.retrieve.compose import open_composer, routed, why_not
from countercase.retrieve.latency import PLAIN, RERANKED, run_latency
from countercase.retrieve.ranker import Ranker
from countercase.retrieve.registry import CORPUS_SUPPLIES, system as registered
from countercase.runtime.cpu import facts

log = logging.getLogger("countercase")


@app.command()
def index(
    chunks: Path = typer.Option(layout.CHUNKS),
    metadata: Path = typer.Option(layout.METADATA),
    documents: Path = typer.Option(layout.DOCUMENTS),
    statutes: Path = typer.Option(layout.AILA_STATUTES,
                                  help="The AILA Task-2 statutes."),
    statute_table: Path = typer.Option(layout.STATUTE_TABLE,
                                       help="The statute table of the extract stage."),
    out: Path = typer.Option(layout.INDEX),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """BM25 indexes of both tasks at chunk and at document level."""
    require_each((chunks, "chunks file"), (metadata, "metadata file"),
                 (documents, "documents file"), (statutes, "statutes archive"),
                 (statute_table, "statute table"))
    params = load_params(params_path)
    stats = run_index(chunks, metadata, documents, statutes, statute_table, out, params.index,
                      params.extract)
    if timing:
        write_json(timing, stats["timing"])


@app.command("index-facts")
def index_facts(
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS,
                                help="The judgments' fact sheets (stage factsheets)."),
    metadata: Path = typer.Option(layout.METADATA),
    statute_table: Path = typer.Option(layout.STATUTE_TABLE,
                                       help="The statute table (sections' chapters)."),
    out: Path = typer.Option(layout.FACT_INDEX),
    metrics: Optional[Path] = metrics_option("the token counts"),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The fact channel: every judgment's fact sheet as legal-fact tokens in Lucene."""
    require_each((sheets, "fact sheets (stage `factsheets`)"), (metadata, "metadata file"),
                 (statute_table, "statute table"))
    params = load_params(params_path)
    stats = build_fact_index(read_sheets(sheets), read_years(metadata),
                             statute_chapters(pd.read_parquet(statute_table)), out,
                             params.index.threads)
    log.info("fact index of %d judgments -> %s", stats["judgments"], out)
    if metrics:
        write_json(metrics, stats)


@app.command()
def embed(
    chunks: Path = typer.Option(layout.CHUNKS),
    statute_chunks: Path = typer.Option(layout.STATUTE_CHUNKS),
    citations: Path = CITATIONS_OPTION,
    out: Path = typer.Option(layout.DENSE),
    encoder: Optional[Path] = typer.Option(
        None, help="A sentence-transformers folder to embed with instead of index.encoder (the "
                   "fine-tuned encoder, stage train_biencoder); its embeddings are never reused."),
    part: Optional[str] = PART_OPTION,
    parts: int = PARTS_OPTION,
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Dense embeddings of both tasks' chunks (reused when the texts are unchanged)."""
    require(chunks, "chunks file")
    require(statute_chunks, "statute chunk table (stage `index`)")
    share = part_of(part, parts)
    loaded = load_params(params_path)
    params = loaded.index
    target = layout.part(out, *share) if share else out
    if encoder is not None:
        require_folder(encoder, "encoder folder")
        # the weights behind a folder's name can change: what was embedded with them is redone
        for task in layout.TASKS:
            (target / task / "meta.json").unlink(missing_ok=True)
        # the int8 rule was measured on the packaged encoder only (configs/int8_choice.yaml)
        params = params.model_copy(update={"encoder": str(encoder), "precision": "float32"})
    tuning = None
    if params.precision == "onnx-int8" and parts == 1:
        require_folder(citations, "citation collection (stage `citations`)")
        tuning = set(read_citations(citations).qids("tuning"))
    stats = run_embed(chunks, statute_chunks, out, params, tuning, loaded.seed, share, parts)
    # Reused embeddings were encoded by an earlier run: the speed measured then is in their
    # meta.json (DVC deletes the timing file before the stage runs; the embeddings persist)
    kept = {f"{task}_{key}": meta[key] for task in layout.TASKS
            if stats["timing"].get(f"{task}_reused")
            and (meta := read_meta(target / task)) is not None
            for key in ("seconds", "passages_per_second") if meta.get(key) is not None}
    # the stage's row counts what its stored vectors cost, not the seconds it took to reuse
    # them (when joined from parts, the parts' rows count it)
    stage_times.carry(sum(v for k, v in kept.items() if k.endswith("_seconds")
                          and not (parts > 1 and k.startswith(layout.TASKS[0]))))
    if timing:
        write_json(timing, {**kept, **stats["timing"], "encoder": stats["encoder"],
                            "precision": stats["precision"], "precisions": stats["precisions"],
                            **({"parts": parts} if parts > 1 else {}), "cpu": facts()})


@app.command()
@index_paths
def latency(
    paths: IndexPaths,
    queries: Path = typer.Option(layout.AILA_QUERIES, help="AILA topics."),
    out: Path = typer.Option(layout.metrics("latency")),
    citations: Path = CITATIONS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Per-stage p50/p95 latency of the retrieval pipeline over the AILA queries, and of the
    served system when it is no pipeline."""
    require(queries, "topics file")
    texts = list(read_queries(queries).values())
    params = load_params(params_path)
    spec, served = registered(params.retrieve.system), {}
    if not spec.pipeline and "precedents" in spec.tasks:
        why = why_not([spec], "precedents", params.retrieve, Choices(), CORPUS_SUPPLIES,
                      paths.fact_index)
        if why:
            log.warning("the served system %s is not timed: %s", spec.name, why[spec.name])
        else:
            rank = open_composer("precedents", paths, params.retrieve, params.evaluate,
                                 Choices(), citations=citations).system(spec.name)
            # a route is timed on each kind of query (the AILA texts read as each kind)
            routes = (routed(spec, "precedents", params.retrieve, Choices(), CORPUS_SUPPLIES,
                             paths.fact_index) if spec.level == "route"
                      else {"description": spec.name})
            served = {kind: (name, rank) for kind, name in routes.items()}
    plain = {task: open_composer(task, paths, params.retrieve, params.evaluate,
                                 Choices()).ranker(PLAIN)
             for task in ("precedents", "statutes")}

    def reranked(reranker) -> Ranker:
        return open_composer("precedents", paths, params.retrieve, params.evaluate, Choices(),
                             reranker=reranker).ranker(RERANKED)
    report = run_latency(texts, params.retrieve, plain, reranked, served)
    write_json(out, report)
    log.info("latency of %d queries -> %s", len(texts), out)


@app.command()
@index_paths
def tune(
    paths: IndexPaths,
    aila_dir: Path = AILA_OPTION,
    citations: Path = CITATIONS_OPTION,
    out: Path = typer.Option(layout.metrics("tuning")),
    choice: Path = typer.Option(layout.TUNING_CHOICE, help="Where the choice and its rule go."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The tuning grids: precedents on the citation collection's tuning half (AILA_Q1..Q10
    beside it), statutes on AILA_Q1..Q10; the choice written before any test is scored."""
    require_folder(aila_dir, "AILA folder")
    require_folder(citations, "citation collection (stage citations)")
    params = load_params(params_path, adopt=())  # its own choice is none of its inputs
    tuning = load("citations/tuning", citations)
    statutes = load("aila2019/task2/tuning", aila_dir)
    precedents = tune_precedents(tuning, load("aila2019/task1/tuning", aila_dir), params, paths,
                                 read_citations(citations).links)
    report = {"precedents": precedents,
              "statutes": tune_statutes(statutes, params, paths, precedents)}
    write_json(out, report)
    picked = chosen(report, tuning, statutes)
    write_choice(choice, picked, "Written by `countercase tune` (stage tune) before the test "
                 "queries are scored; the grids are in\nmetrics/tuning.json. The stages that "
                 "retrieve read it (countercase.config.CHOICES).")
    log.info("tune: %s", picked)


@app.command("tune-ft")
@index_paths
def tune_ft(
    paths: IndexPaths,
    citations: Path = CITATIONS_OPTION,
    split: Path = typer.Option(layout.BIENCODER_SPLIT,
                               help="The fine-tuned encoder's train and dev queries (stage "
                                    "train_biencoder)."),
    ft_dense: Path = typer.Option(layout.DENSE_FT, help="Its embeddings (stage embed_ft)."),
    choice: Path = CHOICE_OPTION,
    out: Path = typer.Option(layout.metrics("tuning_ft")),
    ft_choice: Path = typer.Option(layout.TUNING_FT_CHOICE,
                                   help="Where the weight and its rule go."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The fine-tuned encoder's fusion weight, chosen on the dev queries it never trained on;
    the choice written before any test is scored."""
    require_folder(citations, "citation collection (stage citations)")
    require_folder(ft_dense / "precedents", "fine-tuned embeddings (stage embed_ft)")
    try:
        dev_ids = json.loads(split.read_text(encoding="utf-8"))["dev"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(f"cannot read the dev queries from {split}: {error} "
                        "(stage train_biencoder, `make repro-extended`)") from None
    dev = load("citations/tuning", citations).subset(dev_ids, "dev")
    if not dev.queries:
        raise UserError(f"{split}: none of its dev queries is a tuning query of {citations}")
    params = load_params(params_path)
    report = run_tune_ft(dev, params, paths,
                         ft_dense, Choices({"tuning": choice}), read_citations(citations).links)
    write_json(out, report)
    picked = choice_ft(report, dev)
    write_choice(ft_choice, picked, "Written by `countercase tune-ft` (stage tune_ft) before "
                  "the test queries are scored; the grid is in\nmetrics/tuning_ft.json.")
    log.info("tune-ft: %s", picked)

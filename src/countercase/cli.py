"""The ``countercase`` command: one subcommand per pipeline stage (the DVC stage of the same name).

Every subcommand takes explicit input and output paths and reads its parameters from
``params.yaml``. Errors a user can fix are printed as one line naming the input; nothing
prints a stack trace unless ``--verbose`` asks for it.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from countercase.config import ConfigError, load_params

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Counterfactual precedent retrieval over Indian Supreme Court judgments.")
log = logging.getLogger("countercase")

PARAMS_OPTION = typer.Option(Path("params.yaml"), "--params", help="Parameters file.")
TIMING_OPTION = typer.Option(None, help="Write wall-clock timings here (JSON).")
# Where the stages put what retrieval reads (countercase.retrieve.load.IndexPaths).
INDEX_DIR_OPTION = typer.Option(Path("data/processed/index"), help="Output of the index stage.")
DENSE_DIR_OPTION = typer.Option(Path("data/processed/dense"), help="Output of the embed stage.")
CHUNKS_OPTION = typer.Option(Path("data/processed/extract/chunks.parquet"))
METADATA_OPTION = typer.Option(Path("data/processed/extract/metadata.parquet"))


class UserError(Exception):
    """An error caused by the user's input; shown as one line, exit status 2."""


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pdfminer").setLevel(logging.ERROR)


def _write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _require(path: Optional[Path], what: str) -> None:
    if path is not None and not path.exists():
        raise UserError(f"{what} not found: {path}")


@app.command()
def ingest(
    aila: Optional[Path] = typer.Option(None, help="AILA judgments: a .tar.gz or a folder of .txt."),
    pdfs: Optional[Path] = typer.Option(None, help="Folder of judgment PDFs."),
    sc_root: Optional[Path] = typer.Option(
        None, help="Local copy of the indian-supreme-court-judgments open-data bucket."),
    out: Path = typer.Option(Path("data/processed/ingest"), help="Output folder."),
    metrics: Optional[Path] = typer.Option(None, help="Write the counts here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Read judgments from every source into documents.jsonl (+ failures.jsonl)."""
    from countercase.ingest.pdf import PdfDirectorySource
    from countercase.ingest.run import run_ingest
    from countercase.ingest.sc_opendata import ScOpenDataSource
    from countercase.ingest.text import TextSource

    params = load_params(params_path).ingest
    for path, what in ((aila, "AILA judgments"), (pdfs, "PDF folder"), (sc_root, "open-data copy")):
        _require(path, what)
    sources = []
    if aila:
        sources.append(TextSource(aila))
    if pdfs:
        sources.append(PdfDirectorySource(pdfs, params))
    if sc_root:
        sources.append(ScOpenDataSource(sc_root, params))
    if not sources:
        raise UserError("nothing to ingest: give --aila, --pdfs or --sc-root")
    stats = run_ingest(sources, out)
    log.info("ingested %d documents (%d pages), %d failures -> %s", stats["n_documents"],
             stats["n_pages"], stats["n_failures"], out)
    timings = {k: v for k, v in stats.items() if "second" in k}
    if metrics:
        _write_json(metrics, {k: v for k, v in stats.items() if k not in timings})
    if timing:
        _write_json(timing, timings)


@app.command()
def extract(
    documents: Path = typer.Option(Path("data/processed/ingest/documents.jsonl")),
    statutes: Path = typer.Option(Path("data/raw/statutes"), help="Shipped statute texts."),
    sc_metadata: Optional[Path] = typer.Option(
        Path("data/raw/sc_metadata/raw"), help="Supreme Court metadata records (JSON)."),
    out: Path = typer.Option(Path("data/processed/extract"), help="Output folder."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Metadata, sections, chunks and the statute table from ingested documents."""
    from countercase.extract.run import run_extract

    _require(documents, "documents file")
    _require(statutes, "statutes folder")
    _require(sc_metadata, "Supreme Court metadata folder")
    stats = run_extract(documents, statutes, sc_metadata, out, load_params(params_path).extract)
    if timing:
        _write_json(timing, stats["timing"])


@app.command("extract-eval")
def extract_eval(
    metadata: Path = typer.Option(Path("data/processed/extract/metadata.parquet")),
    summary: Optional[Path] = typer.Option(
        Path("data/processed/extract/summary.json"), help="Counts of the extract stage."),
    gold: Path = typer.Option(Path("data/gold"), help="Folder of gold metadata_gold_*.jsonl."),
    rhetorical_roles: Path = typer.Option(Path("data/raw/rhetorical_roles")),
    out: Path = typer.Option(Path("metrics/extraction.json")),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Accuracy of metadata against the gold sample; segmentation against rhetorical roles."""
    from countercase.extract.evaluation import evaluate_extraction

    _require(metadata, "metadata file")
    _require(gold, "gold folder")
    _require(rhetorical_roles, "rhetorical-role annotations")
    _require(summary, "extract summary")
    _write_json(out, evaluate_extraction(metadata, summary, gold, rhetorical_roles,
                                         load_params(params_path).extract))
    log.info("extraction metrics -> %s", out)


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
        _require(path, what)
    params = load_params(params_path)
    stats = run_index(chunks, metadata, documents, statutes, statute_table, out, params.index,
                      params.extract)
    if timing:
        _write_json(timing, stats["timing"])


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

    _require(chunks, "chunks file")
    _require(statute_chunks, "statute chunk table (stage `index`)")
    try:
        stats = run_embed(chunks, statute_chunks, out, load_params(params_path).index)
    except EncoderUnavailableError as error:
        raise UserError(str(error)) from None
    if timing:
        _write_json(timing, {**stats["timing"], "encoder": stats["encoder"],
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

    _require(queries, "topics file")
    try:
        texts = list(read_queries(queries).values())
        report = run_latency(texts, load_params(params_path).retrieve,
                             IndexPaths(index_dir, dense_dir, chunks, metadata))
    except (TopicsError, MissingIndexError) as error:
        raise UserError(str(error)) from None
    _write_json(out, report)
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
        _require(path, what)
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
        _write_json(metrics, scores)
    if summary:
        _write_json(summary, notes)
    if timing:
        _write_json(timing, {"total_seconds": round(time.perf_counter() - started, 1),
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
    _write_json(out, report)
    for name, found in report.items():
        log.info("%s: best on the tuning queries %s", name, found["best"])


@app.command()
def factsheets(
    documents: Path = typer.Option(Path("data/processed/ingest/documents.jsonl")),
    extract_dir: Path = typer.Option(Path("data/processed/extract")),
    queries: Path = typer.Option(Path("data/raw/aila2019/Query_doc.txt"), help="AILA topics."),
    out: Path = typer.Option(Path("data/processed/factsheets")),
    metrics: Optional[Path] = typer.Option(None, help="Write the coverage here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Rule fact sheets of every judgment and every AILA query."""
    from countercase.aila import TopicsError, read_queries
    from countercase.factsheet.run import run_factsheets

    for path, what in ((documents, "documents file"), (extract_dir, "extract folder"),
                       (queries, "topics file")):
        _require(path, what)
    try:
        topics = read_queries(queries)
    except TopicsError as error:
        raise UserError(str(error)) from None
    report = run_factsheets(documents, extract_dir, topics, out,
                            load_params(params_path).extract.facts_fallback_fraction)
    if metrics:
        _write_json(metrics, {k: v for k, v in report.items() if k != "timing"})
    if timing:
        _write_json(timing, report["timing"])


@app.command()
def adjacency(
    extract_dir: Path = typer.Option(Path("data/processed/extract")),
    out: Path = typer.Option(Path("data/processed/adjacency/section_edges.parquet")),
    metrics: Optional[Path] = typer.Option(None, help="Write the edge counts here (JSON)."),
    min_count: int = typer.Option(3, help="Co-citations needed for an edge."),
) -> None:
    """The section adjacency map (chapters, cross-references, co-citation, IPC->BNS, CrPC->BNSS)."""
    import pandas as pd

    from countercase.perturb.adjacency import build_adjacency

    for name in ("statutes.parquet", "constitution_crossrefs.parquet", "metadata.parquet"):
        _require(extract_dir / name, f"extract stage output {name}")
    metadata = pd.read_parquet(extract_dir / "metadata.parquet", columns=["act_sections"])
    edges = build_adjacency(pd.read_parquet(extract_dir / "statutes.parquet"),
                            pd.read_parquet(extract_dir / "constitution_crossrefs.parquet"),
                            (s for s in metadata["act_sections"] if s is not None), min_count)
    out.parent.mkdir(parents=True, exist_ok=True)
    edges.to_parquet(out, index=False)
    nodes = set(edges["source"]) | set(edges["target"])
    if metrics:
        _write_json(metrics, {"n_edges": len(edges), "n_sections": len(nodes),
                              "edges_per_kind": edges["kind"].value_counts().sort_index().to_dict()})
    log.info("%d edges over %d sections -> %s", len(edges), len(nodes), out)


@app.command()
def factsheet(
    text: Optional[str] = typer.Argument(None, help="Case text (facts) to read."),
    case_id: Optional[str] = typer.Option(None, help="A judgment or AILA query id (C12, AILA_Q3)."),
    file: Optional[Path] = typer.Option(None, help="A fact sheet JSON to check and show."),
    sheets_dir: Path = typer.Option(Path("data/processed/factsheets")),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One fact sheet, from raw text, a corpus or query id, or a fact sheet file."""
    from countercase.factsheet.schema import FactSheetError, validate_sheet
    from countercase.factsheet.show import find_sheet, render

    given = [x for x in (text, case_id, file) if x]
    if len(given) != 1:
        raise UserError("give exactly one of: case text, --case-id, --file")
    source_text = None
    try:
        if file:
            _require(file, "fact sheet file")
            sheet = validate_sheet(json.loads(file.read_text(encoding="utf-8")))
        elif case_id:
            sheet = find_sheet(case_id, sheets_dir)
        else:
            from countercase.factsheet.rules import extract_rules

            sheet, source_text = extract_rules(text, "text", "text"), text
    except (FactSheetError, ValueError, LookupError) as error:
        raise UserError(str(error)) from None
    if as_json:
        typer.echo(sheet.model_dump_json(indent=2))
    else:
        render(sheet, source_text)


@app.command()
def perturb(
    queries: Path = typer.Option(Path("data/raw/aila2019/Query_doc.txt"), help="AILA topics."),
    edges: Path = typer.Option(Path("data/processed/adjacency/section_edges.parquet")),
    out: Path = typer.Option(Path("data/processed/trees")),
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """A perturbation tree for every AILA query (depth, branching from params.yaml)."""
    import pandas as pd

    from countercase.aila import TopicsError, read_queries
    from countercase.perturb.run import run_perturb
    from countercase.retrieve.load import IndexPaths, MissingIndexError, open_retriever

    _require(edges, "section adjacency map (stage `adjacency`)")
    params = load_params(params_path)
    try:
        topics = read_queries(queries)
        retriever = open_retriever("precedents", params.retrieve,
                                   IndexPaths(index_dir, dense_dir, chunks, metadata))
    except (TopicsError, MissingIndexError) as error:
        raise UserError(str(error)) from None
    report = run_perturb(topics, retriever, pd.read_parquet(edges), out, params.perturb,
                         queries.parent)
    if metrics:
        _write_json(metrics, report["summary"])
    if timing:
        _write_json(timing, report["timing"])


@app.command()
def tree(
    query: Optional[str] = typer.Option(None, help="An AILA query id (AILA_Q12)."),
    text: Optional[str] = typer.Option(None, help="Case text to read the fact sheet from."),
    sheet: Optional[Path] = typer.Option(None, help="A fact sheet JSON (structured queries)."),
    depth: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.depth."),
    branching: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.branching."),
    out: Path = typer.Option(Path("tree.json")),
    queries: Path = typer.Option(Path("data/raw/aila2019/Query_doc.txt")),
    edges: Path = typer.Option(Path("data/processed/adjacency/section_edges.parquet")),
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """One perturbation tree, from a query id, raw text or a fact sheet, written as JSON."""
    import pandas as pd

    from countercase.aila import read_queries
    from countercase.factsheet.rules import extract_rules
    from countercase.factsheet.schema import FactSheetError, validate_sheet
    from countercase.perturb.run import retriever_search
    from countercase.perturb.tree import PerturbationTree, TreeError
    from countercase.retrieve.load import IndexPaths, MissingIndexError, open_retriever

    if len([x for x in (query, text, sheet) if x]) != 1:
        raise UserError("give exactly one of --query, --text, --sheet")
    _require(edges, "section adjacency map (stage `adjacency`)")
    params = load_params(params_path)
    depth = params.perturb.depth if depth is None else depth
    branching = params.perturb.branching if branching is None else branching
    try:
        if query:
            topics = read_queries(queries)
            if query not in topics:
                raise UserError(f"no query {query!r} in {queries}")
            text = topics[query]
            root = extract_rules(text, query, "query")
        elif text:
            root = extract_rules(text, "text", "text")
        else:
            _require(sheet, "fact sheet file")
            root = validate_sheet(json.loads(sheet.read_text(encoding="utf-8")))
        retriever = open_retriever("precedents", params.retrieve,
                                   IndexPaths(index_dir, dense_dir, chunks, metadata))
        built = PerturbationTree(root, retriever_search(retriever), pd.read_parquet(edges),
                                 params.perturb.k, text=text,
                                 prune_below=params.perturb.prune_below).build(depth, branching)
    except (FactSheetError, TreeError, MissingIndexError, ValueError) as error:
        raise UserError(str(error)) from None
    out.write_text(built.to_json({**params.perturb.model_dump(), "depth": depth,
                                  "branching": branching}), encoding="utf-8")
    log.info("%d nodes; sensitivity %s -> %s", len(built.nodes), built.sensitivity(), out)


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


@app.command()
def paper(
    source: Path = typer.Option(Path("paper/paper.qmd"), help="The Quarto manuscript."),
    out: Path = typer.Option(Path("paper/_output/paper.html"), help="Rendered HTML."),
) -> None:
    """Render the paper from the metrics (Quarto if installed, else jupytext + nbconvert)."""
    from countercase.paper import render_paper

    _require(source, "manuscript")
    log.info("paper rendered by %s -> %s", render_paper(source, out), out)


def main() -> None:
    try:
        app()
    except (UserError, ConfigError) as error:
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as error:  # a bug, not a user error: say so without a traceback
        if log.isEnabledFor(logging.DEBUG):
            raise
        typer.echo(f"error: {type(error).__name__}: {error} (run with --verbose for details)",
                   err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

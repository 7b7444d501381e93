"""Subcommands of the counterfactual engine: factsheets, factsheet, adjacency, perturb, tree."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CHUNKS_OPTION, CITATIONS_OPTION, DENSE_DIR_OPTION,
                                  INDEX_DIR_OPTION, LIVE_OPTION, METADATA_OPTION, PARAMS_OPTION,
                                  TIMING_OPTION, UserError, app, require, writable,
                                  write_json)
from countercase.config import load_params

log = logging.getLogger("countercase")

# the inputs of the corpus query cases (countercase.perturb.cases), read by perturb, llm-check
# and audit-sample
EDGES_OPTION = typer.Option(layout.SECTION_EDGES)
CASE_DOCUMENTS_OPTION = typer.Option(layout.DOCUMENTS, help="Judgment texts (corpus cases).")
CASE_SHEETS_OPTION = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets.")
PROFILES_OPTION = typer.Option(
    None, help="Holding profiles (stage `holdings`): explain each result by the holding it "
    "shares and each edge by its citation-grounded targets (reads the citation collection).")
GROUPS_OPTION = typer.Option(layout.RERANKER_GROUPS,
                             help="Resolved citations (stage train_reranker).")
GOLD_OPTION = typer.Option(layout.DISPOSITIVE_GOLD, help="Gold dispositive facts.")
# a tree's size: branching ** depth nodes at most, every one a search
MAX_DEPTH, MAX_BRANCHING = 6, 20


def _require_case_inputs(edges: Path, documents: Path, sheets: Path, groups: Path,
                         gold: Path) -> None:
    for path, what in ((edges, "section adjacency map (stage `adjacency`)"),
                       (documents, "documents file"), (sheets, "fact sheets (stage `factsheets`)"),
                       (groups, "citation groups (stage `train_reranker`)"),
                       (gold, "gold dispositive facts")):
        require(path, what)


def _case_sets(params, edges: Path, documents: Path, sheets: Path, metadata: Path,
               groups: Path, gold: Path, fresh: int = 0):
    """The corpus query cases of the audit's and the calibration's samples (inputs checked)."""
    from countercase.perturb.cases import ValidityInputs, load_cases

    _require_case_inputs(edges, documents, sheets, groups, gold)
    return load_cases(params, ValidityInputs(documents, sheets, metadata, groups, gold), fresh)


@app.command()
def factsheets(
    documents: Path = typer.Option(layout.DOCUMENTS),
    extract_dir: Path = typer.Option(layout.EXTRACT),
    queries: Path = typer.Option(layout.AILA_QUERIES, help="AILA topics."),
    out: Path = typer.Option(layout.FACTSHEETS),
    metrics: Optional[Path] = typer.Option(None, help="Write the coverage here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    ner_model: Optional[Path] = typer.Option(
        None, help="The trained entity tagger (stage train_ner): tag the sheets' texts."),
    recording: Path = typer.Option(layout.recording("factsheets"),
                                   help="The LLM's recorded answers."),
    live: bool = LIVE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Rule fact sheets of every judgment and every AILA query."""
    from functools import partial

    from countercase.datasets.aila import read_queries
    from countercase.factsheet.run import run_stage

    for path, what in ((documents, "documents file"), (extract_dir, "extract folder"),
                       (queries, "topics file")):
        require(path, what)
    topics = read_queries(queries)
    params = load_params(params_path)
    tag = None
    if ner_model is not None:  # entity tags beside the sheets (rules alone if no model)
        from countercase.ner.candidates import tag_sheet_texts

        tag = partial(tag_sheet_texts, model_dir=ner_model,
                      n_judgments=params.factsheets.ner_judgments, seed=params.seed,
                      threads=params.ner.threads)
    report = run_stage(params, documents, extract_dir, topics, out, recording,
                       "live" if live else params.llm.mode, tag)
    if metrics:
        write_json(metrics, {k: v for k, v in report.items() if k != "timing"})
    if timing:
        write_json(timing, report["timing"])


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as error:
        raise UserError(f"{path} is not JSON: {error}") from None
    except UnicodeDecodeError as error:
        raise UserError(f"{path} is not UTF-8 text (byte {error.start})") from None
    except RecursionError:
        raise UserError(f"{path} is not a fact sheet: JSON nested too deeply") from None
    except ValueError as error:  # a number too long to read (Python's digit limit)
        raise UserError(f"{path} is not JSON this reads: {error}") from None


@app.command()
def adjacency(
    extract_dir: Path = typer.Option(layout.EXTRACT),
    out: Path = typer.Option(layout.SECTION_EDGES),
    metrics: Optional[Path] = typer.Option(None, help="Write the edge counts here (JSON)."),
    min_count: int = typer.Option(3, min=1, help="Co-citations needed for an edge."),
) -> None:
    """The section adjacency map (chapters, cross-references, co-citation, IPC->BNS, CrPC->BNSS)."""
    import pandas as pd

    from countercase.legal.adjacency import build_adjacency

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
    from countercase.factsheet.schema import validate_sheet
    from countercase.factsheet.show import case_text, find_sheet, render, stage_records
    from countercase.ner.confidence import sheet_confidence
    from countercase.ner.entities import EntityTag

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
        sheet = validate_sheet(_read_json(file))
    elif case_id:
        sheet = find_sheet(case_id, sheets_dir)
        others = [validate_sheet(r) for r in stage_records(case_id, sheets_dir / "llm.jsonl")]
        stored = stage_records(case_id, sheets_dir / "entities.jsonl")
        tags = [EntityTag(**t) for t in stored[0]["tags"]] if stored else None
        source_text = case_text(case_id, queries, documents)
    else:
        from countercase.factsheet.rules import extract_rules

        sheet, source_text = extract_rules(text, "text", "text"), text
    if tags is None and source_text is not None:
        tags = _tag_facts(sheet, source_text, ner_model)
    if as_json:
        typer.echo(sheet.model_dump_json(indent=2))
    else:
        render(sheet, source_text, sheet_confidence(sheet, others, tags), tags)


def _read_text(path: Path) -> str:
    """A case text from a file or, for '-', standard input; undecodable bytes are replaced."""
    import sys

    if str(path) == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    require(path, "text file")
    if path.is_dir():
        raise UserError(f"text file {path} is a folder")
    return path.read_bytes().decode("utf-8", errors="replace")


def _tag_facts(sheet, text: str, ner_model: Optional[Path]) -> list:
    """Entity tags of the sheet's facts, offsets into the whole text."""
    from dataclasses import replace

    from countercase.ner.entities import EntityTagger

    model = ner_model if ner_model is not None else layout.NER_MODEL
    start, end = sheet.facts_span.start, sheet.facts_span.end
    if sheet.source != "judgment":
        start, end = 0, len(text)
    tags = EntityTagger(model).tag(text[start:end])
    return [replace(t, start=t.start + start, end=t.end + start) for t in tags]


@app.command()
def perturb(
    queries: Path = typer.Option(layout.AILA_QUERIES, help="AILA topics."),
    edges: Path = EDGES_OPTION,
    out: Path = typer.Option(layout.TREES),
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    fact_index: Path = typer.Option(layout.FACT_INDEX, help="The fact channel (index_facts)."),
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    choice: Path = typer.Option(layout.TREES_CHOICE,
                                help="Where the trees' fact weight and its rule go."),
    confirmatory: Optional[Path] = typer.Option(
        None, help="The confirmatory experiment's summary (stage validity_v2), reported under "
        "validity_v2."),
    directional: Optional[Path] = typer.Option(
        None, help="The directional test's summary (stage validity_v3), reported under "
        "validity_v3."),
    holdings: Optional[Path] = typer.Option(
        None, help="The holding profiles' metrics (stage holdings), reported under "
        "holding_profiles."),
    system: Optional[str] = typer.Option(
        None, help="The system every node searches, by its name in configs/systems.yaml "
        "(default: the learned system when ltr is served, else params.yaml perturb.system)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The validity experiment on corpus query cases, then a perturbation tree for every AILA
    query (depth, branching from params.yaml; the fact channel at the weight chosen on the
    tuning cases)."""
    from countercase.perturb.stage import PerturbInputs, run_stage
    from countercase.retrieve.learned import searching
    from countercase.retrieve.load import IndexPaths

    _require_case_inputs(edges, documents, sheets, groups, gold)
    require(confirmatory, "the confirmatory experiment's summary (stage validity_v2)")
    require(holdings, "the holding profiles' metrics (stage holdings)")
    # it writes the trees' choice, so adopts only the others
    params = searching(load_params(params_path, adopt=("tuning", "reranker", "ltr")), system)
    report = run_stage(params, PerturbInputs(
        queries, edges, out, IndexPaths(index_dir, dense_dir, chunks, metadata, fact_index),
        documents, sheets, metadata, groups, gold, choice, confirmatory, directional, holdings))
    if metrics:
        write_json(metrics, report["summary"])
    if timing:
        write_json(timing, report["timing"])


@app.command("llm-check")
def llm_check(
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    metadata: Path = METADATA_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    validity: Path = typer.Option(layout.VALIDITY_ROWS, help="The validity rows (stage perturb)."),
    labels: Path = typer.Option(layout.PERTURBATION_LABELS, help="Hand labels of the sample."),
    calibration: Path = typer.Option(layout.LLM_CALIBRATION, help="The labelled candidates that "
                                     "measure it as a classifier (llm-calibration-sample)."),
    out: Path = typer.Option(layout.LLM_CHECK),
    metrics: Optional[Path] = typer.Option(None, help="Write the measurements here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    sample_only: bool = typer.Option(False, help="Only write the sample to label (no LLM)."),
    recording: Path = typer.Option(layout.recording("llm_check"),
                                   help="The LLM's recorded answers."),
    live: bool = LIVE_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The LLM check on the root candidates of the corpus query cases: acceptance, whether it
    separates the perturbations that matter, agreement with the hand-labelled sample."""
    import time

    import pandas as pd

    from countercase.factsheet.llm import LlmUnavailableError, open_recording
    from countercase.perturb.llm_check import run_llm_check
    from countercase.perturb.cases import ValidityInputs

    _require_case_inputs(edges, documents, sheets, groups, gold)
    if not sample_only:
        require(validity, "validity rows (stage `perturb`)")
        require(labels, "hand labels of the sample")
    params = load_params(params_path)
    started = time.perf_counter()
    try:
        with open_recording("llm_check", "live" if live else params.llm.mode,
                            recording) as answers:
            report = run_llm_check(params, ValidityInputs(documents, sheets, metadata, groups,
                                                          gold),
                                   pd.read_parquet(edges), validity, labels, out, answers,
                                   sample_only, calibration)
    except LlmUnavailableError as error:
        raise UserError(f"the LLM check asks prompts its recording {recording} lacks, and "
                        f"needs the local LLM for them (make llm): {error}") from None
    seconds = time.perf_counter() - started
    if sample_only:
        log.info("%d candidates; the sample to label is in %s", report["n_candidates"],
                 out / "label_sample.jsonl")
        return
    if metrics:
        write_json(metrics, report)
    if timing:
        calls = report["model_calls"]
        write_json(timing, {"seconds": round(seconds, 1), "model_calls": calls,
                            "seconds_per_call": round(seconds / calls, 2) if calls else None})
    log.info("acceptance %s over %d candidates of %d cases", report["acceptance_rate"],
             report["n_candidates"], report["n_cases"])


@app.command()
def explain(
    trees: Path = typer.Option(layout.TREES, help="The trees (stage perturb)."),
    tree_file: Optional[Path] = typer.Option(None, "--tree", help="Explain this one tree."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets."),
    chunks: Path = CHUNKS_OPTION,
    out: Path = typer.Option(layout.EXPLANATIONS,
                             help="A folder (every tree) or, with --tree, a Markdown file."),
    metrics: Optional[Path] = typer.Option(None, help="Write faithfulness here (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    profiles: Optional[Path] = PROFILES_OPTION,
    citations: Path = CITATIONS_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Grounded explanations of every result and edge of the trees, each sentence re-verified
    against its sources; with --tree, one tree's Markdown report."""
    from countercase.explain.run import run_explain

    for path, what in ((sheets, "fact sheets (stage `factsheets`)"), (chunks, "chunks")):
        require(path, what)
    if tree_file is not None:
        require(tree_file, "tree JSON")
    else:
        require(trees, "trees (stage `perturb`)")
    explainer = _explainer(sheets, chunks, profiles, citations, documents, params_path)
    report = run_explain(trees, explainer, out, tree_file)
    seconds = {"ms_per_node": report.pop("ms_per_node")}
    if metrics:
        write_json(metrics, report)
    if timing:
        write_json(timing, seconds)
    log.info("%d sentences over %d nodes: faithfulness %s", report["sentences"], report["nodes"],
             report["faithfulness"])


def _explainer(sheets: Path, chunks: Path, profiles: Path | None, citations: Path,
               documents: Path, params_path: Path):
    """The explainer; with ``profiles``, also the holdings each result turns on and each edge's
    citation-grounded targets (the citation graph and the ``targets`` settings)."""
    from countercase.explain.run import open_explainer
    from countercase.holdings.case_targets import Inputs
    from countercase.holdings.targets import Settings

    if profiles is None:
        return open_explainer(sheets, chunks)
    for path, what in ((profiles, "holding profiles (stage `holdings`)"),
                       (citations, "citation collection (stage `citations`)"),
                       (documents, "judgment texts (stage `ingest`)")):
        require(path, what)
    grounds = Inputs(citations=citations, documents=documents, sheets=sheets, profiles=profiles)
    return open_explainer(sheets, chunks, grounds, Settings.of(load_params(params_path).targets))


@app.command()
def topology(
    trees: Path = typer.Option(layout.TREES, help="The trees (stage perturb)."),
    groups: Path = typer.Option(layout.RERANKER_GROUPS,
                                help="Resolved citations (stage train_reranker): in-degree."),
    metadata: Path = METADATA_OPTION,
    out: Path = typer.Option(layout.metrics("topology"), help="The metrics (JSON)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Tree shapes and precedent robustness, against citation in-degree and bench size."""
    from countercase.topology.run import run_topology

    for path, what in ((trees, "trees (stage `perturb`)"),
                       (groups, "citation groups (stage `train_reranker`)"),
                       (metadata, "metadata file")):
        require(path, what)
    report = run_topology(trees, groups, metadata, load_params(params_path).seed)
    write_json(out, report)
    found = report["robustness_vs_indegree"]
    log.info("%d trees, %d precedents; robustness vs in-degree: Spearman %s (CI %s, n %d)",
             report["trees"]["n"], report["precedents"]["n"], found["spearman"], found["ci"],
             found["n"])


@app.command()
def tree(
    query: Optional[str] = typer.Option(None, help="An AILA query id (AILA_Q12)."),
    text: Optional[str] = typer.Option(None, help="Case text to read the fact sheet from."),
    sheet: Optional[Path] = typer.Option(None, help="A fact sheet JSON (structured queries)."),
    depth: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.depth."),
    branching: Optional[int] = typer.Option(None, help="Default: params.yaml perturb.branching."),
    system: Optional[str] = typer.Option(
        None, help="The system every node searches, by its name in configs/systems.yaml (a "
        "pipeline over the built indexes or a learned system; default: the learned system "
        "when ltr is served, else params.yaml perturb.system)."),
    out: Path = typer.Option(Path("tree.json")),
    markdown: Optional[Path] = typer.Option(
        None, help="Also explain the tree (JSON with explanations) and write its Markdown here."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS,
                                help="The judgments' fact sheets (for --markdown)."),
    profiles: Optional[Path] = PROFILES_OPTION,
    citations: Path = CITATIONS_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    queries: Path = typer.Option(layout.AILA_QUERIES),
    edges: Path = EDGES_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """One perturbation tree, from a query id, raw text or a fact sheet, written as JSON."""
    import pandas as pd

    from countercase.datasets.aila import read_queries
    from countercase.factsheet.rules import extract_rules
    from countercase.factsheet.schema import validate_sheet
    from countercase.perturb.run import retriever_search
    from countercase.perturb.tree import PerturbationTree
    from countercase.retrieve.learned import searching, tree_retriever
    from countercase.retrieve.load import IndexPaths, open_retriever
    from countercase.retrieve.registry import tree_params

    if len([x for x in (query, text, sheet) if x]) != 1:
        raise UserError("give exactly one of --query, --text, --sheet")
    require(edges, "section adjacency map (stage `adjacency`)")
    writable(out, "tree file")
    writable(markdown, "Markdown file")
    params = searching(load_params(params_path), system)  # an unknown one: exit 2
    depth = params.perturb.depth if depth is None else depth
    branching = params.perturb.branching if branching is None else branching
    # checked before any search: depth 5 at the default branching already holds 1,335 nodes
    for name, value, most in (("--depth", depth, MAX_DEPTH), ("--branching", branching,
                                                               MAX_BRANCHING)):
        if not 1 <= value <= most:
            raise UserError(f"{name} {value}: give 1 to {most}")
    if query:
        topics = read_queries(queries)
        if query not in topics:
            raise UserError(f"no query {query!r} in {queries}")
        text = topics[query]
        root = extract_rules(text, query, "query")
    elif text:
        root = extract_rules(text, "text", "text")
    else:
        require(sheet, "fact sheet file")
        root = validate_sheet(_read_json(sheet))
    paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
    retriever = tree_retriever(params, paths,
                               open_retriever("precedents", tree_params(params), paths))
    built = PerturbationTree(root, retriever_search(retriever), pd.read_parquet(edges),
                             params.perturb.k, text=text, prune_below=params.perturb.prune_below,
                             granularity=params.perturb.granularity).build(depth, branching)
    model = built.to_model({**params.perturb.model_dump(), "depth": depth,
                            "branching": branching})
    if markdown is not None:
        from countercase.explain.markdown import tree_markdown

        require(sheets, "fact sheets (stage `factsheets`)")
        model, _ = _explainer(sheets, chunks, profiles, citations, documents,
                              params_path).explain(model)
        markdown.write_text(tree_markdown(model), encoding="utf-8")
    out.write_text(model.model_dump_json(indent=1), encoding="utf-8")
    log.info("%d nodes; sensitivity %s -> %s", len(built.nodes), built.sensitivity(), out)


@app.command("validity-v2")
def validity_v2(
    out: Path = typer.Option(layout.VALIDITY_V2_OUT, help="Rows and summary."),
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    citations: Path = CITATIONS_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    dense_dir: Path = DENSE_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    prereg: Path = typer.Option(layout.VALIDITY_V2, help="The preregistration."),
    pilot: int = typer.Option(0, min=0, help="Run on this many of v1's development cases "
                              "instead, without the guard (a test of the code and its time)."),
    metrics: Optional[Path] = typer.Option(None, help="Write the summary here too (JSON)."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The confirmatory validity experiment (docs/preregistration/validity_v2.md), refused
    unless the preregistration is final, committed before this commit and unchanged; its
    summary goes to OUT/summary.json (metrics/counterfactual.json validity_v2)."""
    from countercase.confirm.prereg import PreregistrationError
    from countercase.confirm.run import Inputs, run_validity_v2
    from countercase.retrieve.load import IndexPaths

    params = load_params(params_path)
    paths = IndexPaths(index_dir, dense_dir, chunks, metadata)
    for path, what in ((citations, "citation collection (stage `citations`)"),
                       (groups, "citation groups (stage `train_reranker`)"),
                       (sheets, "fact sheets (stage `factsheets`)"),
                       (edges, "section adjacency map (stage `adjacency`)")):
        require(path, what)
    try:
        summary = run_validity_v2(params, Inputs(paths, citations, documents, sheets, edges,
                                                 groups, gold, prereg=prereg), out,
                                  pilot=pilot)
    except PreregistrationError as error:
        raise UserError(str(error)) from None
    write_json(out / "summary.json", summary)
    if metrics:
        write_json(metrics, summary)
    if timing:
        write_json(timing, {"seconds": summary["seconds"]})
    log.info("validity v2: %s", json.dumps(summary["by_ranker"].get("bm25", {}))[:300])

"""Subcommands of the corpus stages: ingest, extract, extract-eval, paper."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.case import find_root
from countercase.cli.base import (PARAMS_OPTION, TIMING_OPTION, UserError, app, metrics_option,
                                  require, require_folder, writable, write_json)
from countercase.config import load_params
from countercase.extract.evaluation import evaluate_extraction
from countercase.extract.run import run_extract
from countercase.ingest.pdf import PdfDirectorySource
from countercase.ingest.run import run_ingest
from countercase.ingest.sc_opendata import ScOpenDataSource
from countercase.ingest.text import TextSource, count_judgments
from countercase.quickstart import build_project
from countercase.report.notebooks import notebook_sources, run_notebooks
from countercase.report.paper import refresh_inputs, render_paper
from countercase.report.results import RESULTS
from countercase.report.results import write as write_results
from countercase.runtime.digests import sha256_files

log = logging.getLogger("countercase")
RAW_CHECKSUMS = layout.RAW / "CHECKSUMS.json"  # the embedded data as shipped


@app.command()
def ingest(
    aila: Optional[Path] = typer.Option(None, help="AILA judgments: a .tar.gz or a folder of .txt."),
    pdfs: Optional[Path] = typer.Option(None, help="Folder of judgment PDFs."),
    sc_root: Optional[Path] = typer.Option(
        None, help="Local copy of the indian-supreme-court-judgments open-data bucket."),
    out: Path = typer.Option(layout.INGEST, help="Output folder."),
    metrics: Optional[Path] = metrics_option("the counts"),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Read judgments from every source into documents.jsonl (+ failures.jsonl)."""
    params = load_params(params_path).ingest
    require(aila, "AILA judgments")
    require_folder(pdfs, "PDF folder")
    require_folder(sc_root, "open-data copy")
    writable(out, "output folder", folder=True)
    writable(metrics, "metrics file")
    writable(timing, "timing file")
    sources = []
    if aila:
        sources.append(TextSource(aila))
    if pdfs:
        sources.append(PdfDirectorySource(pdfs, params))
    if sc_root:
        sources.append(ScOpenDataSource(sc_root, params))
    if not sources:
        raise UserError("nothing to ingest: give --aila, --pdfs or --sc-root")
    if aila:
        _check_aila(aila)
    if pdfs and not any(p.suffix.lower() == ".pdf" for p in pdfs.iterdir()):
        raise UserError(f"--pdfs {pdfs} holds no .pdf file")
    stats = run_ingest(sources, out)
    log.info("ingested %d documents (%d pages), %d failures -> %s", stats["n_documents"],
             stats["n_pages"], stats["n_failures"], out)
    if not stats["n_documents"]:  # every file failed: nothing for the stages after it to read
        raise UserError(f"no document could be read ({stats['n_failures']} failures, each "
                        f"with its reason in {out / 'failures.jsonl'})")
    timings = {k: v for k, v in stats.items() if "second" in k}
    if metrics:
        write_json(metrics, {k: v for k, v in stats.items() if k not in timings})
    if timing:
        write_json(timing, timings)


def _check_aila(path: Path) -> None:
    """AILA judgments whole before any is ingested. The embedded data (``data/raw/CHECKSUMS.json``)
    as shipped: an archive by its checksum (its bytes hold its count), a folder by its count.
    Any other input is read through once (:func:`count_judgments`: a truncated archive fails)."""
    try:
        key = path.resolve().relative_to(RAW_CHECKSUMS.parent.resolve()).as_posix()
    except ValueError:
        key = None  # not embedded data
    expected = None if key is None else \
        json.loads(RAW_CHECKSUMS.read_text(encoding="utf-8")).get(key)
    if expected is not None and path.is_file():
        found = sha256_files(path)
        if found != expected["sha256"]:
            raise UserError(f"{path} is not the embedded data: sha256 {found}, "
                            f"where {RAW_CHECKSUMS} expects {expected['sha256']}")
        return
    judgments = count_judgments(path)
    if expected is not None and judgments != expected["judgments"]:
        raise UserError(f"{path} is not the embedded data: {judgments} judgments, where "
                        f"{RAW_CHECKSUMS} expects {expected['judgments']}")


@app.command()
def extract(
    documents: Path = typer.Option(layout.DOCUMENTS),
    statutes: Path = typer.Option(layout.STATUTE_TEXTS, help="Shipped statute texts."),
    sc_metadata: Optional[Path] = typer.Option(
        layout.SC_METADATA, help="Supreme Court metadata records (JSON)."),
    out: Path = typer.Option(layout.EXTRACT, help="Output folder."),
    timing: Optional[Path] = TIMING_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Metadata, sections, chunks and the statute table from ingested documents."""
    require(documents, "documents file")
    require(statutes, "statutes folder")
    require(sc_metadata, "Supreme Court metadata folder")
    stats = run_extract(documents, statutes, sc_metadata, out, load_params(params_path).extract)
    if timing:
        write_json(timing, stats["timing"])


@app.command("extract-eval")
def extract_eval(
    metadata: Path = typer.Option(layout.METADATA),
    summary: Optional[Path] = typer.Option(
        layout.EXTRACT_SUMMARY, help="Counts of the extract stage."),
    gold: Path = typer.Option(layout.GOLD, help="Folder of gold metadata_gold_*.jsonl."),
    rhetorical_roles: Path = typer.Option(layout.RHETORICAL_ROLES),
    out: Path = typer.Option(layout.metrics("extraction")),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Accuracy of metadata against the gold sample; segmentation against rhetorical roles."""
    require(metadata, "metadata file")
    require(gold, "gold folder")
    require(rhetorical_roles, "rhetorical-role annotations")
    require(summary, "extract summary")
    write_json(out, evaluate_extraction(metadata, summary, gold, rhetorical_roles,
                                         load_params(params_path).extract))
    log.info("extraction metrics -> %s", out)


@app.command()
def results(
    root: Optional[Path] = typer.Option(None, help="The project whose outputs it reads "
                                        "(default: the working folder, as DVC runs it)."),
    out: Path = typer.Option(RESULTS, help="The results table (JSON), under ROOT."),
) -> None:
    """The results table the README and the paper format: each collection's headline systems
    with intervals and tests, and the counterfactual answer (countercase.report.results)."""
    log.info("results table -> %s", write_results(root or Path.cwd(), out))


@app.command()
def paper(
    source: Path = typer.Option(layout.PAPER_SOURCE, help="The Quarto manuscript."),
    out: Path = typer.Option(layout.PAPER_HTML, help="Rendered HTML."),
    pdf: Optional[Path] = typer.Option(layout.PAPER_PDF, help="Rendered PDF."),
    manifest: Optional[Path] = typer.Option(
        layout.PAPER_MANIFEST, help="The hashes of every input the render read."),
) -> None:
    """Render the paper from the committed metrics as HTML and PDF (Quarto if installed, else
    the same cells run by nbclient and typeset by pandoc and Typst); what only the pipeline
    writes is read from its committed copy under paper/inputs, refreshed where it has run."""
    require(source, "manuscript")
    root = source.resolve().parent.parent  # the manuscript is paper/paper.qmd of the project
    for copy in refresh_inputs(root, layout.PAPER_INPUTS):
        log.info("paper input refreshed from the pipeline: %s", copy)
    renderer = render_paper(source, out, pdf, manifest_path=manifest, root=root)
    log.info("paper rendered by %s -> %s, %s (inputs: %s)", renderer, out, pdf, manifest)


@app.command()
def notebooks(
    src: Path = typer.Option(layout.NOTEBOOK_SOURCES, help="The notebooks (NN_name.py, jupytext)."),
    out: Path = typer.Option(layout.NOTEBOOKS, help="Executed copies (.ipynb)."),
    timing: Optional[Path] = TIMING_OPTION,
) -> None:
    """Execute every notebook on the pipeline's outputs and keep the executed copies."""
    require(src, "notebooks folder")
    report = run_notebooks(notebook_sources(src), out, find_root())
    if timing is not None:
        write_json(timing, report)
    log.info("%d notebooks executed -> %s", len(report["notebooks"]), out)


@app.command()
def quickstart(
    out: Path = typer.Option(layout.QUICKSTART, help="The project folder to build."),
) -> None:
    """A first look in a few minutes: the AILA judgments BM25-indexed, their rule fact sheets
    and the adjacency map in a project folder (no embeddings, tagger, LLM or evaluation), for
    `countercase tree`, `search` and `explore --root OUT`."""
    build_project(out, find_root())
    print(f"built {out}: try `cd {out} && countercase tree --query AILA_Q30 --depth 2` or "
          f"`countercase explore --root {out}`")

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
    timing: Optional[Path] = typer.Option(None, help="Write wall-clock timings here (JSON)."),
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
    timing: Optional[Path] = typer.Option(None, help="Write wall-clock timings here (JSON)."),
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

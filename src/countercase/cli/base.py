"""The ``countercase`` application, its shared options and error handling."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from countercase.config import ConfigError

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


def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def require(path: Optional[Path], what: str) -> None:
    if path is not None and not path.exists():
        raise UserError(f"{what} not found: {path}")


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

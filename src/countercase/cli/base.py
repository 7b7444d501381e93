"""The ``countercase`` application, its shared options and error handling."""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from countercase import layout
from countercase.cli.lazy import LazyGroup
from countercase.dag import params as params_read
from countercase.errors import CountercaseError
from countercase.report.stage_times import begin, record_dvc_stage
from countercase.runtime.processes import LOG_FORMAT

app = typer.Typer(cls=LazyGroup, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="Counterfactual precedent retrieval over Indian Supreme Court judgments.")
log = logging.getLogger("countercase")

PARAMS_OPTION = typer.Option(Path("params.yaml"), "--params", help="Parameters file.")
TIMING_OPTION = typer.Option(None, help="Write wall-clock timings here (JSON).")
LIVE_OPTION = typer.Option(False, "--live", help="Ask the local LLM every prompt again instead "
                           "of replaying its recorded answers (params.yaml llm.mode: live).")
# Where the stages put what retrieval reads (countercase.layout.IndexPaths).
INDEX_DIR_OPTION = typer.Option(layout.INDEX, help="Output of the index stage.")
DENSE_DIR_OPTION = typer.Option(layout.DENSE, help="Output of the embed stage.")
CHUNKS_OPTION = typer.Option(layout.CHUNKS)
METADATA_OPTION = typer.Option(layout.METADATA)
AILA_OPTION = typer.Option(layout.AILA, help="The AILA 2019 folder (topics, qrels, statutes).")
CITATIONS_OPTION = typer.Option(layout.CITATIONS,
                                help="The citation collection (stage citations).")
FACT_INDEX_OPTION = typer.Option(layout.FACT_INDEX, help="The fact channel (index_facts).")
CHOICE_OPTION = typer.Option(layout.TUNING_CHOICE,
                             help="The tune stage's choice, whose values the tuned systems name.")
VARIANT_DOCUMENTS_OPTION = typer.Option(layout.DOCUMENTS,
                                        help="Judgments to cut the chunking variants from.")
# the inputs of the corpus query cases (countercase.perturb.cases), read by perturb, llm-check,
# validity-v2 and the lab's samples
EDGES_OPTION = typer.Option(layout.SECTION_EDGES)
CASE_DOCUMENTS_OPTION = typer.Option(layout.DOCUMENTS, help="Judgment texts (corpus cases).")
CASE_SHEETS_OPTION = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets.")
PROFILES_OPTION = typer.Option(
    None, help="Holding profiles (stage `holdings`): explain each result by the holding it "
    "shares and each edge by its citation-grounded targets (reads the citation collection).")
GROUPS_OPTION = typer.Option(layout.RERANKER_GROUPS,
                             help="Resolved citations (stage train_reranker).")
GOLD_OPTION = typer.Option(layout.DISPOSITIVE_GOLD, help="Gold dispositive facts.")
TARGETS_OPTION = typer.Option(layout.CASE_TARGETS, help="Stage targets' targets.jsonl.")


def metrics_option(what: str = "the measurements") -> Any:
    """``--metrics``: where a command writes ``what`` (JSON); nowhere when not given."""
    return typer.Option(None, help=f"Write {what} here (JSON).")


def resume_option(default: Path, section: str) -> Any:
    """``--resume-dir`` of a training loop that saves its state every
    ``<section>.resume_every`` steps (params.yaml)."""
    return typer.Option(default, help=f"The training state is saved here every {section}."
                        "resume_every steps; a run on the same inputs goes on from it. Cleared "
                        "when the stage is done.")


def option_group(build: type, options: dict[str, Any]):
    """A decorator: ``options`` (name -> typer option) become the command's options, save those
    it declares itself, and the command's parameter annotated ``build`` receives
    ``build(**their values)``. The inputs several commands read are so declared once."""
    def decorate(command):
        signature = inspect.signature(command)
        argument = next(p.name for p in signature.parameters.values()
                        if p.annotation in (build, build.__name__))
        own = [p for p in signature.parameters.values() if p.name != argument]
        taken = {p.name for p in own}
        added = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=option,
                                   annotation=Path)
                 for name, option in options.items() if name not in taken]
        last = len(own) - (own and own[-1].name == "params_path")  # --params stays last
        parameters = own[:last] + added + own[last:]

        @functools.wraps(command)
        def run(**values):
            group = build(**{name: values[name] for name in options})
            for name in options:
                if name not in taken:
                    del values[name]
            return command(**values, **{argument: group})
        run.__signature__ = signature.replace(parameters=parameters)
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run
    return decorate


# what retrieval reads, handed to the command's IndexPaths parameter
index_paths = option_group(layout.IndexPaths, {
    "index_dir": INDEX_DIR_OPTION, "dense_dir": DENSE_DIR_OPTION, "chunks": CHUNKS_OPTION,
    "metadata": METADATA_OPTION, "fact_index": FACT_INDEX_OPTION})


@dataclass(frozen=True)
class CaseFiles:
    """What the corpus query cases are read from (countercase.perturb.cases)."""

    edges: Path
    documents: Path
    sheets: Path
    metadata: Path
    groups: Path
    gold: Path

    def require(self) -> CaseFiles:
        """These files, each there (or a UserError naming the one missing)."""
        require_each((self.edges, "section adjacency map (stage `adjacency`)"),
                     (self.documents, "documents file"),
                     (self.sheets, "fact sheets (stage `factsheets`)"),
                     (self.groups, "citation groups (stage `train_reranker`)"),
                     (self.gold, "gold dispositive facts"))
        return self


# the corpus query cases' inputs, handed to the command's CaseFiles parameter (perturb,
# llm-check, validity-v2 and the lab's samples)
case_files = option_group(CaseFiles, {
    "edges": EDGES_OPTION, "documents": CASE_DOCUMENTS_OPTION,
    "sheets": CASE_SHEETS_OPTION, "metadata": METADATA_OPTION, "groups": GROUPS_OPTION,
    "gold": GOLD_OPTION})

# where the traceback of a bug goes (the one line on the terminal names it)
CRASH_LOG = Path(".cache/countercase/last-error.log")


class UserError(CountercaseError):
    """An error in the command's arguments; shown as one line, exit status 2."""


_debug = False


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging."),
          debug: bool = typer.Option(False, "--debug",
                                     help="Show the traceback of an unexpected error.")) -> None:
    global _debug
    _debug = debug
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=LOG_FORMAT)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)


def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def require(path: Optional[Path], what: str) -> None:
    if path is not None and not path.exists():
        raise UserError(f"{what} not found: {path}")


def require_each(*inputs: tuple[Optional[Path], str]) -> None:
    """:func:`require` of each (path, what it is)."""
    for path, what in inputs:
        require(path, what)


def require_folder(path: Optional[Path], what: str) -> None:
    require(path, what)
    if path is not None and not path.is_dir():
        raise UserError(f"{what} {path} is a file, not a folder")


# a stage run in parts (countercase.dag.stages): each part does a share of the work, the stage
# joins them
PART_OPTION = typer.Option(None, help="i/N: do only part i of N of the work, into "
                                      "OUT_parts/iofN (the stage's part stages).")
PARTS_OPTION = typer.Option(1, min=1, max=16, help="Join the N parts (--part 1/N ... N/N) "
                                                   "instead of doing the work.")


def part_of(part: Optional[str], parts: int) -> tuple[int, int] | None:
    """``--part i/N`` as (i, N) (None without it), refused beside ``--parts``."""
    if part is None:
        return None
    number, _, count = part.partition("/")
    try:
        i, n = int(number), int(count)
    except ValueError:
        i, n = 0, 0
    if not 1 <= i <= n <= 16:
        raise UserError(f"--part {part!r}: give i/N with 1 <= i <= N <= 16, e.g. 2/3")
    if parts > 1:
        raise UserError("give --part or --parts, not both")
    return i, n


def writable(path: Optional[Path], what: str, folder: bool = False) -> None:
    """Fail before any work when ``path`` cannot be written: a file where a folder is wanted
    (or the reverse), or a parent that is a file or not writable."""
    if path is None:
        return
    if path.exists() and path.is_dir() != folder:
        raise UserError(f"{what} {path} is a {'file' if folder else 'folder'}, not a "
                        f"{'folder' if folder else 'file'}")
    parent = path if path.exists() else path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"cannot write {what} {path}: {parent} is not a folder")
    # tried with a file that leaves no trace, not asked: os.access says yes to root where the
    # kernel still refuses (/proc)
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as error:
        raise UserError(f"cannot write {what} {path}: {parent} is not a writable folder "
                        f"({error.strerror or error})") from None


def main() -> None:
    begin()
    read = None
    if os.environ.get("DVC_STAGE"):  # a DVC stage: note the params.yaml keys it reads
        read = params_read.begin()
    started = time.perf_counter()
    try:
        app()
    except SystemExit as done:  # typer's way of returning: record a DVC stage that succeeded
        if done.code in (0, None):
            record_dvc_stage(time.perf_counter() - started)
            if read is not None:
                params_read.write(read)
        raise
    except CountercaseError as error:  # bad input or a missing artefact: the message says which
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as error:  # a bug, not a user error: say so, traceback in a file
        if _debug:
            raise
        where = _write_crash_log()
        typer.echo(f"error: a bug in countercase, not in your input: {type(error).__name__}: "
                   f"{error} (traceback in {where}; --debug shows it here)", err=True)
        sys.exit(1)


def _write_crash_log() -> Path:
    try:
        CRASH_LOG.parent.mkdir(parents=True, exist_ok=True)
        CRASH_LOG.write_text(traceback.format_exc(), encoding="utf-8")
        return CRASH_LOG.resolve()
    except OSError:
        return Path("(not writable: run with --debug)")


def read_json(path: Path):
    """A JSON input a user gave (a fact sheet, a tree); what cannot be read is named."""
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

"""``dvc.yaml`` and ``experiments/dvc.yaml`` written from the registry of stages.

``python -m countercase.dag`` writes both; ``--check`` exits 1 naming each file that differs
from what it would write (the test suite runs the same comparison); ``--params-read`` names the
stages whose last run read a ``params.yaml`` key they do not declare
(:mod:`countercase.dag.params`)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from countercase import layout
from countercase.dag.code import ROOT, code_deps
from countercase.dag.params import READ, check
from countercase.dag.stages import BY_NAME, DEFAULT, OPT_IN, STAGES, Stage

WIDTH = 100
HEADERS = {
    DEFAULT: "The pipeline (`make repro`). Each stage is a `countercase` subcommand with explicit "
             "inputs and outputs (the paths of countercase.layout); parameters come from "
             "params.yaml, by key. Timings live in metrics/timing/ (not cached). Each stage's "
             "code deps are the modules its command imports. Written by `python -m "
             "countercase.dag` from src/countercase/dag/stages.yaml: edit that, not this file.",
    OPT_IN: "The opt-in pipeline (`make repro-extended`): the encoder fine-tuned on citation "
            "pairs re-embeds the corpus, its fusion weight is tuned and its conditions are "
            "scored. Its gain was not significant on its own held-out data, so by the budget rule "
            "(configs/budget_rule.yaml) it runs outside the default pipeline; the paper reads its "
            "committed metrics and says which build they came from. It reads the default "
            "pipeline's outputs (`make repro` first). Written by `python -m countercase.dag` "
            "from src/countercase/dag/stages.yaml: edit that, not this file.",
}


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}# {line}" for line in textwrap.wrap(text, WIDTH - len(indent) - 2)]


def _path(dep) -> tuple[str, str | None]:
    return (str(dep[0]), dep[1]) if isinstance(dep, tuple) else (str(dep), None)


def _covered(path: str, folders: list[str]) -> bool:
    return any(path.startswith(folder.rstrip("/") + "/") for folder in folders)


def deps(stage: Stage) -> list[tuple[str, str | None]]:
    """Its code deps (those no declared folder covers), then its declared deps."""
    declared = [_path(dep) for dep in stage.deps]
    folders = [path for path, _ in declared if (ROOT / path).is_dir()]
    code = [(p, None) for p in code_deps(stage.cmd) if not _covered(p, folders)]
    return code + declared


def render_stage(stage: Stage) -> list[str]:
    lines = [f"  {stage.name}:"]
    if stage.pipeline == OPT_IN:
        lines.append("    wdir: ..")
    if stage.why:
        lines += _comment(stage.why, "    ")
    lines.append("    cmd: >-")
    lines += textwrap.wrap(stage.cmd, WIDTH, initial_indent="      ", subsequent_indent="      ",
                           break_long_words=False, break_on_hyphens=False)
    found = deps(stage)
    if found:
        lines.append("    deps:")
        for path, why in found:
            lines.append(f"      - {path}" + (f"  # {why}" if why else ""))
    if stage.params is not None:
        lines.append("    params:")
        lines += [f"      - {key}" for key in stage.params]
    written = stage.outputs
    if written["outs"]:
        lines.append("    outs:")
        for path in written["outs"]:
            if path.parts[0] != str(layout.PROCESSED.parts[0]):  # committed, not cached
                lines += [f"      - {path}:", "          cache: false"]
            elif stage.persist:
                lines += [f"      - {path}:", "          persist: true"]
            else:
                lines.append(f"      - {path}")
    if written["metrics"]:
        lines.append("    metrics:")
        for path in written["metrics"]:
            lines += [f"      - {path}:", "          cache: false"]
    return lines


def render(pipeline: Path) -> str:
    lines = _comment(HEADERS[pipeline], "") + ["stages:"]
    stages = [stage for stage in STAGES if stage.pipeline == pipeline]
    for i, stage in enumerate(stages):
        lines += ([""] if i else []) + render_stage(stage)
    return "\n".join(lines) + "\n"


def _text(path: Path) -> str | None:
    """The file's text; None where there is none or it is not UTF-8 (it differs, either way)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def stale(root: Path = ROOT) -> list[Path]:
    """The pipeline files under ``root`` that differ from what :func:`render` writes (one that
    is missing or not UTF-8 differs)."""
    return [pipeline for pipeline in HEADERS if _text(root / pipeline) != render(pipeline)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if stale.")
    parser.add_argument("--params-read", nargs="?", const=str(READ), metavar="FOLDER",
                        help="Write nothing; name each stage whose last run read a params.yaml "
                             f"key it does not declare (its records, default {READ}); exit 1 "
                             "if any did.")
    args = parser.parse_args(argv)
    if args.params_read is not None:
        folder = Path(args.params_read)
        if not folder.is_dir() or not any(folder.iterdir()):
            print(f"error: no records of params read in {args.params_read}: run the stages "
                  "under dvc repro first", file=sys.stderr)
            return 2
        found = check(BY_NAME, Path(args.params_read))
        for stage, keys in found.items():
            print(f"{stage} read undeclared params: {', '.join(keys)}")
        return 1 if found else 0
    if args.check:
        found = stale()
        for pipeline in found:
            print(f"{pipeline} differs from src/countercase/dag/stages.yaml: run "
                  "python -m countercase.dag")
        return 1 if found else 0
    for pipeline in HEADERS:
        (ROOT / pipeline).write_text(render(pipeline), encoding="utf-8")
        print(f"wrote {pipeline}")
    return 0

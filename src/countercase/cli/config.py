"""``countercase config --resolved``: every value a system runs with, and the file it came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
import yaml

from countercase.cli.base import PARAMS_OPTION, UserError, app
from countercase.config import CHOICES, ConfigError, load_params
from countercase.retrieve.choices import Choices, is_ref
from countercase.retrieve.registry import SYSTEMS_FILE, system


def _choice_sources(root: Path) -> dict[str, str]:
    """``section.key`` -> the choice file that sets it (and the stage that wrote it)."""
    found: dict[str, str] = {}
    for choice in CHOICES.values():
        source = root / choice.path
        if choice.values is None or not source.is_file():
            continue
        chosen = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
        for section, values in choice.values(chosen, source).items():
            found |= {f"{section}.{key}": f"{choice.path} (stage {choice.stage})"
                      for key in values}
    return found


def _step_sources(step: dict[str, Any], choices, systems_file: str) -> dict[str, tuple]:
    """Each step setting -> (its value, where it came from): a chosen value names its file."""
    rows = {}
    for key, value in step.items():
        if is_ref(value):
            name = str(value["choice"]).split(".")[0]
            rows[key] = (choices.resolve(value, strict=False),
                         f"{CHOICES[name].path} {value['choice'].split('.', 1)[1]} (stage "
                         f"{CHOICES[name].stage})")
        else:
            rows[key] = (value, systems_file)
    return rows


def resolved(system_name: str, params_path: Path) -> dict[str, Any]:
    """What :func:`config` prints: the system, its step and, for a chunk pipeline, every
    retrieval value, each with its source."""
    try:
        spec = system(system_name)
    except ConfigError as error:
        raise UserError(str(error)) from None
    params, choices = load_params(params_path), Choices()
    systems_file = f"configs/{SYSTEMS_FILE.name} (system {spec.name})"
    raw = (yaml.safe_load(Path(params_path).read_text(encoding="utf-8")) or {}).get(
        "retrieve", {})
    chosen = _choice_sources(Path(params_path).parent)
    out: dict[str, Any] = {"system": spec.name, "level": spec.level,
                           "description": spec.description, "values": {}}
    for key, (value, source) in _step_sources(spec.step, choices, systems_file).items():
        out["values"][f"step.{key}"] = {"value": value, "from": source}
    if spec.level == "chunks":
        overrides = _step_sources(spec.settings, choices, systems_file)
        overrides["steps"] = (spec.steps, systems_file + "".join(
            f"; {step} when {source}" for step, source in _step_sources(
                spec.when, choices, systems_file).items() for source in source[1:]))
        runs = spec.params(params.retrieve, params.evaluate.chunk_depth, choices)
        # retrieve.system names the served system, not a setting of this one
        for key, value in runs.model_dump(mode="json", exclude={"system"}).items():
            if key in overrides:
                source = overrides[key][1]
            elif key in ("bm25_depth", "dense_depth"):  # the evaluate stage's candidates
                source = "params.yaml evaluate.chunk_depth"
            elif f"retrieve.{key}" in chosen:
                source = chosen[f"retrieve.{key}"]
            elif key in raw:
                source = "params.yaml"
            else:
                source = "the package's default (countercase.config)"
            out["values"][f"retrieve.{key}"] = {"value": value, "from": source}
    return out


@app.command("config")
def config(
    resolved_: bool = typer.Option(False, "--resolved", help="Every value the system runs "
                                   "with, resolved through the choice files, and its source."),
    system: Optional[str] = typer.Option(
        None, help="A system of configs/systems.yaml (default: params.yaml retrieve.system, "
        "the served one)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of lines."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The values a system runs with: with --resolved, each one and the file it came from
    (params.yaml, a choice file and the stage that wrote it, configs/systems.yaml, or the
    package's default)."""
    if not resolved_:
        raise UserError("give --resolved (the values a system runs with and where each came "
                        "from)")
    found = resolved(system or load_params(params_path).retrieve.system, params_path)
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    typer.echo(f"{found['system']} ({found['level']}): {found['description']}")
    width = max((len(k) for k in found["values"]), default=0)
    for key, row in found["values"].items():
        typer.echo(f"  {key:<{width}}  {json.dumps(row['value'])}  <- {row['from']}")

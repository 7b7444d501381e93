"""The DVC files are the registry of stages (:mod:`countercase.dag`): each is what ``python -m
countercase.dag`` writes, every stage writes what :mod:`countercase.layout` says it writes, and its
code deps cover every module its command imports (so editing any of them reruns the stage)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from countercase import layout
from countercase.dag.code import ROOT, UnknownCommand, code_deps, command_modules
from countercase.dag.stages import BY_NAME, STAGES
from countercase.dag.write import HEADERS, render, stale

PIPELINES = tuple(HEADERS)  # the default and the opt-in pipeline


def _stages(pipelines=PIPELINES) -> dict:
    return {name: stage for pipeline in pipelines
            for name, stage in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items()}


def test_the_committed_pipelines_are_the_registry():
    assert not stale(), "run python -m countercase.dag"


def test_a_hand_edit_is_found(tmp_path):
    for pipeline in PIPELINES:
        (tmp_path / pipeline).parent.mkdir(parents=True, exist_ok=True)
        text = render(pipeline)
        if pipeline == layout.PIPELINE:  # a hand edit of one of them
            text = text.replace("      - seed\n", "", 1)
        (tmp_path / pipeline).write_text(text)
    assert stale(tmp_path) == [layout.PIPELINE]
    (tmp_path / layout.PIPELINE).write_bytes(b"stages: \xff\xfe")  # not UTF-8: stale, no trace
    assert stale(tmp_path) == [layout.PIPELINE]


def test_every_stage_depends_on_the_code_it_runs():
    missing = {}
    for name, stage in _stages().items():
        deps = [d for d in stage.get("deps", []) if d.startswith("src/")]
        lacking = [p for p in code_deps(stage["cmd"])
                   if not any(p == d or p.startswith(d.rstrip("/") + "/") for d in deps)]
        if lacking:
            missing[name] = lacking
    assert not missing, f"code deps missing: {missing}"


def test_code_deps_follow_in_function_imports():
    # `countercase perturb` imports the registry of systems inside its function
    assert "countercase.retrieve.registry" in command_modules("perturb")
    assert "src/countercase/retrieve/registry.py" in code_deps(BY_NAME["perturb"].cmd)
    assert code_deps("python -m something") == []
    with pytest.raises(UnknownCommand, match="no-such-command"):
        command_modules("no-such-command")


def test_declared_deps_exist():
    for stage in STAGES:
        for dep in stage.deps:
            path = dep[0] if isinstance(dep, tuple) else dep
            assert (ROOT / path).exists() or not str(path).startswith(("src/", "configs/")), \
                (stage.name, path)


def test_declared_params_are_in_params_yaml():
    """DVC refuses to record a stage whose declared param is not in params.yaml, after the
    stage has run: a key the file lost (or a chosen one, which it never holds) is found here."""
    values = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for stage in STAGES:
        for key in stage.params or ():
            found = values
            for part in key.split("."):
                assert isinstance(found, dict) and part in found, (stage.name, key)
                found = found[part]


def test_stage_outputs_are_the_layout():
    stages = _stages()
    assert set(stages) == set(BY_NAME)
    assert {stage.whole or stage.name for stage in STAGES} == set(layout.STAGE_OUTPUTS)
    for name, stage in stages.items():
        for kind in ("outs", "metrics"):
            found = {next(iter(o)) if isinstance(o, dict) else o for o in stage.get(kind, [])}
            assert found == {str(p) for p in BY_NAME[name].outputs[kind]}, (name, kind)


def test_a_stage_in_parts_runs_each_part_then_joins_them():
    """A part writes its share of the stage's data folder and no report; the stage reads every
    part and writes what it wrote before."""
    parts = [s for s in STAGES if s.whole == "embed"]
    whole = BY_NAME["embed"]
    assert [s.part for s in parts] == [(i, len(parts)) for i in range(1, len(parts) + 1)]
    assert [s.args["--part"] for s in parts] == [f"{i}/{len(parts)}" for i in (1, 2, 3)]
    assert whole.args["--parts"] == str(len(parts)) and whole.outputs == layout.STAGE_OUTPUTS["embed"]
    assert {str(p.outputs["outs"][0]) for p in parts} <= {str(d[0]) for d in whole.deps
                                                          if isinstance(d, tuple)}
    assert all(not p.outputs["metrics"] and "--timing" not in p.args for p in parts)
    assert STAGES.index(parts[-1]) < STAGES.index(whole)


def test_cli_defaults_are_layout_paths():
    """No stage output path is typed twice: every default path of a subcommand is a layout
    constant (or a file the user names)."""
    import inspect

    from countercase import cli
    from countercase.cli.lazy import commands

    commands()  # every command module imported, so each has registered its commands
    known = {v for v in vars(layout).values() if isinstance(v, Path)}
    known |= {layout.metrics(p.stem) for p in (ROOT / "metrics").glob("*.json")}
    known |= {layout.timing(p.stem) for p in (ROOT / "metrics" / "timing").glob("*.json")}
    known |= {p for stage in layout.STAGE_OUTPUTS.values() for kind in ("outs", "metrics")
              for p in stage[kind]}
    known |= {layout.recording(p.name.removesuffix(".jsonl.gz"))
              for p in (ROOT / layout.RECORDINGS).glob("*.jsonl.gz")}
    known |= {layout.EVALUATE / "chunkings", Path("params.yaml"), Path("tree.json")}
    for command in cli.app.registered_commands:
        for parameter in inspect.signature(command.callback).parameters.values():
            default = getattr(parameter.default, "default", None)
            if isinstance(default, Path):
                assert default in known, (command.callback.__name__, parameter.name, default)


def test_a_stage_names_its_command_and_only_what_differs_from_its_defaults():
    """Issue 60: the command line comes from the CLI's own defaults, not retyped strings: each
    stage's command exists, and each option it passes is one of the command's, set to a value
    other than its default."""
    import click
    import typer

    from countercase import cli

    group = typer.main.get_command(cli.app)
    context = click.Context(group)
    for stage in STAGES:
        command = group.get_command(context, stage.command)
        assert command is not None, (stage.name, stage.command)
        options = {option: p for p in command.params for option in p.opts}
        for option, value in stage.args.items():
            assert option in options, (stage.name, option)
            default = options[option].default
            assert value is True or default is None or str(default) != str(value), (
                stage.name, option, "restates the command's default")


def test_the_stage_file_names_only_layout_paths_and_its_groups(tmp_path):
    """stages.yaml: a path is a layout name (refused when there is none), a literal path, or
    made by layout.metrics/timing/recording; an unknown group or key is refused by name."""
    from countercase.dag.stages import StageFileError, path, read

    assert path("GOLD/x.jsonl") == layout.GOLD / "x.jsonl" and path("INDEX") == layout.INDEX
    assert path("metrics:ner") == layout.metrics("ner") and path("params.yaml") == "params.yaml"
    with pytest.raises(StageFileError, match="no path NOPE"):
        path("NOPE/x.jsonl")
    source = tmp_path / "stages.yaml"
    source.write_text("groups: {}\nstages:\n  x: {pipeline: default, command: ingest, "
                      "deps: [+MISSING]}\n")
    with pytest.raises(StageFileError, match="names no group"):
        read(source)
    source.write_text("groups: {}\nstages:\n  x: {pipeline: default, command: ingest, dep: []}\n")
    with pytest.raises(StageFileError, match="unknown keys"):
        read(source)
    for parts in ("0", "two", "true", "17"):
        source.write_text("groups: {}\nstages:\n  x: {pipeline: default, command: ingest, "
                          f"parts: {parts}}}\n")
        with pytest.raises(StageFileError, match="stage x: parts"):
            read(source)

"""``countercase --help`` shows what a user runs first, then the pipeline's stages, then the lab
(issue 60): the tools that made the labelled samples live under ``countercase lab``, and the two
names the frozen preregistrations give still run, hidden."""

from __future__ import annotations

import re
from pathlib import Path


def _panels(text: str) -> list[tuple[str, list[str]]]:
    """The help's panels in order, each with its commands."""
    panels: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        title = re.match(r"╭─ (.+?) ─", line)
        if title:
            panels.append((title.group(1), []))
            continue
        command = re.match(r"│ ([a-z][a-z0-9-]+) ", line)
        if command and panels:
            panels[-1][1].append(command.group(1))
    return panels


def test_the_help_leads_with_search_and_keeps_the_lab_apart(run_cli):
    code, out, _ = run_cli("--help")
    panels = dict(_panels(out))
    assert code == 0 and [p for p, _ in _panels(out)] == [
        "Options", "Use", "Pipeline stages and their commands", "Lab"]
    assert panels["Use"][:4] == ["search", "serve", "tree", "factsheet"]
    assert {"evaluate", "perturb", "train-ltr"} <= set(panels["Pipeline stages and their commands"])
    everything = " ".join(c for _, commands in _panels(out) for c in commands)
    for lab_tool in ("audit-sample", "roles-sample", "validity-cases", "holdings-fit"):
        assert lab_tool not in everything.split()
    code, out, _ = run_cli("lab", "--help")
    lab = [c for _, commands in _panels(out) for c in commands]
    assert code == 0 and {"audit-sample", "audit-blind", "llm-calibration-sample",
                          "validity-cases", "validity-v3-cases", "holdings-sample"} <= set(lab)


def test_the_preregistrations_command_names_still_run(run_cli):
    for name in ("validity-cases", "validity-v3-cases"):
        code, out, _ = run_cli(name, "--help")
        assert code == 0 and f"countercase {name}" in out


def test_config_resolved_names_where_each_value_came_from(run_cli):
    """Issue 60: every value a system runs with and its source; an unknown system lists them."""
    import json

    code, out, err = run_cli("config", "--resolved", "--system", "bm25", "--json")
    assert code == 0, err
    values = json.loads(out)["values"]
    assert values["retrieve.steps"] == {"value": ["bm25"],
                                        "from": "configs/systems.yaml (system bm25)"}
    assert values["retrieve.rrf_k"]["from"] == "params.yaml"
    assert values["retrieve.bm25_depth"]["from"] == "params.yaml evaluate.chunk_depth"
    assert values["retrieve.fact_weight"]["from"].startswith("configs/tuning_choice.yaml")
    code, out, _ = run_cli("config", "--resolved", "--system", "docs_tuned", "--json")
    assert json.loads(out)["values"]["step.k1"]["from"].startswith(
        "configs/tuning_choice.yaml precedents.docs.k1")
    code, _, err = run_cli("config", "--resolved", "--system", "nope")
    assert code == 2 and "no system 'nope'" in err and "bm25_docs" in err
    code, _, err = run_cli("config")
    assert code == 2 and "give --resolved" in err


def test_the_help_reads_the_source_and_imports_no_command_module():
    """`countercase --help` lists every command from the modules' source (cli.lazy.index)
    without importing one; the index agrees with the commands the modules register."""
    import subprocess
    import sys

    from countercase.cli.base import app
    from countercase.cli.lazy import commands, index

    script = ("import sys\nfrom countercase.cli import main\nsys.argv = ['countercase', '--help']"
              "\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in sys.modules if m.startswith('countercase.cli.')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "['countercase.cli.base', 'countercase.cli.lazy']"
    loaded = commands()
    registered = {info.name or info.callback.__name__.replace("_", "-")
                  for info in app.registered_commands} | {g.name for g in app.registered_groups}
    assert set(loaded) == set(index()) == registered
    for name, entry in index().items():
        assert (loaded[name].help or "") == entry.help and loaded[name].hidden == entry.hidden, name


def test_an_option_group_is_declared_once_and_two_groups_share_an_option(tmp_path):
    """cli.base.option_group: the inputs several commands read become their options once; a
    command reading two groups gets one --metadata, handed to both; a missing case file is
    named."""
    import typer
    from typer.testing import CliRunner

    from countercase.cli.base import CaseFiles, UserError, case_files, index_paths
    from countercase.layout import IndexPaths

    app, seen = typer.Typer(), {}

    @app.command()
    @index_paths
    @case_files
    def both(paths: IndexPaths, files: CaseFiles, k: int = 1) -> None:
        seen.update(paths=paths, files=files.require(), k=k)

    @app.command()
    def other() -> None:
        pass

    given = {name: tmp_path / name for name in ("edges", "documents", "sheets", "groups", "gold",
                                                "metadata")}
    for path in given.values():
        path.touch()
    words = [w for name, path in given.items() for w in (f"--{name}", str(path))]
    result = CliRunner().invoke(app, ["both", *words, "--index-dir", "ix", "--k", "3"])
    assert result.exit_code == 0, result.output
    assert seen["paths"] == IndexPaths(index_dir=Path("ix"), metadata=given["metadata"])
    assert seen["files"] == CaseFiles(**given) and seen["k"] == 3
    help_text = CliRunner().invoke(app, ["both", "--help"]).output
    assert help_text.count("--metadata") == 1 and "--fact-index" in help_text
    given["gold"].unlink()
    result = CliRunner().invoke(app, ["both", *words])
    assert isinstance(result.exception, UserError) and "gold dispositive facts" in str(
        result.exception)

"""``countercase --help`` shows what a user runs first, then the pipeline's stages, then the lab
(issue 60): the tools that made the labelled samples live under ``countercase lab``, and the two
names the frozen preregistrations give still run, hidden."""

from __future__ import annotations

import re


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

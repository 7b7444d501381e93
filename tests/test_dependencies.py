"""Every third-party module the code imports is installed by ``make setup`` (pyproject.toml),
so a clean clone's CI and a researcher's fresh machine never meet a missing module."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
# The local LLM is built by its own target, `make llm` (portable flags, ../shared/ENVIRONMENT.md);
# the code that loads it says so when it is missing.
SEPARATE = {"llama_cpp"}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", requirement).lower()


def _declared() -> set[str]:
    """The distributions pyproject.toml pins, with everything they require (its extras too)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pending = [Requirement(r) for r in project["dependencies"]]
    pending += [Requirement(r) for group in project["optional-dependencies"].values() for r in group]
    seen: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = _name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            child = Requirement(line)
            extras = {""} | set(requirement.extras)
            if child.marker is None or any(child.marker.evaluate({"extra": e}) for e in extras):
                pending.append(child)
    return seen


def _imported() -> set[str]:
    modules = set()
    for folder in ("src", "tests", "notebooks", "paper"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    modules.add(node.module.split(".")[0])
    local = {p.stem for p in (ROOT / "tests").glob("*.py")} | {"countercase"}
    return modules - set(sys.stdlib_module_names) - local - SEPARATE


def test_every_imported_module_is_declared():
    owners = metadata.packages_distributions()
    declared = _declared()
    undeclared = {m: owners.get(m, ["(not installed)"]) for m in sorted(_imported())
                  if not any(_name(d) in declared for d in owners.get(m, []))}
    assert not undeclared, f"imported but not in pyproject.toml: {undeclared}"

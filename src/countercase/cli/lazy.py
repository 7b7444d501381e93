"""The command line loads only the module of the command it runs.

Each command module imports what its commands need at its top, so ``countercase --help`` must not
import them all (that takes seconds: pandas, scipy, panel). The help is read from the modules'
source instead (:func:`index`: each ``@app.command`` or ``@lab.command`` function, its name,
docstring and panel); a command's module is imported when the command is resolved.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import click
import typer
from typer.core import TyperGroup

HERE = Path(__file__).resolve().parent
NOT_COMMANDS = {"__init__", "__main__", "base", "lazy"}
# --help lists the commands by panel, in the order the panels first appear
USE = ("search", "serve", "tree", "factsheet", "explain", "explore", "config")
PANELS = {"use": "Use", "stage": "Pipeline stages and their commands", "lab": "Lab"}


@dataclass(frozen=True)
class Entry:
    """A top-level command as its source declares it."""

    name: str
    modules: tuple[str, ...]
    help: str
    hidden: bool = False

    @property
    def panel(self) -> str:
        return PANELS["use" if self.name in USE else "lab" if self.name == "lab" else "stage"]


def _keyword(call: ast.Call, name: str, default=None):
    found = next((k.value for k in call.keywords if k.arg == name), None)
    return found.value if isinstance(found, ast.Constant) else default


def _declared(call: ast.AST, owner: str, function: str) -> tuple[str, bool] | None:
    """(name, hidden) where ``call`` is ``owner.command(...)``."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "command" and getattr(call.func.value, "id", None) == owner):
        return None
    named = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
    return named or function.replace("_", "-"), bool(_keyword(call, "hidden", False))


def _module_entries(module: str, tree: ast.Module) -> tuple[list[Entry], list[Entry]]:
    """The module's top-level commands and the lab's group (its help with this module)."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found, lab = [], []
    for node in tree.body:
        for decorator in getattr(node, "decorator_list", []):
            doc = ast.get_docstring(node) or ""
            if (declared := _declared(decorator, "app", node.name)):
                found.append(Entry(declared[0], (module,), doc, declared[1]))
            elif _declared(decorator, "lab", node.name):
                lab.append(Entry("lab", (module,), ""))
        value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if isinstance(value, ast.Call) and (declared := _declared(value.func, "app", "")):
            alias = functions[value.args[0].id]  # app.command("name", hidden=True)(function)
            found.append(Entry(declared[0], (module,), ast.get_docstring(alias) or "",
                               declared[1]))
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "lab":
            lab.append(Entry("lab", (module,), _keyword(value, "help", "")))
    return found, lab


@lru_cache(maxsize=None)
def index() -> dict[str, Entry]:
    """Every top-level command, by name: those of :data:`USE` first, then each module's in
    order, the lab last."""
    entries, lab = [], []
    for path in sorted(HERE.glob("*.py")):
        if path.stem not in NOT_COMMANDS:
            module = f"countercase.cli.{path.stem}"
            found, group = _module_entries(module, ast.parse(path.read_text(encoding="utf-8")))
            entries += found
            lab += group
    entries.sort(key=lambda e: USE.index(e.name) if e.name in USE else len(USE))
    if lab:
        entries.append(Entry("lab", tuple(dict.fromkeys(m for e in lab for m in e.modules)),
                             next((e.help for e in lab if e.help), "")))
    return {entry.name: entry for entry in entries}


class LazyGroup(TyperGroup):
    """A group whose commands are imported when resolved; its help reads :func:`index`."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(index())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = index().get(name)
        if entry is None:
            return super().get_command(ctx, name)
        if self._listing:  # the help's row: its name, first paragraph and panel
            command = click.Command(name, help=entry.help, hidden=entry.hidden)
            command.rich_help_panel = entry.panel
            return command
        return load(entry)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def load(entry: Entry) -> click.Command:
    """The command ``entry`` names, its modules imported."""
    from countercase.cli.base import app

    for module in entry.modules:
        importlib.import_module(module)
    options = {"pretty_exceptions_short": app.pretty_exceptions_short,
               "rich_markup_mode": app.rich_markup_mode}
    for info in app.registered_groups:
        if info.name == entry.name:
            return typer.main.get_group_from_info(info, suggest_commands=app.suggest_commands,
                                                  **options)
    for info in app.registered_commands:
        if (info.name or info.callback.__name__.replace("_", "-")) == entry.name:
            return typer.main.get_command_from_info(info, **options)
    raise LookupError(f"{entry.modules} declare no command {entry.name!r}")


def commands() -> dict[str, click.Command]:
    """Every top-level command, loaded (for tests and the stages' option check)."""
    return {name: load(entry) for name, entry in index().items()}

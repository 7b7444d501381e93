"""A stage's code deps: the modules of the package its ``countercase`` command imports, read from
the source (the function of the command, the helpers of its CLI module it calls, the module-level
imports it uses, and everything those import in turn), so editing any of them reruns the stage."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from countercase.errors import CountercaseError

PACKAGE = Path(__file__).resolve().parents[1]
SRC = PACKAGE.parent
ROOT = SRC.parent
# Shared by every stage and never a cause of different outputs: the command line itself, the
# error base, the layout of paths (the DVC files name the same paths), the typed parameters
# (each stage depends on its params.yaml keys, and the defaults equal params.yaml's), the JVM's
# start and the table of stage times (every stage writes it, none reads it). A package whose
# ``__init__`` is empty or only its docstring runs nothing either (:func:`runs_nothing`).
EXEMPT = {"countercase", "countercase.errors", "countercase.layout", "countercase.config",
          "countercase.runtime.java", "countercase.report.stage_times"}


class UnknownCommand(CountercaseError, LookupError):
    """A stage names a ``countercase`` subcommand that no CLI function declares."""


def module_path(module: str) -> Path | None:
    base = SRC.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _resolve(module: str, name: str | None) -> str | None:
    """The countercase module that ``from module import name`` loads."""
    if name and module_path(f"{module}.{name}"):
        return f"{module}.{name}"
    return module if module_path(module) else None


def _imports(nodes) -> set[str]:
    found = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.module and \
                    sub.module.split(".")[0] == "countercase":
                found |= {m for a in sub.names if (m := _resolve(sub.module, a.name))}
            elif isinstance(sub, ast.Import):
                found |= {a.name for a in sub.names if a.name.split(".")[0] == "countercase"
                          and module_path(a.name)}
    return found


@lru_cache(maxsize=None)
def _module_imports(module: str) -> frozenset[str]:
    tree = ast.parse(module_path(module).read_text(encoding="utf-8"))
    found = _imports([tree])
    parts = module.split(".")
    found |= {".".join(parts[:i]) for i in range(2, len(parts))}  # the packages' __init__
    return frozenset(found)


def closure(modules: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen or module.startswith("countercase.cli"):
            continue
        seen.add(module)
        todo += [m for m in _module_imports(module) if m not in seen]
    return seen


def command_name(node: ast.FunctionDef) -> str | None:
    """The subcommand a CLI function declares (``@app.command(...)``), or None."""
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "attr", None) == "command":
            if dec.args and isinstance(dec.args[0], ast.Constant):
                return dec.args[0].value
            return node.name.replace("_", "-")
    return None


def _helpers(command: ast.FunctionDef, tree: ast.Module) -> list[ast.FunctionDef]:
    """The module's functions that ``command`` calls, and those they call in turn."""
    functions = {n.name: n for n in tree.body
                 if isinstance(n, ast.FunctionDef) and command_name(n) is None}
    found: dict[str, ast.FunctionDef] = {}
    todo = [command]
    while todo:
        for name in {n.id for n in ast.walk(todo.pop()) if isinstance(n, ast.Name)}:
            if name in functions and name not in found:
                found[name] = functions[name]
                todo.append(functions[name])
    return list(found.values())


def command_modules(subcommand: str) -> set[str]:
    """The countercase modules a ``countercase <subcommand>`` run imports: those its function
    and the helpers it calls import, and the module-level imports of its CLI module they use."""
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and command_name(node) == subcommand:
                helpers = _helpers(node, tree)
                used = {n.id for f in (node, *helpers) for n in ast.walk(f)
                        if isinstance(n, ast.Name)}
                top = set()
                for stmt in tree.body:
                    if isinstance(stmt, ast.ImportFrom) and stmt.module and \
                            stmt.module.startswith("countercase") and \
                            not stmt.module.startswith("countercase.cli"):
                        top |= {m for a in stmt.names if (a.asname or a.name) in used
                                and (m := _resolve(stmt.module, a.name))}
                return closure(_imports([node, *helpers]) | top)
    raise UnknownCommand(f"no CLI function declares `countercase {subcommand}`")


def runs_nothing(module: str) -> bool:
    body = ast.parse(module_path(module).read_text(encoding="utf-8")).body
    return not body or (len(body) == 1 and isinstance(body[0], ast.Expr)
                        and isinstance(body[0].value, ast.Constant))


def code_deps(cmd: str) -> list[str]:
    """The code deps of a stage whose command is ``cmd``, as paths from the repository's root,
    sorted; none for a command that is not ``countercase``'s."""
    words = cmd.split()
    if words[0] != "countercase":
        return []
    return sorted(str(module_path(m).relative_to(ROOT)) for m in command_modules(words[1])
                  if m not in EXEMPT and not runs_nothing(m))

"""``dvc.yaml`` agrees with the code: every stage writes what :mod:`countercase.layout` says it
writes, and its code deps cover every module its command imports (so editing any of them reruns
the stage). ``python tests/test_stage_deps.py`` prints each stage's required code deps;
``--write`` adds the missing ones to ``dvc.yaml`` (after the stage's last code dep)."""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "countercase"
# Shared by every stage and never a cause of different outputs: the command line itself, the
# error base, the layout of paths (dvc.yaml names the same paths) and the typed parameters (each
# stage depends on its own params.yaml section, and the defaults equal params.yaml), and the
# table of stage times (every stage writes it, none reads it). A package whose ``__init__`` is
# empty or only its docstring runs nothing either (:func:`_runs_nothing`).
EXEMPT = {"countercase", "countercase.errors", "countercase.layout", "countercase.config",
          "countercase.runtime.java", "countercase.report.stage_times"}


PIPELINES = ("dvc.yaml", "experiments/dvc.yaml")  # the default and the opt-in pipeline


def _stages(pipelines=PIPELINES) -> dict:
    return {name: stage for pipeline in pipelines
            for name, stage in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items()}


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


def command_modules(subcommand: str) -> set[str]:
    """The countercase modules a ``countercase <subcommand>`` run imports: those its function
    imports, and the module-level imports of its CLI module that the function uses."""
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and _command_name(node) == subcommand:
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                top = set()
                for stmt in tree.body:
                    if isinstance(stmt, ast.ImportFrom) and stmt.module and \
                            stmt.module.startswith("countercase") and \
                            not stmt.module.startswith("countercase.cli"):
                        top |= {m for a in stmt.names if (a.asname or a.name) in used
                                and (m := _resolve(stmt.module, a.name))}
                helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                           and n.name in used and _command_name(n) is None]
                return closure(_imports([node, *helpers]) | top)
    raise AssertionError(f"no CLI function for `countercase {subcommand}`")


def _command_name(node: ast.FunctionDef) -> str | None:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "attr", None) == "command":
            if dec.args and isinstance(dec.args[0], ast.Constant):
                return dec.args[0].value
            return node.name.replace("_", "-")
    return None


def required_code(stage: dict) -> set[str]:
    subcommand = stage["cmd"].split()[1]
    return {str(module_path(m).relative_to(ROOT)) for m in command_modules(subcommand)
            if m not in EXEMPT and not _runs_nothing(m)}


def _runs_nothing(module: str) -> bool:
    body = ast.parse(module_path(module).read_text(encoding="utf-8")).body
    return not body or (len(body) == 1 and isinstance(body[0], ast.Expr)
                        and isinstance(body[0].value, ast.Constant))


def _covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def test_every_stage_depends_on_the_code_it_runs():
    missing = {}
    for name, stage in _stages().items():
        deps = [d for d in stage.get("deps", []) if d.startswith("src/")]
        lacking = sorted(p for p in required_code(stage) if not _covered(p, deps))
        if lacking:
            missing[name] = lacking
    assert not missing, f"code deps missing in dvc.yaml: {missing}"


def test_code_deps_exist():
    for name, stage in _stages().items():
        for dep in stage.get("deps", []):
            assert (ROOT / dep).exists() or not dep.startswith("src/"), (name, dep)


def test_stage_outputs_are_the_layout():
    from countercase import layout

    stages = _stages()
    assert set(stages) == set(layout.STAGE_OUTPUTS)
    for name, stage in stages.items():
        for kind in ("outs", "metrics"):
            found = {next(iter(o)) if isinstance(o, dict) else o for o in stage.get(kind, [])}
            assert found == {str(p) for p in layout.STAGE_OUTPUTS[name][kind]}, (name, kind)


def test_cli_defaults_are_layout_paths():
    """No stage output path is typed twice: every default path of a subcommand is a layout
    constant (or a file the user names)."""
    import inspect

    from countercase import cli, layout

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


def write_missing() -> list[str]:
    """Insert every stage's lacking code deps into its pipeline file; returns what was added."""
    added = []
    for pipeline in PIPELINES:
        added += _write_missing(pipeline)
    return added


def _write_missing(pipeline: str) -> list[str]:
    lines = (ROOT / pipeline).read_text().splitlines(keepends=True)
    added = []
    for name, stage in _stages((pipeline,)).items():
        deps = [d for d in stage.get("deps", []) if d.startswith("src/")]
        lacking = sorted(p for p in required_code(stage) if not _covered(p, deps))
        if not lacking:
            continue
        start = lines.index(f"  {name}:\n")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("  ")
                    and not lines[i].startswith("   ")), len(lines))
        last = max(i for i in range(start, end) if lines[i].strip().startswith("- src/"))
        lines[last + 1:last + 1] = [f"      - {p}\n" for p in lacking]
        added += [f"{name}: {p}" for p in lacking]
    (ROOT / pipeline).write_text("".join(lines))
    return added


if __name__ == "__main__":
    if "--write" in sys.argv:
        print("\n".join(write_missing()) or "nothing missing")
        sys.exit(0)
    for stage_name, stage_def in _stages().items():
        print(stage_name)
        for path in sorted(required_code(stage_def)):
            print("   ", path)
    sys.exit(0)

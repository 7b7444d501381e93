"""The package's shape: imports follow the data flow, no stage reads another's private names,
and the typed defaults are ``params.yaml``'s."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "countercase"
# Lower layers first. A module may import its own package, the base zones and the packages
# before its own, never one after it (the command line, ``cli``, ``report``, the facade of
# notebooks, ``case``, the browser explorer over it, ``explore``, and the demo project,
# ``quickstart``, sit on top). The base zones: the legal vocabulary (``legal``), what the machine
# offers (``runtime``) and what every trained model shares (``training``).
BASE = {"errors", "layout", "config", "legal", "runtime", "training", "datasets"}
LAYERS = ["fetch", "ingest", "extract", "factsheet", "ner", "citations", "index", "scaleout",
          "retrieve", "experiment", "reranker", "biencoder", "evaluate", "ltr", "perturb", "holdings",
          "explain", "topology", "confirm"]
TOP = {"cli", "report", "case", "explore", "quickstart", "dag"}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("countercase"):
                yield module, node.module, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("countercase"):
                        yield module, alias.name, []


def _rank(package: str) -> int:
    if package in BASE or package in ("", "__init__"):
        return -1
    if package in TOP:
        return len(LAYERS)
    return LAYERS.index(package)


def test_every_package_is_placed():
    packages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
                if (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert packages - {"__init__", "__main__"} <= BASE | set(LAYERS) | TOP


def test_imports_follow_the_data_flow():
    backward = []
    for module, target, names in _imports():
        source, imported = _package(module), _package(target)
        if target == "countercase" and names:  # from countercase import layout
            imported = names[0]
        if source == imported or source in TOP:
            continue
        if source in BASE or source == "":
            ok = imported in BASE or imported == ""
        else:
            ok = _rank(imported) <= _rank(source)
        if not ok:
            backward.append(f"{module} -> {target}")
    assert not backward, "imports against the data flow:\n" + "\n".join(backward)


def test_no_private_name_crosses_a_package():
    private = [f"{module} -> {target}.{name}" for module, target, names in _imports()
               for name in names if name.startswith("_") and _package(module) != _package(target)]
    assert not private, private


def test_config_defaults_are_params_yaml():
    """Every section but ``budgets``: its table of stages is data, kept once, in params.yaml.
    The choice files' values are not params.yaml's (the served system is one)."""
    from countercase.config import Params, load_params

    found = load_params(Path(__file__).resolve().parents[1] / "params.yaml", adopt=())
    assert Params() == found.model_copy(update={"budgets": Params().budgets})


def _slow(function: ast.FunctionDef) -> bool:
    return any("slow" in ast.unparse(d) for d in function.decorator_list)


def test_the_everyday_tier_covers_every_package():
    """``pytest -m "not slow"`` imports every package of ``countercase`` from at least one
    test it runs, so marking a package's tests slow cannot empty the everyday tier of it."""
    from conftest import SLOW_MODULES

    covered = set()
    for path in sorted((PACKAGE.parents[1] / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        quick = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                 and f.name.startswith("test_") and not _slow(f)]
        if path.stem in SLOW_MODULES or not quick:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("countercase."):
                covered.add(node.module.split(".")[1])
            elif isinstance(node, ast.ImportFrom) and node.module == "countercase":
                covered.update(a.name for a in node.names)
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages <= covered, sorted(packages - covered)


def test_the_cli_only_parses_so_its_modules_stay_short():
    """Issue 60: a stage's body lives in its package; cli/ modules parse, check and print."""
    long = {p.name: n for p in (PACKAGE / "cli").glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 300}
    assert not long, f"cli/ modules of 300 lines or more: {long}"


def test_no_function_runs_past_80_lines():
    """Issue 60: a function reads in one screen; a longer one is split into its phases."""
    long = [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length})"
            for path in sorted(PACKAGE.rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (length := node.end_lineno - node.lineno + 1) > 80]
    assert not long, f"functions over 80 lines: {long}"


def test_the_perturbation_engine_reads_no_experiment_stage():
    """Issue 60: the tie rule perturb shares with tuning lives under ``experiment``; perturb
    imports nothing of the evaluate stage (LAYERS' order alone would allow it)."""
    crossing = sorted({(m, target) for m, target, _ in _imports()
                       if _package(m) == "perturb" and _package(target) == "evaluate"})
    assert not crossing, crossing


def test_a_function_imports_only_what_is_heavy_or_optional():
    """Issue 60: the package's own modules and the standard library are imported at a module's
    top; a function imports only a package that is heavy or optional to load (torch, pyserini,
    the PDF tools, ...). The command line stays fast by loading one command module a run
    (cli.lazy), whose loader reads the app that imports it."""
    import sys

    inside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    name = (node.module if isinstance(node, ast.ImportFrom)
                            else node.names[0].name) or ""
                    top = name.split(".")[0]
                    if top == "countercase" or top in sys.stdlib_module_names:
                        inside.append(f"{path.relative_to(PACKAGE)} {function.name}: {name}")
    # make repro runs repro_clock.py with the system Python before anything is installed
    assert inside == ["cli/lazy.py load: countercase.cli.base",
                      "report/repro_clock.py finish: countercase.runtime.cpu",
                      "report/repro_clock.py _prediction: countercase.report.calibrate"], inside


def test_make_repro_starts_its_clock_with_the_system_python():
    """make repro's first step runs report/repro_clock.py with the system Python, before the
    package or anything else is installed: its top imports only the standard library."""
    import sys

    tree = ast.parse((PACKAGE / "report" / "repro_clock.py").read_text(encoding="utf-8"))
    top = [(node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
           for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
           for alias in node.names]
    assert [name for name in top if name not in sys.stdlib_module_names] == []

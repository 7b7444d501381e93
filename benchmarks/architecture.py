"""The package's shape in numbers, for a closing note's before and after (issue 42).

    python benchmarks/architecture.py [ROOT]     # ROOT: a checkout (default: this one)

Prints JSON: modules and their lines per package, the loose modules at the package root,
imports of the package's own modules (at module level and inside functions), the import
graph's longest chain of packages, the imports that run against the flow as the checkout's
own ``tests/test_architecture.py`` places the packages, and ``dvc.yaml``'s lines with the
hand-kept code dependencies among them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path


def _own_imports(tree: ast.AST) -> tuple[list[str], int]:
    """The package's modules ``tree`` imports, and how many of those imports sit in a function."""
    found, inside = [], 0

    def visit(node: ast.AST, in_function: bool) -> None:
        nonlocal inside
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            names = []
            if isinstance(child, ast.ImportFrom) and (child.module or "").startswith("countercase"):
                names = [child.module]
            elif isinstance(child, ast.Import):
                names = [a.name for a in child.names if a.name.startswith("countercase")]
            found.extend(names)
            inside += len(names) if in_function else 0
            visit(child, nested)
    visit(tree, False)
    return found, inside


def measure(root: Path) -> dict:
    package = root / "src" / "countercase"
    lines, modules, root_modules = Counter(), Counter(), {}
    edges: set[tuple[str, str]] = set()
    imports = inside = 0
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        group = rel.parts[0] if len(rel.parts) > 1 else "(root)"
        n = len(path.read_text(encoding="utf-8").splitlines())
        lines[group] += n
        modules[group] += 1
        if group == "(root)" and path.stem not in ("__init__", "__main__"):
            root_modules[path.stem] = n
        found, nested = _own_imports(ast.parse(path.read_text(encoding="utf-8")))
        imports += len(found)
        inside += nested
        source = rel.parts[0] if len(rel.parts) > 1 else path.stem
        for target in found:
            parts = target.split(".")
            if len(parts) > 1 and parts[1] != source:
                edges.add((source, parts[1]))
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)

    @lru_cache(maxsize=None)
    def depth(node: str, seen: frozenset = frozenset()) -> int:
        return 1 + max((depth(n, seen | {node}) for n in graph[node] if n not in seen), default=0)

    against = None
    spec_path = root / "tests" / "test_architecture.py"
    if spec_path.is_file():  # the checkout's own placement of the packages
        spec = importlib.util.spec_from_file_location("_arch", spec_path)
        arch = importlib.util.module_from_spec(spec)
        arch.PACKAGE = package
        spec.loader.exec_module(arch)
        arch.PACKAGE = package
        try:
            arch.test_imports_follow_the_data_flow()
            against = 0
        except AssertionError as error:
            against = len(str(error).splitlines()) - 1
    dvc = (root / "dvc.yaml").read_text(encoding="utf-8").splitlines()
    return {"modules": sum(modules.values()), "lines": sum(lines.values()),
            "lines_per_package": dict(sorted(lines.items())),
            "modules_per_package": dict(sorted(modules.items())),
            "root_modules": len(root_modules), "root_module_lines": sum(root_modules.values()),
            "root_module_names": sorted(root_modules),
            "own_imports": imports, "own_imports_inside_functions": inside,
            "package_edges": len(edges), "longest_package_chain": max(map(depth, list(graph)),
                                                                      default=0),
            "imports_against_the_flow": against,
            "dvc_yaml_lines": len(dvc),
            "dvc_yaml_code_dep_lines": sum(1 for line in dvc if line.strip().startswith("- src/")),
            # written by hand: dvc.yaml itself, or, once generated, the registry it is written from
            "dvc_yaml_hand_lines": _hand_lines(root, dvc)}


def _hand_lines(root: Path, dvc: list[str]) -> int:
    registry = root / "src" / "countercase" / "dag" / "stages.py"
    if any("python -m countercase.dag" in line for line in dvc[:12]) and registry.is_file():
        return len(registry.read_text(encoding="utf-8").splitlines())
    return len(dvc)


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()), indent=1))

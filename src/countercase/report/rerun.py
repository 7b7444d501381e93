"""Two runs agree: compare two copies of ``metrics/`` key by key, apart from the keys that
``configs/rerun_allowlist.yaml`` lets differ (timings, cache counts).

``python -m countercase.report.rerun A B`` prints every other difference as
``file:dotted.key: a -> b`` and exits 1 when there is one; a file in one copy only is a
difference too.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
from pathlib import Path
from typing import Any

import yaml

from countercase.errors import CountercaseError

ALLOWLIST = Path("configs/rerun_allowlist.yaml")


class RerunInputError(CountercaseError, ValueError):
    """A metrics file or an allowlist that cannot be read; the message names it."""


def allowlist(path: Path = ALLOWLIST) -> list[str]:
    try:
        return [str(p) for p in yaml.safe_load(Path(path).read_text(encoding="utf-8"))["patterns"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
        raise RerunInputError(f"{path}: not an allowlist with a list of patterns "
                              f"({error.__class__.__name__}: {error})") from None


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": [1, 2]}}`` -> ``{"a.b.0": 1, "a.b.1": 2}``."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return {prefix: value}
    found: dict[str, Any] = {}
    for key, inner in items:
        found.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
    return found


def _json_files(root: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(Path(root).rglob("*.json")):
        try:
            found[str(path.relative_to(root))] = flatten(json.loads(path.read_text(
                encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise RerunInputError(f"{path}: not readable JSON ({error})") from None
    return found


def differences(a: Path, b: Path, patterns: list[str]) -> list[str]:
    """Every key that differs between the metrics folders ``a`` and ``b`` and that no
    pattern allows."""
    def allowed(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    left, right = _json_files(a), _json_files(b)
    found = []
    for file in sorted(set(left) | set(right)):
        if file not in left or file not in right:
            if not allowed(f"{file}:"):
                found.append(f"{file}: only in {a if file in left else b}")
            continue
        for key in sorted(set(left[file]) | set(right[file])):
            name = f"{file}:{key}"
            before, after = left[file].get(key, "<absent>"), right[file].get(key, "<absent>")
            if before != after and not allowed(name):
                found.append(f"{name}: {before!r} -> {after!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--allowlist", type=Path, default=ALLOWLIST)
    args = parser.parse_args(argv)
    for folder in (args.a, args.b):
        if not folder.is_dir():
            parser.error(f"{folder} is not a folder of metrics")
    try:
        found = differences(args.a, args.b, allowlist(args.allowlist))
    except RerunInputError as error:
        parser.error(str(error))
    for line in found:
        print(line)
    print(f"{len(found)} difference(s) outside {args.allowlist}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How far a rebuild on another machine reproduced a stage's metrics.

Two builds of the same code and data should give the same numbers; where a stage trains or
encodes in bfloat16 (native on one CPU, emulated through float32 GEMMs on another: the retired
``countercase.bf16``) or calls the local LLM (built with or without AVX-512), the last digits
may move. :func:`compare` sets every number of one metrics file beside the same number of the
other's, leaving out what measures time (timings vary from run to run and decide nothing).
:func:`table` does it for the earlier build's reports kept in ``paper/history/``
(``sources.yaml``); the paper shows it, and ``python -m countercase.report.rebuild`` prints it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from countercase.evaluate.regressions import TOLERANCE as SAME

# keys that hold a duration, a speed or the machine's load: never compared
TIMING = re.compile(r"second|minute|hour|(^|_)ms(_|$)|speed|throughput|load_average|timing|"
                    r"elapsed|wall", re.IGNORECASE)


def numbers(report: Any, prefix: str = "") -> dict[str, float]:
    """Every number in ``report`` (a parsed JSON document) by its path (keys and list positions
    joined by ``/``), timings left out; booleans are not numbers here."""
    found: dict[str, float] = {}
    if isinstance(report, dict):
        for key, value in report.items():
            if not TIMING.search(str(key)):
                found |= numbers(value, f"{prefix}{key}/")
    elif isinstance(report, list):
        for i, value in enumerate(report):
            found |= numbers(value, f"{prefix}{i}/")
    elif isinstance(report, (int, float)) and not isinstance(report, bool):
        if math.isfinite(report):
            found[prefix.rstrip("/")] = float(report)
    return found


@dataclass(frozen=True)
class Comparison:
    """The numbers of two builds' reports side by side."""

    compared: int  # numbers both reports hold
    identical: int
    within: int  # differing by at most the regression files' tolerance (identical included)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    # (path, before, after) of the largest relative differences, largest first
    largest: list[tuple[str, float, float]] = field(default_factory=list)


def compare(before: Any, after: Any, show: int = 3) -> Comparison:
    """Every number of ``before`` beside the same path of ``after``."""
    old, new = numbers(before), numbers(after)
    common = sorted(old.keys() & new.keys())
    moved = [(path, old[path], new[path]) for path in common if old[path] != new[path]]

    def relative(item: tuple[str, float, float]) -> float:
        _, a, b = item
        return abs(a - b) / max(abs(a), abs(b))

    moved.sort(key=lambda item: (-relative(item), item[0]))
    return Comparison(
        compared=len(common), identical=len(common) - len(moved),
        within=len(common) - sum(abs(a - b) > SAME for _, a, b in moved),
        only_before=sorted(old.keys() - new.keys()), only_after=sorted(new.keys() - old.keys()),
        largest=moved[:show])


def comparisons(root: Path) -> dict[str, tuple[str, Comparison]]:
    """Each earlier build's report kept in ``root/paper/history`` (the ``build_`` files of its
    ``sources.yaml``) against the same report under ``root`` now, by the report's path, with the
    earlier build's commit."""
    history = root / "paper" / "history"
    sources = yaml.safe_load((history / "sources.yaml").read_text(encoding="utf-8"))
    found = {}
    for name, source in sources.items():
        if not name.startswith("build_"):
            continue
        now = root / source["path"]
        if not now.is_file():
            raise FileNotFoundError(f"{source['path']} is missing: run `dvc repro` (compared "
                                    f"with paper/history/{name})")
        found[source["path"]] = (source["commit"], compare(
            json.loads((history / name).read_text(encoding="utf-8")),
            json.loads(now.read_text(encoding="utf-8"))))
    return found


BREAKABLE_SLASH = "/\u200b"  # a zero-width space after it: typst may break the line there


def table(root: Path) -> str:
    """Markdown: every report of :func:`comparisons`, its counts and its largest difference
    (its path breakable after each ``/``: a long one in a code span overruns a printed page)."""
    rows = []
    for path, (commit, c) in comparisons(root).items():
        largest = "none"
        if c.largest:
            where, a, b = c.largest[0]
            largest = f"{where.replace('/', BREAKABLE_SLASH)} {a:g} → {b:g}"
        rows.append(f"| `{Path(path).name}` (`{commit}`) | {c.compared:,} | "
                    f"{c.identical:,} | {c.within:,} | "
                    f"{len(c.only_before) + len(c.only_after)} | {largest} |")
    return ("| report (earlier build) | numbers | identical | within | in one build only | "
            "largest relative difference |\n"
            # the dashes set pandoc's column widths: the paths of the last column need room
            "|----------------|------:|------:|------:|------:|--------------------------------|\n"
            + "\n".join(rows))


def summary(root: Path) -> str:
    """One sentence a group: the reports identical in every number, those within the
    tolerance, those that moved beyond it (with how many of their numbers did)."""
    groups: dict[str, list[str]] = {"identical": [], "within": [], "moved": []}
    for path, (_, c) in comparisons(root).items():
        name = f"`{Path(path).name}`"
        if c.identical == c.compared and not (c.only_before or c.only_after):
            groups["identical"].append(name)
        elif c.within == c.compared:
            groups["within"].append(name)
        else:
            groups["moved"].append(f"{name} ({c.compared - c.within:,} of {c.compared:,})")
    words = {"identical": "Identical in every number (timings aside): ",
             "within": f"Every number within {SAME:g} of the earlier build's: ",
             "moved": f"Numbers that moved by more than {SAME:g}: "}
    return " ".join(words[g] + ", ".join(names) + "." for g, names in groups.items() if names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m countercase.report.rebuild",
        description="Every number of the stage reports now beside the earlier build's kept in "
                    "paper/history (timings left out).")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the repository (default: the current folder)")
    args = parser.parse_args(argv)
    try:
        print(table(args.root))
    except (OSError, ValueError, yaml.YAMLError) as error:  # a report missing or damaged
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

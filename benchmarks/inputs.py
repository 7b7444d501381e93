"""Time and memory of the parsers on the hostile inputs of the hardening campaign, at two sizes.

Each case is measured at ``n`` and ``4 n``; ``growth`` is the ratio of the two (4 for linear
work, 16 for quadratic, 64 for cubic). ``python benchmarks/inputs.py`` writes
``metrics/timing/inputs.json``; nothing here is asserted by a test (the suite checks results and
memory, never time).
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path


def _cases() -> dict[str, tuple[Callable[[int], object], Callable[[int], object]]]:
    """name -> (input of size n, the work on it)."""
    from countercase.extract.act_sections import find_sections, unresolved_sections
    from countercase.extract.metadata import extract_metadata
    from countercase.factsheet.rules import extract_rules
    from countercase.factsheet.schema import validate_sheet
    from countercase.ingest.document import Document, Page

    def page(text: str) -> Document:
        return Document("X", "pdf", "x.pdf", [Page(0, text)])

    sheet = extract_rules("The appellant was convicted under Section 302 IPC.", "T", "text") \
        .model_dump(mode="json")
    return {
        "sections_list": (lambda n: "Sections " + ", ".join(str(i % 999 + 1) for i in range(n))
                          + " IPC", find_sections),
        "sections_unresolved": (lambda n: "S. " + "1 and " * n, unresolved_sections),
        "metadata_dot_leaders": (lambda n: page("STATE " + "." * n + "\n"), extract_metadata),
        "metadata_newlines": (lambda n: page("Judgment\n" + "\n" * (50 * n)), extract_metadata),
        "factsheet_long_list": (lambda n: {**sheet, "sections_cited": sheet["sections_cited"] * n},
                                validate_sheet),
    }


def measure(n: int) -> dict[str, dict[str, float]]:
    results = {}
    for name, (make, work) in _cases().items():
        row = {}
        for size in (n, 4 * n):
            data = make(size)
            tracemalloc.start()
            started = time.perf_counter()
            work(data)
            row[f"seconds_{size}"] = round(time.perf_counter() - started, 4)
            row[f"peak_mb_{size}"] = round(tracemalloc.get_traced_memory()[1] / 1e6, 2)
            tracemalloc.stop()
        first, second = row[f"seconds_{n}"], row[f"seconds_{4 * n}"]
        row["growth"] = round(second / first, 1) if first > 0 else None
        results[name] = row
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=Path("metrics/timing/inputs.json"))
    args = parser.parse_args(argv)
    result = {"n": args.n, "cases": measure(args.n)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

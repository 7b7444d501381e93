"""docs/architecture.md names every package of the code, once, in the layer the architecture
test places it in (issue 60: a map for the newcomer that cannot fall behind)."""

from __future__ import annotations

import re
from pathlib import Path

from test_architecture import BASE, LAYERS, PACKAGE, TOP

ROOT = Path(__file__).resolve().parents[1]


def _sections() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    heading = None
    for line in (ROOT / "docs/architecture.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading = line[3:]
            found[heading] = []
        named = re.match(r"- `([a-z_]+)`: ", line)
        if named and heading is not None:
            found[heading].append(named.group(1))
    return found


def test_the_map_names_every_package_in_its_layer():
    sections = _sections()
    packages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
                if p.suffix == ".py" or (p / "__init__.py").exists()} - {"__init__", "__main__"}
    named = [n for names in sections.values() for n in names]
    assert sorted(named) == sorted(packages) and len(named) == len(set(named))
    base, pipeline, top = (sections[h] for h in sections if h.split(":")[0] in (
        "Base", "The pipeline, in the order data flows", "On top"))
    assert set(base) == BASE and pipeline == LAYERS and set(top) == TOP

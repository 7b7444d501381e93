"""``make repro-extended``'s guard: the opt-in pipeline (``experiments/dvc.yaml``) reads the
default pipeline's outputs. On a project without them, DVC would rebuild the whole default
pipeline under the opt-in one's name; instead this names the stage to run first.

``python -m countercase.report.opt_in`` exits 2 with one line per missing output, 0 when every output
the opt-in stages read is there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from countercase import layout


def _stages(pipeline: Path) -> dict:
    return yaml.safe_load(pipeline.read_text(encoding="utf-8"))["stages"]


def _writer(dep: Path) -> str | None:
    """The default pipeline's stage that writes ``dep`` (or the folder holding it)."""
    for stage, written in layout.STAGE_OUTPUTS.items():
        for out in (*written["outs"], *written["metrics"]):
            if dep == out or out in dep.parents:
                return stage
    return None


def missing(root: Path = Path(".")) -> list[tuple[str, Path]]:
    """(stage, path): every output of a default stage that an opt-in stage reads and that is
    not on disk, in the default pipeline's order."""
    default = list(_stages(root / layout.PIPELINE))
    found: dict[Path, str] = {}
    for stage in _stages(root / layout.OPT_IN_PIPELINE).values():
        for dep in map(Path, stage.get("deps", [])):
            writer = _writer(dep)
            if writer in default and not (root / dep).exists():
                found.setdefault(dep, writer)
    return sorted(((s, p) for p, s in found.items()), key=lambda sp: default.index(sp[0]))


def main() -> int:
    lacking = missing()
    for stage, path in lacking:
        print(f"the opt-in pipeline reads {path}, which stage `{stage}` writes: run `make repro` "
              f"(or `dvc repro {stage}`) first", file=sys.stderr)
    return 2 if lacking else 0


if __name__ == "__main__":
    sys.exit(main())

"""The pipeline's outputs as the reports read them, and the two formatters the README and the
paper share (a p value, a paired test in words).

:class:`Outputs` reads ``metrics/``, ``configs/`` and the other files a ``dvc repro`` writes
under a root; a missing file reads as None, so a report can say which stage has not run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml


class Outputs:
    """The pipeline's outputs under ``root``; a missing file reads as None (its rows say so)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def json(self, relative: str) -> Any:
        path = self.root / relative
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:  # a ValueError, named by its file
            raise ValueError(f"{path}: not JSON ({error.msg})") from None

    def metric(self, name: str) -> Any:
        return self.json(f"metrics/{name}")

    def both(self, stem: str) -> Any:
        """``metrics/<stem>.json`` of the default pipeline with the opt-in pipeline's
        ``<stem>_ft.json`` folded in (retrieval, evaluation): the fine-tuned encoder's
        conditions beside the others, their tests beside the others'."""
        return with_opt_in(self.metric(f"{stem}.json"), self.metric(f"{stem}_ft.json"))

    def yaml(self, relative: str) -> Any:
        path = self.root / relative
        return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None


def with_opt_in(default: dict | None, opt_in: dict | None) -> dict | None:
    """Per collection, the opt-in build's scores (or ``significance`` tests, measure -> baseline
    -> condition) added to the default build's; the default's notes otherwise kept."""
    if not default or not opt_in:
        return default
    merged = {}
    for collection, found in default.items():
        extra = opt_in.get(collection, {})
        if "significance" not in found:
            merged[collection] = {**found, **extra}
            continue
        added = extra.get("significance", {})
        merged[collection] = {**found, "significance": {
            measure: {base: {**tests, **added.get(measure, {}).get(base, {})}
                      for base, tests in bases.items()}
            for measure, bases in found["significance"].items()}}
    return merged


def p_value(value: float) -> str:
    """A p value as the README and the paper print it (two significant digits)."""
    return f"{value:.2g}"


def tested(found: dict | None) -> str:
    """A paired test of ``metrics/evaluation.json`` (or of a stage that writes the same fields)
    in words: its Holm-corrected p values, or why there are none."""
    if not found:
        return "not tested"
    if found.get("t_p") is None:  # the two runs are the same on every query
        return "identical runs"
    if "t_p_holm" not in found:
        return f"t p {p_value(found['t_p'])}, Wilcoxon {p_value(found['wilcoxon_p'])}"
    return f"Holm t p {p_value(found['t_p_holm'])}, Wilcoxon {p_value(found['wilcoxon_p_holm'])}"

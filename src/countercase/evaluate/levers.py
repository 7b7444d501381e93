"""The conditions of the levers the pipeline does not have yet, built as the tune stage chose
them (``configs/tuning_choice.yaml``, written before the test queries are scored)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from countercase.datasets import CollectionError
from countercase.datasets.citations import read_citations
from countercase.experiment import System
from countercase.experiment.levers import citation_counts, fused, passage_system, with_prior
from countercase.experiment.systems import bm25_docs_system
from countercase.retrieve.load import IndexPaths

LEVERS = ("passages", "docs", "docs_fusion", "prior")


@dataclass(frozen=True)
class LeverSource:
    """What the lever conditions are built from: the tune stage's choice for the precedents
    and the corpus's citation links (the prior)."""

    choice: dict[str, dict[str, Any]]
    links: tuple[tuple[str, str], ...]

    @classmethod
    def read(cls, choice: Path, citations: Path) -> "LeverSource":
        try:
            found = yaml.safe_load(Path(choice).read_text(encoding="utf-8"))
            picked = found["precedents"]
        except (OSError, yaml.YAMLError, KeyError, TypeError) as error:
            raise CollectionError(f"cannot read the tuning choice {choice}: {error} "
                                  "(run `dvc repro tune`)") from None
        needed = {"passages_bm25": ("pool", "k1", "b"), "docs": ("k1", "b"),
                  "docs_fusion": ("weight",), "prior": ("weight",)}
        missing = [f"{grid}.{key}" for grid, keys in needed.items() for key in keys
                   if not isinstance(picked, dict) or not isinstance(picked.get(grid), dict)
                   or key not in picked[grid]]
        if missing:
            raise CollectionError(f"{choice}: no choice for {', '.join(missing)}")
        return cls(picked, read_citations(citations).links)


def lever_system(lever: str, source: LeverSource, full: System, paths: IndexPaths,
                 depth: int, chunk_depth: int, k: int,
                 admits: Callable[[str, str], bool] | None,
                 exclude: Mapping[str, list[str]]) -> System:
    """The ranking function of ``lever`` (one of :data:`LEVERS`); ``full``: the configured
    pipeline the fusions start from; ``admits`` and ``exclude``: what the prior may count."""
    if lever not in LEVERS:
        raise ValueError(f"unknown lever {lever!r}: use one of {', '.join(LEVERS)}")
    pick = source.choice
    if lever == "passages":
        chunks = pd.read_parquet(paths.chunks, columns=["chunk_id", "doc_id", "index"])
        p = pick["passages_bm25"]
        return passage_system(paths.index_dir / "precedents_chunks", chunks, chunk_depth, depth,
                              p["pool"], p["k1"], p["b"], label="passages_tuned")
    docs = bm25_docs_system(paths.index_dir / "precedents_docs", depth, "docs_tuned",
                            pick["docs"]["k1"], pick["docs"]["b"])
    if lever == "docs":
        return docs
    both = fused({"pipeline": (full, 1.0), "docs": (docs, pick["docs_fusion"]["weight"])},
                 k, depth)
    if lever == "docs_fusion":
        return both

    def rank(topics):
        counts = citation_counts(source.links, list(topics), admits, exclude)
        return with_prior(both, counts, pick["prior"]["weight"], k, depth)(topics)
    return rank

"""The conditions of the levers the pipeline does not have yet, built as the tune stage chose
them (``configs/tuning_choice.yaml``, written before the test queries are scored), and the
fine-tuned encoder's, built as the tune_ft stage chose its weight
(``configs/tuning_ft_choice.yaml``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from countercase.config import RetrieveParams
from countercase.datasets import CollectionError
from countercase.datasets.citations import read_citations
from countercase.retrieve.registry import BY_NAME
from countercase.experiment import System
from countercase.experiment.levers import citation_counts, fused, passage_system, with_prior
from countercase.experiment.systems import bm25_docs_system
from countercase.retrieve.load import IndexPaths

LEVERS = ("passages", "docs", "docs_fusion", "prior")
FT_LEVERS = ("ft", "tuned_ft")  # the pipeline with the fine-tuned encoder; the tuned system on it


def ft_weights(base: RetrieveParams, weight: float) -> dict[str, Any]:
    """The override that fuses the precedents' dense ranking at ``weight`` (BM25's: 1)."""
    return {"fusion_weights": {**base.fusion_weights,
                               "precedents": {"bm25": 1.0, "dense": weight}}}


def _read(path: Path, stage: str) -> dict[str, Any]:
    try:
        found = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise CollectionError(f"cannot read the tuning choice {path}: {error} "
                              f"(run `dvc repro {stage}`)") from None
    if not isinstance(found, dict):
        raise CollectionError(f"cannot read the tuning choice {path}: not a mapping "
                              f"(run `dvc repro {stage}`)")
    return found


@dataclass(frozen=True)
class LeverSource:
    """What the lever conditions are built from: the tune stage's choice for the precedents,
    the tuned system it names, the corpus's citation links (the prior) and, once the tune_ft
    stage has run, the fine-tuned encoder's weight (None: no choice yet)."""

    choice: dict[str, dict[str, Any]]
    links: tuple[tuple[str, str], ...]
    tuned: str = "full"
    ft_weight: float | None = None

    @classmethod
    def read(cls, choice: Path, citations: Path | None,
             ft_choice: Path | None = None) -> "LeverSource":
        """The choices and, with ``citations`` (None: a collection without them), its links."""
        found = _read(choice, "tune")
        picked, tuned = found.get("precedents"), found.get("tuned_system", "full")
        if tuned not in BY_NAME:
            raise CollectionError(f"{choice}: unknown tuned_system {tuned!r}")
        needed = {"passages_bm25": ("pool", "k1", "b"), "docs": ("k1", "b"),
                  "docs_fusion": ("weight",), "prior": ("weight",)}
        missing = [f"{grid}.{key}" for grid, keys in needed.items() for key in keys
                   if not isinstance(picked, dict) or not isinstance(picked.get(grid), dict)
                   or key not in picked[grid]]
        if missing:
            raise CollectionError(f"{choice}: no choice for {', '.join(missing)}")
        weight = None
        if ft_choice is not None and Path(ft_choice).exists():
            weight = _read(ft_choice, "tune_ft").get("weight")
            if not isinstance(weight, (int, float)) or weight < 0:
                raise CollectionError(f"{ft_choice}: no weight of the fine-tuned encoder")
        links = read_citations(citations).links if citations is not None else ()
        return cls(picked, links, tuned,
                   None if weight is None else float(weight))

    def pipeline(self, lever: str, base: RetrieveParams) -> dict[str, Any]:
        """The overrides of the configured pipeline ``lever`` starts from."""
        return ft_weights(base, self.ft_weight or 0.0) if lever in FT_LEVERS else {}


def lever_system(lever: str, source: LeverSource, full: System, paths: IndexPaths,
                 depth: int, chunk_depth: int, k: int,
                 admits: Callable[[str, str], bool] | None,
                 exclude: Mapping[str, list[str]]) -> System:
    """The ranking function of ``lever`` (one of :data:`LEVERS` and :data:`FT_LEVERS`);
    ``full``: the pipeline the fusions start from (for an ft lever, the one with the fine-tuned
    encoder); ``admits`` and ``exclude``: what the prior may count."""
    if lever in FT_LEVERS:
        tuned = BY_NAME[source.tuned].lever if lever == "tuned_ft" else None
        if tuned is None:
            return full
        lever = tuned
    if lever not in LEVERS:
        raise ValueError(f"unknown lever {lever!r}: use one of {', '.join(LEVERS + FT_LEVERS)}")
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

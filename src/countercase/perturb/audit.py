"""The legal audit's samples: root perturbations of the corpus cases, drawn from one engine.

Issue 41 asks whether the perturbation engine proposes counterfactuals a lawyer would
recognise. The audit reads a seeded sample of root perturbations (the validity trees' roots,
:func:`countercase.perturb.operative.root_edges`) of the validity cases of one full build, drawn
once from the engine before its rules change (``before``) and once after (``after``). Each fact
type gets up to ``per_type`` edges from a seeded shuffle of all of that type's edges, so a rare
type (party) is sampled whole rather than crowded out.

:func:`blind` merges the two samples into one file to label, shuffled and without the engine's
name; the labelling rules and the defect categories are in ``data/gold/legal_audit.md``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.perturb.cases import QueryCase
from countercase.perturb.operative import FACT_TYPES, root_edges

ENGINES = ("before", "after")
# what a labeller reads: the change and the case, never which engine proposed it
SHOWN = ("item", "case_id", "fact_type", "description", "basis", "sections_cited",
         "case_text")


def item_id(case_id: str, description: str, engine: str) -> str:
    """A stable id of one edge of one engine (the blind file names items by it alone)."""
    return hashlib.sha1(f"{engine}\n{case_id}\n{description}".encode()).hexdigest()[:12]


def root_pool(cases: list[QueryCase], edges: pd.DataFrame, per_type: int,
              engine: str) -> list[dict[str, Any]]:
    """Every root perturbation of ``cases`` as the audit shows it, in case order."""
    pool = []
    for case in cases:
        sections = [s.section_id for s in case.sheet.sections_cited]
        for p in root_edges(case, edges, per_type):
            pool.append({"item": item_id(case.case_id, p.description, engine),
                         "engine": engine, "case_id": case.case_id,
                         "fact_type": p.fact_type, "description": p.description,
                         "basis": p.basis, "sections_cited": sections, "case_text": case.text})
    return pool


def draw(pool: list[dict[str, Any]], per_type: int, seed: int) -> list[dict[str, Any]]:
    """Up to ``per_type`` edges of each fact type, from a seeded shuffle of each type's edges
    (every edge of a type with fewer), in fact-type order."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in pool:
        by_type[row["fact_type"]].append(row)
    rng = random.Random(seed)
    drawn = []
    for fact_type in FACT_TYPES:
        items = list(by_type.get(fact_type, ()))
        rng.shuffle(items)
        drawn += items[:per_type]
    return drawn


def summary(pool: list[dict[str, Any]], n_cases: int) -> dict[str, Any]:
    """The engine's root edges over all cases: per fact type, the edges and the share of cases
    whose root has one (a clean tree must not be an empty one)."""
    cases_with: dict[str, set[str]] = defaultdict(set)
    edges: dict[str, int] = defaultdict(int)
    for row in pool:
        cases_with[row["fact_type"]].add(row["case_id"])
        edges[row["fact_type"]] += 1
    return {"n_cases": n_cases, "root_edges": len(pool),
            "root_edges_per_case": round(len(pool) / n_cases, 3) if n_cases else None,
            "per_type": {t: {"edges": edges.get(t, 0),
                             "case_share": round(len(cases_with.get(t, ())) / n_cases, 4)
                             if n_cases else None} for t in FACT_TYPES}}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def blind(samples: list[list[dict[str, Any]]], seed: int) -> list[dict[str, Any]]:
    """The samples as one list to label: shuffled by ``seed``, each item without its engine."""
    merged = [{k: row[k] for k in SHOWN} for sample in samples for row in sample]
    merged.sort(key=lambda row: row["item"])  # the shuffle does not depend on the input order
    random.Random(seed).shuffle(merged)
    return merged

"""Stage ``targets``: every citation-collection case's root edits and their citation-grounded
targets (:mod:`countercase.holdings.targets`), under both variants, with how many (case, edit)
pairs get any, per fact type and part (``metrics/targets.json``).
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from countercase import layout
from countercase.datasets.citations import Citations, read_citations
from countercase.datasets.ids import natural_key
from countercase.datasets.limits import Limit
from countercase.extract.years import read_years
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.store import read_sheets
from countercase.holdings.profile import Profile
from countercase.holdings.run import read_profiles
from countercase.holdings.targets import Graph, Settings, Targets, contrast, facts_of
from countercase.ingest.run import read_documents
from countercase.perturb.cases import QueryCase, corpus_cases
from countercase.perturb.operative import FACT_TYPES, root_edges
from countercase.perturb.rules import Perturbation, case_categories


@dataclass(frozen=True)
class Inputs:
    citations: Path = layout.CITATIONS
    documents: Path = layout.DOCUMENTS
    sheets: Path = layout.JUDGMENT_SHEETS
    metadata: Path = layout.METADATA
    edges: Path = layout.SECTION_EDGES
    profiles: Path = layout.HOLDING_PROFILES


class Finder:
    """An edit's targets for any case (a citation case, a corpus judgment, an AILA query): the
    citation graph, and the leave-out limit of each citation case."""

    def __init__(self, graph: Graph, limits: Mapping[str, Limit] | None = None,
                 years: Mapping[str, int | None] | None = None,
                 heldout: frozenset[str] = frozenset()) -> None:
        self.graph, self.heldout = graph, heldout
        self.limits, self.years = limits or {}, years or {}

    def targets(self, case_id: str, sheet: FactSheet, text: str | None, edit,
                settings: Settings, variant: str = "whole") -> Targets:
        """``edit`` (a Perturbation or a tree's edge) of case ``case_id``, whose facts are
        ``sheet`` and ``text``: its targets, leaving out the case and, for a citation case,
        its near-copies and the judgments after it."""
        moved = contrast(edit)
        if moved is None:
            return Targets((), (), (0, 0), "no contrast (an addition or a renumbering)")
        limit = self.limits.get(case_id, Limit())
        leave_out = limit.exclude | {case_id}
        allowed = self.heldout if variant == "heldout" else None
        population = self.graph.population(case_categories(sheet, text), leave_out, allowed)
        return self.graph.targets(moved, population,
                                  lambda d: limit.admits(d, self.years.get(d)), settings)


class Corpus:
    """The citation collection, the judgments' texts, sheets and holding profiles, and the
    :class:`Finder` over them, read once."""

    def __init__(self, inputs: Inputs) -> None:
        self.collection: Citations = read_citations(inputs.citations)
        self.texts = {d.doc_id: d.text for d in read_documents(inputs.documents)}
        self.sheets = {s.case_id: s for s in read_sheets(inputs.sheets)}
        self.profiles: dict[str, Profile] = read_profiles(inputs.profiles)
        facts = {j: facts_of(self.sheets.get(j), self.profiles.get(j)) for j in self.texts}
        domains = {j: case_categories(s, self.texts.get(j)) for j, s in self.sheets.items()}
        self.finder = Finder(Graph(self.collection.links, facts, domains),
                             self.collection.limits, self.collection.years,
                             frozenset(self.collection.qids("heldout")))


class Edits(Corpus):
    """Every citation case's root edits, and their targets."""

    def __init__(self, inputs: Inputs, case_chars: int) -> None:
        super().__init__(inputs)
        self.edges = pd.read_parquet(inputs.edges)
        ids = sorted(self.collection.topics, key=natural_key)
        self.cases, self.skipped = corpus_cases(
            ids, self.texts, self.sheets, read_years(inputs.metadata), {}, case_chars)

    def of(self, case: QueryCase, per_type: int) -> list[Perturbation]:
        return root_edges(case, self.edges, per_type)

    def case_targets(self, case: QueryCase, p: Perturbation, settings: Settings,
                     variant: str) -> Targets:
        return self.finder.targets(case.case_id, case.sheet, case.text, p, settings, variant)


def rows(edits: Edits, settings: Settings, per_type: int) -> list[dict]:
    out = []
    for case in tqdm(edits.cases, desc="targets", unit="case"):
        part = edits.collection.part[case.case_id]
        for p in edits.of(case, per_type):
            row = {"case_id": case.case_id, "part": part, "fact_type": p.fact_type,
                   "path": p.path, "old": p.old, "new": p.new, "description": p.description}
            for variant in ("whole", "heldout") if part == "heldout" else ("whole",):
                t = edits.case_targets(case, p, settings, variant)
                row[variant] = {"appear": list(t.appear), "drop": list(t.drop),
                                "holders": list(t.holders), "reason": t.reason}
            out.append(row)
    return out


def summarise(table: list[dict], cases: int, skipped: list[dict]) -> dict:
    out: dict = {"cases": cases, "skipped": dict(Counter(s["reason"] for s in skipped))}
    for part in ("tuning", "heldout"):
        for variant in ("whole", "heldout"):
            found = [r for r in table if r["part"] == part and variant in r]
            if not found:
                continue
            hit = [r for r in found if r[variant]["appear"] or r[variant]["drop"]]
            sizes = [len(r[variant]["appear"]) + len(r[variant]["drop"]) for r in hit]
            per_type = defaultdict(lambda: [0, 0])
            for r in found:
                per_type[r["fact_type"]][0] += 1
                per_type[r["fact_type"]][1] += r in hit
            out[f"{part}/{variant}"] = {
                "edits": len(found), "edits_with_targets": len(hit),
                "cases_with_targets": len({r["case_id"] for r in hit}),
                "median_targets": statistics.median(sizes) if sizes else 0,
                "per_fact_type": {t: {"edits": per_type[t][0], "with_targets": per_type[t][1]}
                                  for t in FACT_TYPES if t in per_type},
                "without": dict(Counter(r[variant]["reason"] for r in found if r not in hit))}
    return out


def run_targets(inputs: Inputs, out: Path, settings: Settings, per_type: int,
                case_chars: int) -> dict:
    started = time.perf_counter()
    edits = Edits(inputs, case_chars)
    table = rows(edits, settings, per_type)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "targets.jsonl").open("w", encoding="utf-8") as handle:
        for row in table:
            handle.write(json.dumps(row, sort_keys=True, default=list) + "\n")
    return {**summarise(table, len(edits.cases), edits.skipped),
            "settings": settings.__dict__, "seconds": round(time.perf_counter() - started, 1)}

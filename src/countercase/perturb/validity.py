"""The validity experiment: do cited precedents move further when a fact they share with the
case changes than when nothing legal changes?

For every corpus query case (:mod:`countercase.perturb.cases`) the root's rule perturbations
(up to ``per_type`` of each fact type, the tree's own order) and its placebos
(:mod:`countercase.perturb.placebo`) are each searched, at both granularities of
:mod:`countercase.perturb.query` and under three query constructions: ``text`` (the text
retrievers alone) and ``tuned`` (fused with the fact channel at the weight chosen on the
tuning cases); a third, ``equal``, fuses it at weight 1 (RRF's equal weights, a setting fixed in
advance) whatever the tuning chose, to show what the channel does when it is on. Each
perturbation is labelled before any search:

- *operative*: it changes a fact the case shares with one of its cited precedents: a section
  both cite (the precedent's sheet or metadata), an evidence type both have (removed), the
  same party type on the same side, or a number crossing a boundary on whose side the
  precedent has a number of the same kind;
- *incidental*: any other rule perturbation;
- *placebo*: a placebo.

Its displacement is the mean over the case's cited precedents of ``|rank before - rank
after|`` in the top ``depth`` (absent: ``depth + 1``). Per case, the mean of each label; the
test pairs operative against placebo over the cases that have both (Wilcoxon signed-rank,
paired t, Cohen's d of the differences).

The primary condition, declared before the full run (a pilot on 8 cases was seen while the code
was written): granularity ``perturb.granularity``, construction ``tuned`` (the configuration the
trees run with). The others are reported beside it.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from tqdm import tqdm

from countercase.datasets import Dataset
from countercase.experiment import ranked, score_run
from countercase.experiment.significance import paired
from countercase.factsheet.schema import FactSheet
from countercase.perturb.cases import Precedent, QueryCase
from countercase.perturb.diff import diff_rankings
from countercase.perturb.operative import FACT_TYPES, label, root_edges
from countercase.perturb.placebo import placebos
from countercase.perturb.query import GRANULARITIES, text_query
from countercase.perturb.rules import apply
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.fusion import fuse_with_facts

log = logging.getLogger(__name__)

CONSTRUCTIONS = ("text", "tuned", "equal")
PRIMARY_CONSTRUCTION = "tuned"


def construction_weight(construction: str, tuned: float) -> float:
    return {"text": 0.0, "tuned": tuned, "equal": 1.0}[construction]


def leave_one_out(case: QueryCase) -> SearchFilter:
    """A corpus case's searches: never itself nor a judgment decided after it, cut inside the
    search (cut after it, its own chunks would fill the candidates)."""
    return SearchFilter(year_to=case.year, exclude_doc_ids=case.exclude)


@dataclass
class CaseSearch:
    """Leave-one-out rankings of a case's nodes: the text retrievers' (cached by query) and
    the fact channel's (cached by tokens), fused on demand."""

    retriever: Any  # countercase.retrieve.pipeline.Retriever, fact_weight 0
    facts: Any  # countercase.index.facts.FactSearcher
    depth: int
    rrf_k: int = 60
    _text: dict = field(default_factory=dict)
    _facts: dict = field(default_factory=dict)

    def text(self, query: str, case: QueryCase) -> list[str]:
        key = (case.case_id, query)
        if key not in self._text:
            found = self.retriever.search(query, leave_one_out(case), k=self.depth).documents
            self._text[key] = [h.doc_id for h in found]
        return self._text[key]

    def fact_ranking(self, sheet: FactSheet, case: QueryCase) -> list[str]:
        key = (case.case_id, tuple(self.facts.tokens(sheet)))
        if key not in self._facts:
            found = self.facts.search(sheet, self.depth, exclude=case.exclude, year_to=case.year)
            self._facts[key] = [doc for doc, _ in found]
        return self._facts[key]

    def ranking(self, query: str, sheet: FactSheet, case: QueryCase, weight: float) -> list[str]:
        text = self.text(query, case)
        if weight <= 0:
            return text
        fused = fuse_with_facts(text, self.fact_ranking(sheet, case), weight, self.rrf_k)
        return [doc for doc, _ in fused][:self.depth]

    def clear(self) -> None:
        self._text.clear()
        self._facts.clear()


def cited_displacement(parent: list[str], child: list[str], cited: Iterable[str],
                       depth: int) -> float | None:
    cited = list(cited)
    if not cited:
        return None
    before = {d: i + 1 for i, d in enumerate(parent[:depth])}
    after = {d: i + 1 for i, d in enumerate(child[:depth])}
    return float(np.mean([abs(before.get(c, depth + 1) - after.get(c, depth + 1))
                          for c in cited]))


def case_rows(case: QueryCase, search: CaseSearch, edges: pd.DataFrame, per_type: int,
              weight: float, precedents: dict[str, Precedent], k: int) -> list[dict[str, Any]]:
    """One row per (edge, granularity, construction) of ``case``'s depth-1 validity tree."""
    cited = [precedents[c] for c in case.cited if c in precedents]
    nodes = []  # (kind, fact type, description, sheet, {granularity: text})
    for p in root_edges(case, edges, per_type):
        sheet = apply(case.sheet, p)
        nodes.append((label(p, cited), p.fact_type, p.description, sheet,
                      {g: text_query(sheet, case.sheet, case.text, g) for g in GRANULARITIES}))
    by_kind: dict[str, dict[str, Any]] = defaultdict(dict)
    for g in GRANULARITIES:
        for placebo in placebos(case.sheet, case.text, g, edges):
            by_kind[placebo.kind][g] = placebo
    for kind, found in by_kind.items():
        if set(found) == set(GRANULARITIES):
            first = found[GRANULARITIES[0]]
            nodes.append(("placebo", kind, first.description, first.sheet,
                          {g: found[g].text for g in GRANULARITIES}))
    rows = []
    for construction in CONSTRUCTIONS:
        w = construction_weight(construction, weight)
        root = search.ranking(case.text, case.sheet, case, w)
        for kind, fact_type, description, sheet, texts in nodes:
            for g in GRANULARITIES:
                child = search.ranking(texts[g], sheet, case, w)
                rows.append({"case_id": case.case_id, "granularity": g,
                             "construction": construction, "label": kind,
                             "fact_type": fact_type, "description": description,
                             "cited_displacement": cited_displacement(root, child, case.cited,
                                                                      search.depth),
                             "top_k_displacement": diff_rankings(root, child, k).mean_displacement})
    return rows


def choose_weight(cases: list[QueryCase], search: CaseSearch, grid: Iterable[float],
                  margin: float) -> dict[str, Any]:
    """The fact channel's weight in the trees: the best MAP of the cited precedents over the
    tuning cases' root queries; within ``margin`` of the best, the first in grid order."""
    dataset = Dataset("citations/tuning", "citations-tuning", "precedents",
                      {c.case_id: c.text for c in cases},
                      {c.case_id: {d: 1 for d in c.cited} for c in cases})
    rows = []
    for weight in tqdm(list(grid), desc="fact weight (tuning cases)", unit="weight"):
        run = {c.case_id: ranked(search.ranking(c.text, c.sheet, c, weight)) for c in cases}
        rows.append({"fact_weight": weight,
                     "MAP": round(float(score_run(run, dataset, ["MAP"])["MAP"].mean()), 4)})
    top = max(r["MAP"] for r in rows)
    best = next(r for r in rows if r["MAP"] >= top - margin)
    return {"grid": rows, "chosen": best["fact_weight"], "n_cases": len(cases),
            "rule": f"highest MAP of the cited precedents (depth {search.depth}); within "
                    f"{margin} of it, the first weight in grid order"}


def summarise(rows: pd.DataFrame) -> dict[str, Any]:
    """Operative against placebo (and incidental) displacement of the cited precedents."""
    per_case = rows.dropna(subset=["cited_displacement"]).groupby(
        ["case_id", "label"])["cited_displacement"].mean().unstack()
    both = per_case.dropna(subset=[c for c in ("operative", "placebo") if c in per_case])
    out: dict[str, Any] = {"n_cases": int(len(both)) if "operative" in per_case and
                           "placebo" in per_case else 0}
    for name in ("operative", "incidental", "placebo"):
        out[f"{name}_mean"] = (round(float(per_case[name].mean()), 4)
                               if name in per_case and per_case[name].notna().any() else None)
    if out["n_cases"] >= 2:
        op, pl = both["operative"].to_numpy(), both["placebo"].to_numpy()
        out["operative_mean_paired"] = round(float(op.mean()), 4)
        out["placebo_mean_paired"] = round(float(pl.mean()), 4)
        out["ratio"] = round(float(op.mean() / pl.mean()), 3) if pl.mean() > 0 else None
        test = paired(op, pl)
        out["p_value"] = test["wilcoxon_p"]
        out["t_p"], out["cohens_d"] = test["t_p"], test["cohens_d"]
    per_type = rows[rows["label"] != "placebo"].groupby(["fact_type", "label"])[
        "cited_displacement"].agg(["mean", "count"])
    out["per_fact_type"] = {f"{t}/{lab}": {"mean": round(float(r["mean"]), 4),
                                           "edges": int(r["count"])}
                            for (t, lab), r in per_type.iterrows()}
    placebo = rows[rows["label"] == "placebo"].groupby("fact_type")["cited_displacement"].agg(
        ["mean", "count"])
    out["per_placebo_kind"] = {t: {"mean": round(float(r["mean"]), 4), "edges": int(r["count"])}
                               for t, r in placebo.iterrows()}
    out["top_k_displacement_by_label"] = {
        lab: round(float(v), 4) for lab, v in rows.groupby("label")["top_k_displacement"].mean().items()}
    return out


def fact_type_share(rows: pd.DataFrame) -> dict[str, float]:
    """Share of the cases whose validity tree has an edge of each fact type."""
    edges = rows[rows["label"] != "placebo"]
    n = rows["case_id"].nunique()
    return {t: round(edges.loc[edges["fact_type"] == t, "case_id"].nunique() / n, 4) if n else 0.0
            for t in FACT_TYPES}


def gold_agreement(rows: pd.DataFrame, gold: dict[str, str], seed: int,
                   resamples: int = 1000) -> dict[str, Any]:
    """Spearman, pooled over (case, fact type), between a tree's sensitivity per fact type (mean
    top-k displacement of its edges of that type) and the labelled dispositive type (1, else 0);
    a 95% bootstrap interval over cases."""
    edges = rows[(rows["label"] != "placebo") & rows["case_id"].isin(gold)]
    sens = edges.groupby(["case_id", "fact_type"])["top_k_displacement"].mean()
    pairs = {c: [(float(v), float(t == gold[c])) for (cc, t), v in sens.items() if cc == c]
             for c in sorted(set(sens.index.get_level_values(0)))}

    def rho(cases: list[str]) -> float | None:
        xs = [p for c in cases for p in pairs[c]]
        if len({x for x, _ in xs}) < 2 or len({y for _, y in xs}) < 2:
            return None
        return float(stats.spearmanr([x for x, _ in xs], [y for _, y in xs]).statistic)

    cases = list(pairs)
    found = rho(cases)
    rng = random.Random(seed)
    boot = [r for _ in range(resamples)
            if (r := rho([rng.choice(cases) for _ in cases])) is not None]
    covered = [c for c in cases if any(y == 1.0 for _, y in pairs[c])]
    # strictly the most sensitive: a tie with another type does not count
    top = [c for c in covered if all(x < max(d for d, y in pairs[c] if y == 1.0)
                                     for x, y in pairs[c] if y == 0.0)]
    return {"spearman": round(found, 4) if found is not None else None,
            "ci95": [round(float(np.percentile(boot, 2.5)), 4),
                     round(float(np.percentile(boot, 97.5)), 4)] if boot else None,
            "n_cases": len(gold), "n_cases_with_trees": len(cases),
            "n_cases_with_an_edge_of_the_dispositive_type": len(covered),
            "dispositive_type_most_sensitive": round(len(top) / len(covered), 4) if covered else None}


def gold_against_chance(rows: pd.DataFrame, gold: dict[str, str], seed: int,
                        measure: str = "top_k_displacement",
                        permutations: int = 10_000) -> dict[str, Any]:
    """The gold test against chance: within each gold case whose tree has edges of its
    dispositive type and of another type, whether that type is strictly the most sensitive (the
    mean ``measure`` of its edges; a tie is not first); the share of such cases, the share
    expected when the label falls on any of the case's types at random, and the permutation p
    of that null (the label shuffled among the case's types, ``permutations`` times; one-sided:
    a share at least as high)."""
    edges = rows[(rows["label"] != "placebo") & rows["case_id"].isin(gold)]
    sens = edges.dropna(subset=[measure]).groupby(["case_id", "fact_type"])[measure].mean()
    cases = []  # (the case's types, the index of the strictly first one or -1, the label's)
    for case_id in sorted(set(sens.index.get_level_values(0))):
        by_type = sens.loc[case_id]
        types = list(by_type.index)
        if gold[case_id] not in types or len(types) < 2:
            continue
        first = [i for i, v in enumerate(by_type) if v == by_type.max()]
        cases.append((types, first[0] if len(first) == 1 else -1, types.index(gold[case_id])))
    if not cases:
        return {"share_first": None, "chance_share": None, "permutation_p": None, "n_cases": 0}
    observed = float(np.mean([top == label for _, top, label in cases]))
    chance = float(np.mean([(top >= 0) / len(types) for types, top, _ in cases]))
    rng = np.random.default_rng(seed)
    hits = sum(rng.integers(0, len(types), size=permutations) == top
               for types, top, _ in cases) / len(cases)
    return {"share_first": round(observed, 4), "chance_share": round(chance, 4),
            "permutation_p": round(float((1 + np.sum(hits >= observed)) / (1 + permutations)), 4),
            "n_cases": len(cases), "measure": measure, "permutations": permutations}

"""Stage ``validity_v3``: the confirmatory test of directional sensitivity, as
``docs/preregistration/validity_v3.md`` states it, refused unless that file is final, committed
before the commit run, unchanged since a run recorded its hash, and names the case list it runs.

For every listed case (held-out citation cases with an edit that has citation-grounded targets,
stage ``targets``), each root edit with targets is made at the ``span`` granularity and paired
with its matched placebo (v2's matching, :func:`countercase.confirm.pairs.candidates`); the root,
the edit and the placebo are searched under every ranker, and each node's *direction* against
the edit's targets is computed (:mod:`countercase.confirm.directional`), for the whole-graph
targets and, where they exist, the held-out-only ones.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase import layout
from countercase.config import Params
from countercase.confirm.analysis import holm
from countercase.confirm.directional import direction, power, summarise
from countercase.confirm.inputs import CorpusInputs
from countercase.confirm.matching import Mass, closest
from countercase.confirm.pairs import GRANULARITY, candidates, successors
from countercase.confirm.prereg import read_settings, recorded_hash, verify
from countercase.confirm.rankers import RANKED, Rankers, open_rankers
from countercase.datasets.citations import read_citations
from countercase.datasets.ids import natural_key
from countercase.datasets.limits import Limit
from countercase.errors import PartMissing
from countercase.extract.years import read_years
from countercase.factsheet.store import read_sheets
from countercase.index.bm25 import Bm25Searcher
from countercase.ingest.run import read_documents
from countercase.layout import IndexPaths
from countercase.perturb.cases import QueryCase, corpus_cases
from countercase.perturb.operative import root_edges
from countercase.perturb.query import text_query
from countercase.perturb.rules import apply
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import FeatureSource
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.load import open_retriever
from countercase.retrieve.prior import citation_counts
from countercase.retrieve.registry import tree_params
from countercase.retrieve.trees import tree_ranker

log = logging.getLogger(__name__)

PRIMARY = "trees"  # the system the perturbation trees search (params.yaml perturb.system)
RANKERS = ("trees", "bm25", "dense", "cross_encoder", "ltr", "ltr_unmasked")
VARIANTS = ("whole", "heldout")
SETTINGS = {"tolerance": float, "depth": int, "chunk_hits": int, "tree_chunks": int,
             "per_type": int, "resamples": int, "alpha": float, "secondary_alpha": float,
             "effect": float, "placebo_ratio": float}


@dataclass(frozen=True)
class Inputs(CorpusInputs):
    targets: Path = layout.CASE_TARGETS
    prereg: Path = layout.VALIDITY_V3
    ltr_dir: Path = layout.LTR


def read_targets(path: Path) -> dict[str, dict[tuple[str, str], dict]]:
    """case -> (edit path, description) -> its targets row."""
    found: dict[str, dict[tuple[str, str], dict]] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            found.setdefault(row["case_id"], {})[(row["path"], row["description"])] = row
    return found


def target_counts(targets: dict[str, dict[tuple[str, str], dict]], ids: list[str]) -> dict:
    """Per target variant and fact type, the listed cases' root edits and those with targets."""
    out: dict[str, dict] = {}
    for variant in VARIANTS:
        per_type: dict[str, list[int]] = {}
        for case in ids:
            for row in targets.get(case, {}).values():
                if variant not in row:
                    continue
                seen = per_type.setdefault(row["fact_type"], [0, 0])
                seen[0] += 1
                seen[1] += bool(row[variant]["appear"] or row[variant]["drop"])
        out[variant] = {"pairs_with_targets": sum(v[1] for v in per_type.values()),
                        "per_fact_type": {t: {"edits": v[0], "with_targets": v[1]}
                                          for t, v in sorted(per_type.items())}}
    return out


def eligible(targets: dict[str, dict[tuple[str, str], dict]], part: dict[str, str],
             wanted: str = "heldout") -> list[str]:
    """The cases of ``wanted`` part with an edit whose whole-graph targets are not empty."""
    return sorted((c for c, rows in targets.items() if part.get(c) == wanted and any(
        r["whole"]["appear"] or r["whole"]["drop"] for r in rows.values())), key=natural_key)


class TreeRanker:
    """What the trees search (the learned system when ltr is served, else ``perturb.system``
    at the trees' fact weight: :func:`countercase.retrieve.trees.tree_ranker`) as ranks to
    ``depth`` judgments under a case's limit, ``chunks`` candidates per text retriever."""

    def __init__(self, params: Params, paths: IndexPaths, depth: int, chunks: int) -> None:
        tree = tree_params(params).model_copy(update={"bm25_depth": chunks,
                                                      "dense_depth": chunks})
        self.pipeline = open_retriever("precedents", tree, paths, facts=True)
        self.retriever = tree_ranker(params, paths, self.pipeline)
        self.depth = depth

    def __call__(self, text: str, sheet, limit: Limit) -> dict[str, int]:
        filters = SearchFilter(year_to=limit.year_to, exclude_doc_ids=limit.exclude)
        ranked = [doc for doc, _ in self.retriever.ranking(text, filters, self.depth, sheet)]
        return {doc: i + 1 for i, doc in enumerate(ranked)}

    def close(self) -> None:
        if hasattr(self.pipeline, "close"):
            self.pipeline.close()


def _measures(rankers: Rankers, trees: TreeRanker | None, case_id: str, text: str, sheet,
              limit: Limit, counts, docs, passages) -> dict[str, dict[str, float]]:
    found = {"bm25": rankers.bm25(text, limit), "dense": rankers.dense(text, limit),
             "cross_encoder": rankers.cross_encoder(text, passages)}
    if trees is not None:
        found["trees"] = trees(text, sheet, limit)
    for name in rankers.models:
        found[name] = rankers.ltr(name, case_id, text, limit, counts, docs)
    return found


def matched(case: QueryCase, targets: dict[tuple[str, str], dict], edges: pd.DataFrame,
            settings: dict, mass: Mass, successor) -> tuple[list[tuple], list[dict]]:
    """``case``'s root edits with targets, each with its node and its matched placebo's (texts
    and the index's document frequencies only, never a ranking), and the edits left out."""
    pairs, left = [], []
    for p in root_edges(case, edges, settings["per_type"]):
        row = targets.get((p.path, p.description))
        if row is None or not (row["whole"]["appear"] or row["whole"]["drop"]):
            continue
        sheet = apply(case.sheet, p)
        text = text_query(sheet, case.sheet, case.text, GRANULARITY)
        target = mass.of(case.text, text)
        options = candidates(p, case, mass, target, successor)
        found = closest(mass, case.text, target, [c for c, _ in options], settings["tolerance"])
        if target <= 0 or found is None:
            left.append({"case_id": case.case_id, "fact_type": p.fact_type,
                         "description": p.description, "reason": "no matched placebo"})
            continue
        placebo, _ = found
        placebo_sheet = next(s for c, s in options if c is placebo)
        pairs.append((p, row, (text, sheet), (placebo.text, placebo_sheet), placebo.description))
    return pairs, left


def case_rows(case: QueryCase, targets: dict[tuple[str, str], dict], edges: pd.DataFrame,
              settings: dict, mass: Mass, successor, rankers: Rankers, trees, limit: Limit,
              counts) -> tuple[list[dict], list[dict]]:
    """One case's rows (per edit with targets, ranker and variant) and the edits left out."""
    rows = []
    pairs, left = matched(case, targets, edges, settings, mass, successor)
    if not pairs:
        return rows, left
    docs = sorted({d for _, row, *_ in pairs for v in VARIANTS if v in row
                   for d in row[v]["appear"] + row[v]["drop"]}, key=natural_key)
    passages = rankers.passages(case.text, limit, docs)
    root = _measures(rankers, trees, case.case_id, case.text, case.sheet, limit, counts, docs,
                     passages)
    absent = settings["depth"] + 1
    for p, row, operative, placebo, placebo_description in pairs:
        # a node's scored rankers read only this edit's targets (the root's, every edit's)
        own = sorted({d for v in VARIANTS if v in row for d in row[v]["appear"] + row[v]["drop"]},
                     key=natural_key)
        nodes = [_measures(rankers, trees, case.case_id, text, sheet, limit, counts, own,
                           {d: passages[d] for d in own if d in passages})
                 for text, sheet in (operative, placebo)]
        for ranker in RANKERS:
            if ranker not in root:
                continue
            gap = absent if ranker in (*RANKED, "trees") else None
            for variant in VARIANTS:
                if variant not in row or not (row[variant]["appear"] or row[variant]["drop"]):
                    continue
                appear, drop = row[variant]["appear"], row[variant]["drop"]
                moved = [direction(root[ranker], n[ranker], appear, drop, gap) for n in nodes]
                rows.append({"case_id": case.case_id, "fact_type": p.fact_type,
                             "ranker": ranker, "variant": variant,
                             "operative": p.description, "placebo": placebo_description,
                             "appear": len(appear), "drop": len(drop),
                             "dir_operative": moved[0], "dir_placebo": moved[1]})
    return rows, left


def feasibility(ids: list[str], inputs: Inputs, params: Params, settings: dict) -> dict[str, Any]:
    """How many of ``ids`` yield a matched pair, and how many pairs per fact type: texts and
    the chunk index's document frequencies only, before any search (section 8)."""
    targets = read_targets(inputs.targets)
    texts = {d.doc_id: d.text for d in read_documents(inputs.documents)}
    sheets = {s.case_id: s for s in read_sheets(inputs.sheets)}
    cases, skipped = corpus_cases(ids, texts, sheets, read_years(inputs.paths.metadata), {},
                                  params.perturb.case_chars)
    edges = pd.read_parquet(inputs.edges)
    index = Bm25Searcher(inputs.paths.index_dir / "precedents_chunks")
    try:
        mass, successor = Mass(index.analyze, index.idf), successors(edges)
        per_type: Counter = Counter()
        with_pairs, left = 0, Counter()
        for case in tqdm(cases, desc="matched pairs", unit="case"):
            pairs, dropped = matched(case, targets.get(case.case_id, {}), edges, settings, mass,
                                     successor)
            with_pairs += bool(pairs)
            per_type.update(p.fact_type for p, *_ in pairs)
            left.update(d["fact_type"] for d in dropped)
    finally:
        index.close()
    return {"listed": len(ids), "without_text_or_sheet": len(skipped),
            "with_a_matched_pair": with_pairs, "pairs_per_fact_type": dict(per_type),
            "edits_without_placebo_per_fact_type": dict(left),
            "power_at_effect": round(power(with_pairs, settings["effect"], settings["alpha"]), 4)}


def _analyse(table: pd.DataFrame, settings: dict, seed: int) -> dict[str, Any]:
    out = {}
    r = settings["resamples"]
    for variant in VARIANTS:
        part = table[table["variant"] == variant] if len(table) else table
        by_ranker = {}
        for ranker, group in part.groupby("ranker", sort=False):
            by_ranker[ranker] = {**summarise(group, r, seed), "per_fact_type": {
                t: summarise(g, r, seed) for t, g in group.groupby("fact_type")}}
        for ranker, p in holm({k: v["p"] for k, v in by_ranker.items() if k != PRIMARY}).items():
            by_ranker[ranker]["p_holm"] = p
        out[variant] = by_ranker
    return out


def _search(params: Params, inputs: Inputs, cases: list[QueryCase], targets: dict,
            settings: dict, collection) -> tuple[list[dict], list[dict]]:
    """The rows of ``cases`` (:func:`case_rows`) and the edits left out."""
    edges = pd.read_parquet(inputs.edges)
    successor = successors(edges)
    features = FeatureSource.chosen(inputs.paths, inputs.sheets, Choices())
    trees = None
    rows, left = [], []
    try:
        needed = {d for c in cases for row in targets.get(c.case_id, {}).values()
                  for v in VARIANTS if v in row for d in row[v]["appear"] + row[v]["drop"]}
        rankers = open_rankers(features, params, inputs.paths.chunks, inputs.ltr_dir, needed,
                               settings["depth"], settings["chunk_hits"])
        trees = TreeRanker(params, inputs.paths, settings["depth"], settings["tree_chunks"])
        mass = Mass(features.chunk_bm25.analyze, features.chunk_bm25.idf)
        limits = {c.case_id: collection.limits[c.case_id] for c in cases}
        counts = citation_counts(collection.links, list(limits), lambda q, d: limits[q].admits(
            d, collection.years.get(d)))
        for case in tqdm(cases, desc="validity v3 cases", unit="case"):
            found, dropped = case_rows(case, targets.get(case.case_id, {}), edges, settings, mass,
                                       successor, rankers, trees, limits[case.case_id],
                                       counts.get(case.case_id, {}))
            rows += found
            left += dropped
    finally:
        features.close()
        if trees is not None:
            trees.close()
    return rows, left


def _share(cases: list[QueryCase], part: tuple[int, int]) -> list[QueryCase]:
    i, n = part
    return cases[(i - 1) * len(cases) // n:i * len(cases) // n]


def _part_file(out: Path, part: tuple[int, int]) -> Path:
    return layout.part(out, *part) / "rows.json"


def _joined(out: Path, parts: int, cases: list[QueryCase]) -> tuple[list, list, float]:
    """The rows, edits left out and seconds of the ``parts`` parts, in the cases' order; a part
    that is missing or of other cases is named, with the command that runs it."""
    rows, left, seconds = [], [], 0.0
    for i in range(1, parts + 1):
        path = _part_file(out, (i, parts))
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = {}
        if found.get("cases") != [c.case_id for c in _share(cases, (i, parts))]:
            raise PartMissing(f"part {i} of {parts} ({path}) is missing or holds other cases: run "
                             f"`countercase validity-v3 --part {i}/{parts}` first")
        rows += found["rows"]
        left += found["left"]
        seconds += found["seconds"]
    return rows, left, seconds


def run_validity_v3(params: Params, inputs: Inputs, out: Path, root: Path = Path("."),
                    pilot: int = 0, part: tuple[int, int] | None = None,
                    parts: int = 1) -> dict[str, Any]:
    """The experiment; its rows under ``out`` and the summary it returns. ``pilot``: run on
    that many tuning cases with targets instead, without the guard (the code's test, its time
    and the pilot of the sample size; never a held-out case). ``part`` (i, N): search only part
    i of N of the cases, its rows into ``layout.part(out, i, N)`` (what it returns is the
    part's count); ``parts`` N: analyse the rows of N such parts instead of searching."""
    started = time.perf_counter()
    prereg = None if pilot else verify(inputs.prereg, root,
                                       recorded_hash(root, layout.metrics("validity_v3")))
    settings = read_settings(root / inputs.prereg, SETTINGS)
    collection = read_citations(inputs.citations)
    targets = read_targets(inputs.targets)
    if pilot:
        ids = eligible(targets, collection.part, "tuning")[:pilot]
    else:
        ids = (root / prereg.cases).read_text(encoding="utf-8").split()
    texts = {d.doc_id: d.text for d in read_documents(inputs.documents)}
    sheets = {s.case_id: s for s in read_sheets(inputs.sheets)}
    cases, skipped = corpus_cases(ids, texts, sheets, read_years(inputs.paths.metadata), {},
                                  params.perturb.case_chars)
    earlier = 0.0
    if parts > 1:
        rows, left, earlier = _joined(out, parts, cases)
    else:
        share = _share(cases, part) if part else cases
        rows, left = _search(params, inputs, share, targets, settings, collection)
        if part:
            seconds = round(time.perf_counter() - started, 1)
            path = _part_file(out, part)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"cases": [c.case_id for c in share], "rows": rows,
                                        "left": left, "seconds": seconds},
                                       default=lambda value: value.item()), encoding="utf-8")
            return {"part": list(part), "cases": len(share), "rows": len(rows),
                    "seconds": seconds}
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "rows.csv", index=False)
    pd.DataFrame(left, columns=["case_id", "fact_type", "description", "reason"]).to_csv(
        out / "left_out.csv", index=False)
    analysed = _analyse(table, settings, params.seed)
    primary = analysed["whole"].get(PRIMARY, {})
    n_cases = primary.get("n_cases", 0)
    with_pairs = int(table["case_id"].nunique()) if len(table) else 0
    return {
        **({"pilot": f"{pilot} tuning cases with targets: exploratory"} if pilot else
           {"preregistration_sha256": prereg.sha256, "preregistration_commit": prereg.commit,
            "cases_sha256": prereg.cases_sha256}),
        "primary": PRIMARY, "trees_search": params.perturb.learned or params.perturb.system,
        "settings": settings,
        "n_cases": n_cases,
        "power": round(power(n_cases, settings["effect"], settings["alpha"]), 4),
        "by_ranker": analysed["whole"], "by_ranker_heldout_targets": analysed["heldout"],
        "target_met": bool(primary.get("excess_mean") is not None
                           and primary["excess_mean"] > 0 and primary["p"] < settings["alpha"]
                           and (primary.get("placebo_ratio") or 0) >= settings["placebo_ratio"]
                           and n_cases >= 300),
        "targets": target_counts(targets, ids),
        "cases": {"listed": len(ids), "without_text_or_sheet": len(skipped),
                  "with_pairs": with_pairs,
                  "without_a_matched_pair": len(cases) - with_pairs},
        "edits_left_out": dict(Counter(r["reason"] for r in left)),
        **({"parts": parts} if parts > 1 else {}),
        "seconds": round(earlier + time.perf_counter() - started, 1),
    }


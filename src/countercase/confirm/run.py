"""Stage ``validity_v2``: the confirmatory validity experiment as
``docs/preregistration/validity_v2.md`` states it, refused unless that file is final, committed
before the commit run, unchanged since a run recorded its hash, and names the case list it runs.

For every listed case (the citation collection's fresh held-out judgments, in the list's order)
its matched pairs (:mod:`countercase.confirm.pairs`) are searched under every ranker
(:mod:`countercase.confirm.rankers`); a case without a pair is counted, by reason. The gold test
(H2) builds each gold case's depth-1 edges and reads their displacement under the primary ranker;
the legal label is set against the hand-labelled perturbations. The summary
(:mod:`countercase.confirm.analysis`) is what ``metrics/counterfactual.json`` holds as
``validity_v2``.
"""

from __future__ import annotations

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
from countercase.confirm.analysis import balance, by_fact_type, excess, holm, worked_pair
from countercase.confirm.hand_labels import label_agreement
from countercase.confirm.inputs import CorpusInputs
from countercase.confirm.label import Reasons
from countercase.confirm.matching import Mass
from countercase.confirm.pairs import GRANULARITY, case_pairs, successors
from countercase.confirm.prereg import read_settings, recorded_hash, verify
from countercase.confirm.rankers import RANKED, RANKERS, Rankers, displacement, open_rankers
from countercase.datasets.citations import read_citations
from countercase.datasets.ids import natural_key
from countercase.datasets.limits import Limit
from countercase.extract.years import read_years
from countercase.factsheet.store import read_sheets
from countercase.ingest.run import read_documents
from countercase.perturb.cases import cited_precedents, corpus_cases, read_gold, split
from countercase.perturb.diff import rank_biased_overlap
from countercase.perturb.operative import root_edges
from countercase.perturb.query import text_query
from countercase.perturb.rules import apply
from countercase.perturb.validity import gold_against_chance
from countercase.retrieve.choices import Choices
from countercase.retrieve.features import FeatureSource
from countercase.retrieve.prior import citation_counts

log = logging.getLogger(__name__)

PRIMARY = "bm25"
# the preregistration's settings (its front matter), each of its type
_SETTINGS = {"tolerance": float, "depth": int, "chunk_hits": int, "per_type": int,
             "resamples": int, "permutations": int, "alpha": float, "secondary_alpha": float}


@dataclass(frozen=True)
class Inputs(CorpusInputs):
    groups: Path = layout.RERANKER_GROUPS
    gold: Path = layout.DISPOSITIVE_GOLD
    hand_labels: Path = layout.PERTURBATION_LABELS
    prereg: Path = layout.VALIDITY_V2
    ltr_dir: Path = layout.LTR


class Corpus:
    """The judgments' texts, sheets, years and cited acts, and each one's Reasons, read once."""

    def __init__(self, inputs: Inputs) -> None:
        self.texts = {d.doc_id: d.text for d in read_documents(inputs.documents)}
        self.sheets = {s.case_id: s for s in read_sheets(inputs.sheets)}
        self.years = read_years(inputs.paths.metadata)
        meta = pd.read_parquet(inputs.paths.metadata, columns=["doc_id", "act_sections"])
        self.acts = {d: list(s) if s is not None else [] for d, s in
                     zip(meta["doc_id"], meta["act_sections"])}
        self._reasons: dict[str, Reasons] = {}

    def reasons(self, docs) -> dict[str, Reasons]:
        for doc in docs:
            if doc not in self._reasons and doc in self.texts:
                self._reasons[doc] = Reasons.of(self.texts[doc], self.acts.get(doc, ()))
        return {d: self._reasons[d] for d in docs if d in self._reasons}


def _measures(rankers: Rankers, case_id: str, text: str, limit: Limit, counts, docs,
              passages=None) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {"bm25": rankers.bm25(text, limit)}
    if passages is None:  # the root: its own hits choose the passages
        passages = rankers.passages(text, limit, docs)
    found["dense"] = rankers.dense(text, limit)
    found["cross_encoder"] = rankers.cross_encoder(text, passages)
    for name in rankers.models:
        found[name] = rankers.ltr(name, case_id, text, limit, counts, docs)
    found["_passages"] = passages
    return found


def _rbo(root: dict[str, float], nodes: list[dict]) -> dict[str, float]:
    """RBO, extrapolated and truncated, of the root's top 10 against each node's (the primary
    ranker's)."""
    def top(ranks: dict[str, float]) -> list[str]:
        return sorted(ranks, key=ranks.get)[:10]

    return {f"rbo_{kind}_{node}": rank_biased_overlap(top(root), top(n["bm25"]),
                                                      extrapolated=kind == "ext")
            for kind in ("ext", "truncated") for node, n in zip(("operative", "placebo"), nodes)}


def confirmatory_rows(cases, limits, corpus: Corpus, rankers: Rankers, mass: Mass,
                      edges: pd.DataFrame, settings: dict, counts) -> tuple[list, list, list]:
    """Per matched pair and ranker, the operative and placebo displacement; each edit left out
    and each case without a pair."""
    rows, left_out, excluded = [], [], []
    absent = settings["depth"] + 1
    successor = successors(edges)
    for case in tqdm(cases, desc="confirmatory cases", unit="case"):
        pairs, left = case_pairs(case, edges, settings["per_type"], corpus.reasons(case.cited),
                                 mass, successor, settings["tolerance"])
        left_out += left
        if not pairs:
            excluded.append({"case_id": case.case_id, "reason": "no matched pair"})
            continue
        limit = limits[case.case_id]
        docs = sorted({d for p in pairs for d in p.precedents}, key=natural_key)
        root = _measures(rankers, case.case_id, case.text, limit, counts.get(case.case_id, {}),
                         docs)
        for pair in pairs:
            nodes = [_measures(rankers, case.case_id, node.text, limit,
                               counts.get(case.case_id, {}), docs, root["_passages"])
                     for node in (pair.operative, pair.placebo)]
            for ranker in RANKERS:
                if ranker not in root:  # a learned ranker without its model
                    continue
                gap = absent if ranker in RANKED else None
                moved = [displacement(root[ranker], n[ranker], pair.precedents, gap)
                         for n in nodes]
                rows.append({"case_id": case.case_id, "fact_type": pair.fact_type,
                             "ranker": ranker, "operative": pair.operative.description,
                             "placebo": pair.placebo.description,
                             "mass_operative": pair.operative.mass,
                             "mass_placebo": pair.placebo.mass,
                             "precedents": len(pair.precedents),
                             "d_operative": moved[0], "d_placebo": moved[1],
                             **(_rbo(root["bm25"], nodes) if ranker == PRIMARY else {})})
    return rows, left_out, excluded


def gold_rows(corpus: Corpus, collection, gold: dict[str, str], rankers: Rankers,
              edges: pd.DataFrame, settings: dict, case_chars: int) -> tuple[list, int]:
    """Each gold case's depth-1 rule edges and their displacement of its cited precedents
    under the primary ranker; how many gold cases cite none in the corpus."""
    cited: dict[str, set[str]] = {}
    for citing, doc in collection.links:
        if citing in gold:
            cited.setdefault(citing, set()).add(doc)
    ids = sorted(gold, key=natural_key)
    cases, _ = corpus_cases(ids, corpus.texts, corpus.sheets, corpus.years,
                            {c: tuple(sorted(cited.get(c, ()), key=natural_key)) for c in ids},
                            case_chars)
    rows, without = [], 0
    absent = settings["depth"] + 1
    for case in tqdm(cases, desc="gold cases", unit="case"):
        if not case.cited:
            without += 1
            continue
        limit = Limit(case.year, case.exclude)
        root = rankers.bm25(case.text, limit)
        for p in root_edges(case, edges, settings["per_type"]):
            text = text_query(apply(case.sheet, p), case.sheet, case.text, GRANULARITY)
            rows.append({"case_id": case.case_id, "fact_type": p.fact_type, "label": "edge",
                         "displacement": displacement(root, rankers.bm25(text, limit),
                                                      case.cited, absent)})
    return rows, without


def pilot_cases(inputs: Inputs, params: Params, count: int) -> dict[str, tuple[str, ...]]:
    """The first ``count`` of v1's validity cases (development cases) and what each cites."""
    cited = cited_precedents(inputs.groups)
    p = params.perturb
    _, validity, _ = split(sorted(cited), params.seed, p.tuning_cases, p.corpus_cases)
    return {c: cited[c] for c in validity[:count]}


# what a rerun's summary says it is
RERUN = ("exploratory: the preregistered cases run again on this build's perturbation rules, "
         "models and code; the confirmatory result is the preregistered run's "
         "(metrics/validity_v2.json)")


def run_validity_v2(params: Params, inputs: Inputs, out: Path, root: Path = Path("."),
                    pilot: int = 0, rerun: bool = False) -> dict[str, Any]:
    """The experiment; its rows under ``out`` and the summary it returns. ``pilot``: run on
    that many of v1's development cases instead, without the guard (the code's test and its
    time, never the confirmatory cases); ``rerun``: the confirmatory cases run again on this
    build, under the guard, its summary marked exploratory."""
    started = time.perf_counter()
    prereg = None if pilot else verify(inputs.prereg, root, recorded_hash(
        root, layout.METRICS / "counterfactual.json", "validity_v2"))
    settings = read_settings(root / inputs.prereg, _SETTINGS)
    collection = read_citations(inputs.citations)
    corpus = Corpus(inputs)
    if pilot:
        cited = pilot_cases(inputs, params, pilot)
        ids = list(cited)
    else:
        ids = (root / prereg.cases).read_text(encoding="utf-8").split()
        cited = {q: tuple(sorted((d for d, g in collection.qrels.get(q, {}).items()
                                  if g > 0 and d in corpus.texts), key=natural_key))
                 for q in ids}
    cited = {q: tuple(d for d in docs if d in corpus.texts) for q, docs in cited.items()}
    cases, skipped = corpus_cases(ids, corpus.texts, corpus.sheets, corpus.years, cited,
                                  params.perturb.case_chars)
    gold = read_gold(inputs.gold)
    rows, left_out, excluded, edges_gold, without = _measure(
        params, inputs, settings, collection, corpus, cases, gold, pilot)
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "rows.csv", index=False)
    pd.DataFrame(left_out).to_csv(out / "left_out.csv", index=False)
    pd.DataFrame(edges_gold).to_csv(out / "gold_edges.csv", index=False)
    left = pd.DataFrame(left_out, columns=["case_id", "fact_type", "description", "reason"])
    return {
        **({"pilot": f"{pilot} development cases (v1's validity cases): exploratory"}
           if pilot else {"preregistration_sha256": prereg.sha256,
                          "preregistration_commit": prereg.commit,
                          "cases_sha256": prereg.cases_sha256}),
        **({"rerun": RERUN} if rerun and not pilot else {}),
        **_tests(params, inputs, settings, corpus, table, left, edges_gold, gold, without),
        "cases": {"listed": len(ids), "without_text_or_sheet": len(skipped),
                  "without_a_matched_pair": len(excluded),
                  "with_pairs": int(table["case_id"].nunique()) if len(table) else 0},
        "edits_left_out": dict(Counter(left["reason"])) if len(left) else {},
        "seconds": round(time.perf_counter() - started, 1),
    }


def _measure(params: Params, inputs: Inputs, settings: dict, collection, corpus: Corpus,
             cases: list, gold, pilot: int) -> tuple[list, list, list, list, int]:
    """Each ranker's rows for the matched edits of ``cases`` (with the edits left out and the
    cases without a matched pair), and the gold cases' edges (none in a pilot)."""
    edges = pd.read_parquet(inputs.edges)
    features = FeatureSource.chosen(inputs.paths, inputs.sheets, Choices())
    try:
        rankers = open_rankers(features, params, inputs.paths.chunks, inputs.ltr_dir,
                               {d for c in cases for d in c.cited}, settings["depth"],
                               settings["chunk_hits"])
        mass = Mass(features.chunk_bm25.analyze, features.chunk_bm25.idf)
        # a case's limit: the collection's rule for its query (a development case of the
        # pilot that is no query: itself and what was decided after it)
        limits = {c.case_id: collection.limits.get(c.case_id) or Limit(c.year, c.exclude)
                  for c in cases}
        counts = citation_counts(collection.links, list(limits), lambda q, d: limits[q].admits(
            d, collection.years.get(d)))
        rows, left_out, excluded = confirmatory_rows(cases, limits, corpus, rankers, mass,
                                                     edges, settings, counts)
        # a pilot leaves the gold test alone: it reads no confirmatory case, but its result
        # would be seen before the final version
        edges_gold, without = (([], 0) if pilot else gold_rows(
            corpus, collection, gold, rankers, edges, settings,
            params.perturb.case_chars))
    finally:
        features.close()
    return rows, left_out, excluded, edges_gold, without


def _tests(params: Params, inputs: Inputs, settings: dict, corpus: Corpus, table: pd.DataFrame,
           left: pd.DataFrame, edges_gold: list, gold, without: int) -> dict[str, Any]:
    """The preregistered tests on the rows: each ranker's excess (the secondary ones Holm
    corrected), the gold test, the balance of the primary ranker's pairs and the targets."""
    r = settings["resamples"]
    by_ranker = {}
    for ranker, group in table.groupby("ranker", sort=False) if len(table) else ():
        by_ranker[ranker] = {**excess(group, r, params.seed),
                             "per_fact_type": by_fact_type(group, r, params.seed),
                             "worked_pair": worked_pair(group)}
    secondary = holm({k: v["excess_p"] for k, v in by_ranker.items() if k != PRIMARY})
    for ranker, p in secondary.items():
        by_ranker[ranker]["excess_p_holm"] = p
    primary = by_ranker.get(PRIMARY, {})
    gold_table = pd.DataFrame(edges_gold, columns=["case_id", "fact_type", "label",
                                                   "displacement"])
    gold_test = gold_against_chance(gold_table, gold, params.seed, "displacement",
                                    settings["permutations"])
    pairs = table[table["ranker"] == PRIMARY] if len(table) else table
    return {
        "primary": PRIMARY, "settings": settings,
        "label_agreement": label_agreement(inputs.hand_labels, cited_precedents(inputs.groups),
                                           corpus.reasons),
        "by_ranker": by_ranker,
        "gold": {**gold_test, "gold_cases": len(gold), "gold_cases_citing_none": without},
        "balance": balance(pairs, left) if len(pairs) else {},
        "target_met": {
            "excess": bool(primary.get("excess_mean") is not None
                           and primary["excess_mean"] > 0
                           and primary["excess_p"] < settings["alpha"]
                           and (primary.get("matched_ratio") or 0) >= 2),
            "gold": bool(gold_test["permutation_p"] is not None
                         and gold_test["share_first"] > gold_test["chance_share"]
                         and gold_test["permutation_p"] < 0.05)},
        "rbo_primary": {c: round(float(pairs[c].mean()), 4) for c in pairs.columns
                        if c.startswith("rbo_")} if len(pairs) else {},
    }

"""The ``perturb`` stage and ``countercase tree``: perturbation trees over the retrieval pipeline.

The stage first runs the validity experiment on corpus query cases
(:mod:`countercase.perturb.validity`; it also chooses the fact channel's weight in the trees on
the tuning cases), then builds one tree per AILA query with that weight (depth and branching from
``params.yaml``), writes each as JSON, and summarises them in ``metrics/counterfactual.json``:
nodes, edges, sensitivity per fact type, seconds per tree, the rule check's acceptance (every
candidate passes: the rules only propose what they can justify; the LLM check is measured by its
own stage, :mod:`countercase.perturb.llm_check`), which query construction retrieves better for the unperturbed queries (MAP on AILA_Q11..Q50), and the
validity experiment under ``validity``.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import Params, PerturbParams
from countercase.datasets import load
from countercase.experiment import Experiment, ranked
from countercase.experiment.choice import TIE_MARGIN
from countercase.factsheet.llm import open_recording
from countercase.factsheet.rules import extract_rules
from countercase.perturb.cases import CaseSets, QueryCase
from countercase.perturb.llm_validator import LlmValidator
from countercase.perturb.query import structured_query
from countercase.perturb.tree import PerturbationTree, Search
from countercase.perturb.validity import (CONSTRUCTIONS, PRIMARY_CONSTRUCTION, CaseSearch,
                                          case_rows, choose_weight, fact_type_share,
                                          gold_against_chance, gold_agreement, leave_one_out,
                                          summarise)
from countercase.retrieve.load import open_retriever
from countercase.retrieve.registry import tree_params

log = logging.getLogger(__name__)


def retriever_search(retriever, case: QueryCase | None = None) -> Search:
    """The pipeline as a tree's search function: judgments with their attribution. For a
    corpus ``case``: the judgment itself and judgments decided after it are never returned."""
    filters = leave_one_out(case) if case is not None else None

    def search(query: str, sheet, k: int) -> list[dict[str, Any]]:
        if not query.strip():
            return []
        hits = retriever.search(query, filters, k=k, sheet=sheet).documents
        return [{"doc_id": h.doc_id, "chunk_id": h.chunk_id, "rank": h.rank,
                 "page_number": h.page_number, "section_type": h.section_type,
                 "source_path": h.source_path, "scores": h.scores, "metadata": h.metadata}
                for h in hits]
    return search


def compare_constructions(retriever, aila_dir: Path, depth: int = 1000) -> dict[str, Any]:
    """MAP of the unperturbed AILA queries built each way (Task 1, AILA_Q11..Q50)."""
    def system(build):
        def rank(topics):
            run = {}
            for qid, text in topics.items():
                query = build(qid, text)
                run[qid] = ranked([h.doc_id for h in retriever.search(query, k=depth).documents]
                                  if query else [])
            return run
        return rank

    constructions = {
        "text": system(lambda qid, text: text),
        "structured": system(lambda qid, text: structured_query(extract_rules(text, qid, "query")))}
    result = Experiment(constructions, load("aila2019/task1/test", aila_dir), measures=["MAP"],
                        baselines=["text"], tested=["MAP"])
    scores = {name: found["MAP"] for name, found in result.aggregate().items()}
    return {"MAP": scores, "winner": max(scores, key=scores.get)}


def run_perturb(queries: dict[str, str], retriever, edges: pd.DataFrame, out: Path,
                params: PerturbParams, aila_dir: Path | None = None) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    search = retriever_search(retriever)
    seconds, nodes, by_type = [], [], defaultdict(list)
    n_candidates = 0
    # the LLM check's answers, recorded with the stage's (off by default: perturb.llm_check)
    validator = LlmValidator(open_recording("perturb")) if params.llm_check else None
    for qid, text in tqdm(queries.items(), desc="trees", unit="tree"):
        started = time.perf_counter()
        tree = PerturbationTree(extract_rules(text, qid, "query"), search, edges, params.k,
                                text=text, prune_below=params.prune_below,
                                validator=validator,
                                granularity=params.granularity)
        tree.build(params.depth, params.branching)
        seconds.append(time.perf_counter() - started)
        nodes.append(len(tree.nodes))
        n_candidates += sum(1 for n in tree.nodes.values() if n.edge is not None)
        for fact_type, value in tree.sensitivity().items():
            by_type[fact_type].append(value)
        (out / f"{qid}.json").write_text(tree.to_json(params.model_dump()), encoding="utf-8")
    if validator is not None:
        validator.recording.close()
    summary = {
        "n_trees": len(nodes), "n_nodes": sum(nodes), "n_edges": sum(nodes) - len(nodes),
        "nodes_per_tree_max": max(nodes, default=0),
        "sensitivity_per_fact_type": {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())},
        "trees_with_fact_type": {t: len(v) for t, v in sorted(by_type.items())},
        "acceptance": {"rule_check": 1.0 if n_candidates else None},
    }
    if aila_dir is not None:
        summary["query_construction"] = compare_constructions(retriever, aila_dir)
    timing = {"seconds_per_tree_mean": round(sum(seconds) / max(1, len(seconds)), 2),
              "seconds_per_tree_max": round(max(seconds, default=0.0), 2),
              "unpruned": unpruned_trees(queries, retriever, edges, params)}
    return {"summary": summary, "timing": timing}


def corpus_trees(cases: list[QueryCase], retriever, edges: pd.DataFrame, params: PerturbParams,
                 out: Path) -> dict[str, Any]:
    """Trees of the first ``corpus_trees`` validity cases (facts unmasked, searched
    leave-one-out), written to ``out/<case id>.json``; the explanation and topology stages read
    them beside the AILA trees."""
    out.mkdir(parents=True, exist_ok=True)
    nodes, types = [], defaultdict(int)
    for case in tqdm(cases[:params.corpus_trees], desc="corpus trees", unit="tree"):
        tree = PerturbationTree(case.sheet, retriever_search(retriever, case), edges, params.k,
                                text=case.text, prune_below=params.prune_below,
                                granularity=params.granularity)
        tree.build(params.depth, params.branching)
        nodes.append(len(tree.nodes))
        for fact_type in tree.sensitivity():
            types[fact_type] += 1
        (out / f"{case.case_id}.json").write_text(tree.to_json(params.model_dump()),
                                                  encoding="utf-8")
    return {"n_trees": len(nodes), "n_nodes": sum(nodes),
            "trees_with_fact_type": dict(sorted(types.items()))}


def unpruned_trees(queries: dict[str, str], retriever, edges: pd.DataFrame,
                   params: PerturbParams) -> list[dict[str, Any]]:
    """The benchmark of a whole tree: the first ``benchmark_trees`` queries built without
    pruning (depth 3, branching 5: up to 156 nodes), each with a search of its own (no results
    cached from the trees above)."""
    found = []
    for qid, text in list(queries.items())[:params.benchmark_trees]:
        started = time.perf_counter()
        tree = PerturbationTree(extract_rules(text, qid, "query"), retriever_search(retriever),
                                edges, params.k, text=text, prune_below=0.0,
                                granularity=params.granularity)
        tree.build(params.depth, params.branching)
        found.append({"query": qid, "nodes": len(tree.nodes),
                      "seconds": round(time.perf_counter() - started, 2)})
    return found


def case_search(retriever, params: Params) -> CaseSearch:
    """The validity experiment's searches: the trees' pipeline without the fact channel, each
    text retriever ``perturb.chunk_depth`` chunks deep."""
    p = params.perturb
    text_params = tree_params(params, 0.0).model_copy(update={
        "bm25_depth": p.chunk_depth, "dense_depth": p.chunk_depth})
    return CaseSearch(retriever.with_params(text_params), retriever.facts, p.validity_depth,
                      params.retrieve.rrf_k)


def choose_tree_weight(retriever, params: Params, sets: CaseSets) -> dict[str, Any]:
    """The fact channel's weight, chosen on the tuning cases (the stage writes it to
    ``configs/trees_choice.yaml``): the validity rows and a tree searched by a pipeline system
    read it; a tree searched by the learned system reads the sheet as features instead."""
    return choose_weight(sets.tuning, case_search(retriever, params), params.perturb.fact_weights,
                         TIE_MARGIN)


def validity_rows(name: str, cases: list[QueryCase], search: CaseSearch, edges: pd.DataFrame,
                  params: Params, weight: float, precedents: dict) -> list[dict[str, Any]]:
    """The rows of ``cases``' validity trees (:func:`countercase.perturb.validity.case_rows`),
    each marked with its set ``name``."""
    p = params.perturb
    rows = []
    for case in tqdm(cases, desc=f"{name} cases", unit="case"):
        search.clear()
        rows += [{"set": name, **row} for row in case_rows(
            case, search, edges, p.per_type, weight, precedents, p.k)]
    return rows


def validity_rows_apart(paths, params: Params, cases: list[QueryCase], edges: pd.DataFrame,
                        weight: float, precedents: dict) -> list[dict[str, Any]]:
    """:func:`validity_rows` of the validity set in a process of its own, with its own JVM and
    indexes (``paths``: a :class:`countercase.layout.IndexPaths`): the searches are
    Lucene's, one core each, so the stage splits its cases over ``perturb.workers`` processes.
    The rows are the same as in one process: every case's searches start empty."""
    retriever = open_retriever("precedents", tree_params(params, 0.0), paths, facts=True)
    return validity_rows("validity", cases, case_search(retriever, params), edges, params,
                         weight, precedents)


def validity_summary(rows: list[dict[str, Any]], params: Params, sets: CaseSets,
                     weight: dict[str, Any], out: Path) -> dict[str, Any]:
    """The validity experiment (module :mod:`countercase.perturb.validity`) from its rows;
    rows written to ``out/validity.csv``, cases that could not be used to
    ``out/validity_skipped.jsonl``."""
    p = params.perturb
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "validity.csv", index=False)
    with (out / "validity_skipped.jsonl").open("w", encoding="utf-8") as handle:
        for row in sets.skipped:
            handle.write(json.dumps(row) + "\n")
    valid = table[table["set"] == "validity"]
    conditions = {f"{g}/{c}": summarise(valid[(valid["granularity"] == g)
                                             & (valid["construction"] == c)])
                  for g in ("field", "span") for c in CONSTRUCTIONS}
    primary = conditions[f"{p.granularity}/{PRIMARY_CONSTRUCTION}"]
    gold_rows = table[(table["set"] == "gold") & (table["granularity"] == p.granularity)
                      & (table["construction"] == PRIMARY_CONSTRUCTION)]
    agreement = gold_agreement(gold_rows, sets.gold_types, params.seed)
    return {
        "primary": f"{p.granularity}/{PRIMARY_CONSTRUCTION}",
        "operative_mean": primary.get("operative_mean_paired"),
        "placebo_mean": primary.get("placebo_mean_paired"),
        "ratio": primary.get("ratio"), "p_value": primary.get("p_value"),
        "cohens_d": primary.get("cohens_d"), "n_cases": primary["n_cases"],
        "n_cases_sampled": len(sets.validity), "n_cases_skipped": sets.n_validity_skipped,
        "fact_type_share": fact_type_share(valid[(valid["granularity"] == p.granularity)
                                                 & (valid["construction"] == PRIMARY_CONSTRUCTION)]),
        "gold_spearman": agreement["spearman"], "gold": agreement,
        "gold_against_chance": gold_against_chance(gold_rows, sets.gold_types, params.seed),
        "fact_weight": weight, "by_condition": conditions,
    }

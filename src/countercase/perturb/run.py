"""The ``perturb`` stage and ``countercase tree``: perturbation trees over the retrieval pipeline.

The stage builds one tree per AILA query (depth and branching from ``params.yaml``), writes each
as JSON, and summarises them in ``metrics/counterfactual.json``: nodes, edges, sensitivity per fact
type, seconds per tree, the rule check's acceptance (every candidate passes: the rules only
propose what they can justify; the LLM check is not run yet), and which query construction
retrieves better for the unperturbed queries (MAP on AILA_Q11..Q50).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import PerturbParams
from countercase.datasets import load
from countercase.experiment import Experiment, ranked
from countercase.factsheet.rules import extract_rules
from countercase.perturb.query import structured_query
from countercase.perturb.tree import PerturbationTree, Search

log = logging.getLogger(__name__)


def retriever_search(retriever) -> Search:
    """The pipeline as a tree's search function: judgments with their attribution."""
    def search(query: str, k: int) -> list[dict[str, Any]]:
        if not query.strip():
            return []
        return [{"doc_id": h.doc_id, "chunk_id": h.chunk_id, "rank": h.rank,
                 "page_number": h.page_number, "section_type": h.section_type,
                 "source_path": h.source_path, "scores": h.scores, "metadata": h.metadata}
                for h in retriever.search(query, k=k).documents]
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
    for qid, text in tqdm(queries.items(), desc="trees", unit="tree"):
        started = time.perf_counter()
        tree = PerturbationTree(extract_rules(text, qid, "query"), search, edges, params.k,
                                text=text, prune_below=params.prune_below,
                                validator=_validator() if params.llm_check else None)
        tree.build(params.depth, params.branching)
        seconds.append(time.perf_counter() - started)
        nodes.append(len(tree.nodes))
        n_candidates += sum(1 for n in tree.nodes.values() if n.edge is not None)
        for fact_type, value in tree.sensitivity().items():
            by_type[fact_type].append(value)
        (out / f"{qid}.json").write_text(tree.to_json(params.model_dump()), encoding="utf-8")
    summary = {
        "n_trees": len(nodes), "n_nodes": sum(nodes), "n_edges": sum(nodes) - len(nodes),
        "nodes_per_tree_max": max(nodes, default=0),
        "sensitivity_per_fact_type": {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())},
        "trees_with_fact_type": {t: len(v) for t, v in sorted(by_type.items())},
        "acceptance": {"rule_check": 1.0 if n_candidates else None},
    }
    summary["acceptance"]["llm_check"] = llm_acceptance(queries, search, edges, params)
    if aila_dir is not None:
        summary["query_construction"] = compare_constructions(retriever, aila_dir)
    timing = {"seconds_per_tree_mean": round(sum(seconds) / max(1, len(seconds)), 2),
              "seconds_per_tree_max": round(max(seconds, default=0.0), 2)}
    return {"summary": summary, "timing": timing}


def _validator():
    from countercase.factsheet.llm import LlmExtractor
    from countercase.perturb.validate import LlmValidator

    return LlmValidator(LlmExtractor())


def llm_acceptance(queries: dict[str, str], search: Search, edges: pd.DataFrame,
                   params: PerturbParams) -> dict[str, Any]:
    """The LLM check's acceptance rate on the root perturbations of the first
    ``llm_check_queries`` queries (the plan expects 60 to 80 percent)."""
    from countercase.factsheet.llm import LlmUnavailableError

    if params.llm_check_queries == 0:
        return {"status": "not run (llm_check_queries is 0)"}
    try:
        validator = _validator()
    except LlmUnavailableError as error:
        return {"status": f"not run: {error}"}
    checked = accepted = 0
    started = time.perf_counter()
    for qid, text in list(queries.items())[:params.llm_check_queries]:
        tree = PerturbationTree(extract_rules(text, qid, "query"), search, edges, params.k,
                                text=text, validator=validator)
        tree.expand("n0", params.branching)
        checked, accepted = checked + tree.checked, accepted + tree.accepted
    seconds = time.perf_counter() - started
    return {"status": "run", "queries": params.llm_check_queries, "checked": checked,
            "accepted": accepted, "rate": round(accepted / checked, 4) if checked else None,
            # only model calls cost: checks answered from the cache have no cost to report
            "seconds_per_check": (round(seconds / validator.calls, 2) if validator.calls
                                  else None),
            "model_calls": validator.calls, "answered_from_cache": checked - validator.calls}

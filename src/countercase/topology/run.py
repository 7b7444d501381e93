"""Tree topology (the plan's fourth open question) and precedent robustness.

Per tree: nodes, the depth reached, branching density (children per expanded node over the
branching asked for), the share of nodes pruned, and the shape of its sensitivity over fact types
and over edges: normalised entropy (1: spread evenly, 0: one type carries it all), Gini and max
over mean.

Per precedent: robustness in a tree is the share of the tree's nodes (the root included) at
which a precedent retrieved at the root is in the top K; a precedent's robustness is its mean over the trees
that retrieve it at the root. The hypothesis: broad precedents (cited by many corpus judgments,
larger benches, constitutional questions) are more robust than narrow ones. Spearman between
robustness and citation in-degree, with a bootstrap interval over precedents.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from countercase.explain.run import read_tree, tree_paths
from countercase.perturb.cases import cited_precedents
from countercase.perturb.tree import TreeModel

# judges on a bench of each type (a Constitution bench has at least five); Unknown is left out
BENCH_JUDGES = {"Single": 1, "Division": 2, "Three-Judge": 3, "Constitution": 5, "Larger": 5}


def entropy(values: list[float]) -> float | None:
    """Shannon entropy of ``values`` as shares, over log(len): 1 even, 0 concentrated."""
    total = sum(values)
    if len(values) < 2 or total <= 0:
        return None
    shares = [v / total for v in values if v > 0]
    return round(-sum(p * math.log(p) for p in shares) / math.log(len(values)), 4)


def gini(values: list[float]) -> float | None:
    x = np.sort(np.asarray(values, dtype=float))
    if len(x) < 2 or x.sum() <= 0:
        return None
    n = len(x)
    return round(float((2 * np.arange(1, n + 1) - n - 1).dot(x) / (n * x.sum())), 4)


def max_over_mean(values: list[float]) -> float | None:
    return round(max(values) / float(np.mean(values)), 4) if values and np.mean(values) > 0 \
        else None


def tree_shape(tree: TreeModel) -> dict[str, Any]:
    children: dict[str, int] = defaultdict(int)
    for node in tree.nodes:
        if node.parent_id is not None:
            children[node.parent_id] += 1
    expanded = [n for n in tree.nodes if children[n.node_id]]
    branching = int(tree.params.get("branching") or 0)
    edges = [n.diff_vs_parent.mean_displacement for n in tree.nodes if n.diff_vs_parent]
    by_type = list(tree.sensitivity_scores.values())
    below_root = max(1, len(tree.nodes) - 1)
    return {
        "case_id": tree.case_id, "nodes": len(tree.nodes),
        "depth_reached": max(n.depth for n in tree.nodes),
        "branching_density": (round(float(np.mean([children[n.node_id] for n in expanded]))
                              / branching, 4) if expanded and branching else None),
        "share_pruned": round(sum(n.pruned for n in tree.nodes) / below_root, 4),
        "fact_types": len(by_type),
        "type_entropy": entropy(by_type), "type_gini": gini(by_type),
        "type_max_over_mean": max_over_mean(by_type),
        "edge_gini": gini(edges), "edge_max_over_mean": max_over_mean(edges)}


def robustness(tree: TreeModel) -> dict[str, float]:
    """Precedent at the root -> share of the tree's nodes with it in their results."""
    root = {r["doc_id"] for r in tree.nodes[0].retrieval_results}
    if len(tree.nodes) < 2:
        return {}
    held = defaultdict(int)
    for node in tree.nodes:
        for doc in root & {r["doc_id"] for r in node.retrieval_results}:
            held[doc] += 1
    return {doc: held[doc] / len(tree.nodes) for doc in sorted(root)}


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return float(stats.spearmanr(xs, ys).statistic)


def robustness_vs(values: dict[str, float], feature: dict[str, float], seed: int,
                  resamples: int = 1000) -> dict[str, Any]:
    """Spearman between robustness and ``feature`` over the precedents that have both, with a
    95% bootstrap interval over precedents."""
    docs = sorted(d for d in values if d in feature)
    xs, ys = [values[d] for d in docs], [feature[d] for d in docs]
    rho = _spearman(xs, ys)
    rng = random.Random(seed)
    boot = []
    for _ in range(resamples):
        pick = [rng.randrange(len(docs)) for _ in docs]
        r = _spearman([xs[i] for i in pick], [ys[i] for i in pick])
        if r is not None:
            boot.append(r)
    return {"spearman": round(rho, 4) if rho is not None else None,
            "ci": ([round(float(np.percentile(boot, 2.5)), 4),
                    round(float(np.percentile(boot, 97.5)), 4)] if boot else None),
            "n": len(docs)}


def topology(trees: list[TreeModel], indegree: dict[str, int], metadata: dict[str, dict],
             seed: int, extremes: int = 5) -> dict[str, Any]:
    shapes = [tree_shape(t) for t in trees]
    per_tree: dict[str, list[float]] = defaultdict(list)
    for tree in trees:
        for doc, share in robustness(tree).items():
            per_tree[doc].append(share)
    robust = {doc: float(np.mean(v)) for doc, v in per_tree.items()}
    degree = {doc: float(indegree.get(doc, 0)) for doc in robust}
    constitutional = {doc: float(any(str(s).startswith("Constitution")
                                     for s in (metadata.get(doc, {}).get("act_sections") or [])))
                      for doc in robust}
    bench = {doc: float(BENCH_JUDGES[b]) for doc in robust
             if (b := metadata.get(doc, {}).get("bench_type")) in BENCH_JUDGES}
    ranked = sorted(robust, key=lambda d: (robust[d], d))

    def row(doc: str) -> dict[str, Any]:
        meta = metadata.get(doc, {})
        return {"doc_id": doc, "robustness": round(robust[doc], 4), "trees": len(per_tree[doc]),
                "indegree": int(degree[doc]), "bench_type": meta.get("bench_type"),
                "year": meta.get("year")}

    keys = [k for k in shapes[0] if k != "case_id"] if shapes else []
    return {
        "trees": {"n": len(shapes),
                  "n_aila_queries": sum(s["case_id"].startswith("AILA_Q") for s in shapes),
                  "per_tree": shapes,
                  "mean": {k: (round(float(np.mean(v)), 4) if (v := [s[k] for s in shapes
                                                                  if s[k] is not None]) else None)
                           for k in keys}},
        "precedents": {"n": len(robust), "mean_robustness": (round(float(np.mean(list(
            robust.values()))), 4) if robust else None),
            "least_robust": [row(d) for d in ranked[:extremes]],
            "most_robust": [row(d) for d in ranked[::-1][:extremes]]},
        "robustness_vs_indegree": robustness_vs(robust, degree, seed),
        "robustness_vs_constitutional": robustness_vs(robust, constitutional, seed),
        "robustness_vs_bench": robustness_vs(robust, bench, seed),
    }


def run_topology(trees_dir, groups, metadata_path, seed: int) -> dict[str, Any]:
    """The ``topology`` stage over every tree of the ``perturb`` stage (AILA queries and corpus
    cases)."""
    import pandas as pd

    paths = tree_paths(Path(trees_dir))
    indegree: dict[str, int] = defaultdict(int)
    for cited in cited_precedents(groups).values():
        for doc in cited:
            indegree[doc] += 1
    table = pd.read_parquet(metadata_path, columns=["doc_id", "bench_type", "year",
                                                    "act_sections"])
    metadata = {row.doc_id: {"bench_type": row.bench_type,
                             "year": None if pd.isna(row.year) else int(row.year),
                             "act_sections": list(row.act_sections)
                             if row.act_sections is not None else []}
                for row in table.itertuples()}
    return topology([read_tree(p) for p in paths], indegree, metadata, seed)

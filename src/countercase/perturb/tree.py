"""The perturbation tree: fact sheet states as nodes, single fact changes as edges, the retrieval
pipeline run at every node.

Construction is breadth-first from the root: a node's children are its rule perturbations
(:mod:`countercase.perturb.rules`), ``branching`` of them, down to ``depth``: first the most
plausible candidate of each fact type (so that every kind of fact the sheet states is
explored), then the most plausible of the rest (rule plausibility below). A child whose mean rank displacement
against its parent is under ``prune_below`` is kept but not expanded. :meth:`expand` grows one
node on demand, :meth:`edit` attaches a hand-edited sheet as a child of any node. The whole tree
serialises to JSON (``tree.schema.json`` beside this module) and loads back identically.

With an LLM validator (:mod:`countercase.perturb.llm_validator`) each candidate, in that order, is
checked before it becomes a child; rejected ones are skipped and counted.

Rule plausibility (the order of the branching cap): every rule's change 1.0 (:func:`plausibility`);
ties keep the rules' order.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd
from pydantic import BaseModel, ConfigDict

from countercase.errors import CountercaseError
from countercase.factsheet.schema import FactSheet, validate_sheet
from countercase.perturb.diff import diff_rankings
from countercase.perturb.query import structured_query, text_query
from countercase.perturb.rules import Perturbation, apply, candidates, check

log = logging.getLogger(__name__)
SCHEMA_PATH = Path(__file__).with_name("tree.schema.json")
# search(query text, the node's fact sheet, k) -> ranked results, each with at least "doc_id"
Search = Callable[[str, FactSheet, int], list[dict[str, Any]]]


class TreeError(CountercaseError, ValueError):
    """A request the tree cannot honour (unknown node, bad depth, a sheet off the schema)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EdgeModel(_Model):
    fact_type: str
    path: str
    old: Any = None
    new: Any = None
    description: str
    basis: str  # the legal source
    plausibility: float
    rule: str = ""  # threshold | swap | party_axis | evidence (countercase.perturb.rules)
    scope: str = ""  # what of the case the rule matched
    llm_verdict: Optional[dict[str, Any]] = None  # when the LLM check is on


class DiffModel(_Model):
    dropped: list[str]
    new: list[str]
    stable: list[str]
    displacement: dict[str, int]
    mean_displacement: float
    rbo: float  # extrapolated (countercase.perturb.diff)
    rbo_truncated: Optional[float] = None  # None: a tree written before it was recorded
    kendall_tau: Optional[float] = None


class TreeNode(_Model):
    node_id: str
    parent_id: Optional[str] = None
    depth: int
    fact_sheet_state: FactSheet
    edge: Optional[EdgeModel] = None
    query: str
    retrieval_results: list[dict[str, Any]]
    diff_vs_parent: Optional[DiffModel] = None
    sensitivity_scores: dict[str, float] = {}  # over the edges to this node's children
    # filled by the explanation engine (countercase.explain): each result's sentences, keyed by
    # chunk id, and the edge's counterfactual summary; each sentence with the claims it rests on
    explanations: dict[str, list[dict[str, Any]]] = {}
    counterfactual_summary: list[dict[str, Any]] = []
    expanded: bool = False
    pruned: bool = False


class TreeModel(_Model):
    case_id: str
    query_construction: str
    source_text: Optional[str] = None
    params: dict[str, Any]
    nodes: list[TreeNode]
    sensitivity_scores: dict[str, float]
    notes: list[str] = []  # why a tree is smaller than asked (a sheet with no facts to change)


def plausibility(p: Perturbation) -> float:
    """How readily a candidate is kept as a child: every rule now changes a fact along a legal
    table (a boundary crossed, an operative swap, a party axis, evidence the case has removed),
    so all score 1 and ties keep the rules' order; a manual edit's tree may hold other kinds."""
    if p.fact_type == "evidence" and p.new is not None:
        return 0.5
    return 1.0


def diverse(ranked: list[tuple[Perturbation, float]]) -> list[tuple[Perturbation, float]]:
    """``ranked`` with the first candidate of each fact type moved to the front, in order."""
    firsts, seen = [], set()
    for i, (p, _) in enumerate(ranked):
        if p.fact_type not in seen:
            seen.add(p.fact_type)
            firsts.append(i)
    return [ranked[i] for i in firsts] + [r for i, r in enumerate(ranked) if i not in set(firsts)]


class PerturbationTree:
    def __init__(self, root: FactSheet, search: Search, edges: pd.DataFrame, k: int = 10,
                 text: str | None = None, prune_below: float = 0.5,
                 stable_below: int = 3, validator=None, granularity: str = "span") -> None:
        self.search, self.edges, self.k = search, edges, k
        self.validator = validator  # countercase.perturb.llm_validator.LlmValidator, or None
        self.checked = self.accepted = 0
        self.text = text
        self.granularity = granularity
        self.construction = "text" if text else "structured"
        self.prune_below, self.stable_below = prune_below, stable_below
        self.root_sheet = root
        self.notes: list[str] = []
        self.nodes: dict[str, TreeNode] = {}
        self._children: dict[str, list[str]] = defaultdict(list)
        self._add(root, None, None)

    # ---------------------------------------------------------------- building

    def _query(self, sheet: FactSheet) -> str:
        if self.text:
            return text_query(sheet, self.root_sheet, self.text, self.granularity)
        return structured_query(sheet)

    def _add(self, sheet: FactSheet, parent: TreeNode | None, edge: EdgeModel | None) -> TreeNode:
        query = self._query(sheet)
        results = self.search(query, sheet, self.k)
        node_id = "n0" if parent is None else f"{parent.node_id}.{len(self._children[parent.node_id]) + 1}"
        diff = None
        if parent is not None:
            found = diff_rankings([r["doc_id"] for r in parent.retrieval_results],
                                  [r["doc_id"] for r in results], self.k, self.stable_below)
            diff = DiffModel(**found.to_dict())
        node = TreeNode(node_id=node_id, parent_id=parent.node_id if parent else None,
                        depth=0 if parent is None else parent.depth + 1, fact_sheet_state=sheet,
                        edge=edge, query=query, retrieval_results=results, diff_vs_parent=diff,
                        pruned=diff is not None and diff.mean_displacement < self.prune_below)
        self.nodes[node_id] = node
        if parent is not None:
            self._children[parent.node_id].append(node_id)
        return node

    def _ranked_candidates(self, sheet: FactSheet) -> list[tuple[Perturbation, float]]:
        ranked = []
        for p in candidates(sheet, self.edges, text=self.text):
            check(p, self.edges)
            ranked.append((p, plausibility(p)))
        return diverse(sorted(ranked, key=lambda item: -item[1]))  # stable: ties keep rule order

    def expand(self, node_id: str, branching: int = 5) -> list[TreeNode]:
        """The children of ``node_id`` (computed once; a second call returns the same ones)."""
        node = self.node(node_id)
        if node.expanded:
            return [self.nodes[c] for c in self._children[node_id]]
        added = 0
        ranked = self._ranked_candidates(node.fact_sheet_state)
        if not ranked and node_id == "n0":
            self.notes.append(f"{self.root_sheet.case_id}: the fact sheet states no fact a rule "
                              "can change (no section, party type, evidence item or number): "
                              "the tree is its root alone")
            log.warning(self.notes[-1])
        for p, score in ranked:
            if added == branching:
                break
            changed = apply(node.fact_sheet_state, p)
            verdict = None
            if self.validator is not None:  # the plan's LLM check: rejected ones are skipped
                found = self.validator.check(node.fact_sheet_state, changed, p.fact_type,
                                             p.description)
                self.checked += 1
                self.accepted += found.accepted
                if not found.accepted:
                    continue
                verdict = {"p_plausible": found.plausible, "p_operative": found.operative}
            edge = EdgeModel(fact_type=p.fact_type, path=p.path, old=p.old, new=p.new,
                             description=p.description, basis=p.basis, plausibility=score,
                             rule=p.rule, scope=p.scope, llm_verdict=verdict)
            self._add(changed, node, edge)
            added += 1
        node.expanded = True
        node.sensitivity_scores = self._sensitivity([self.nodes[c] for c in self._children[node_id]])
        return [self.nodes[c] for c in self._children[node_id]]

    def build(self, depth: int = 3, branching: int = 5) -> "PerturbationTree":
        if depth < 1 or branching < 1:
            raise TreeError(f"depth and branching must be at least 1 (got {depth}, {branching})")
        frontier = ["n0"]
        for _ in range(depth):
            next_frontier = []
            for node_id in frontier:
                if self.nodes[node_id].pruned:
                    continue
                next_frontier += [c.node_id for c in self.expand(node_id, branching)]
            frontier = next_frontier
        return self

    def edit(self, node_id: str, sheet: FactSheet | dict, description: str = "manual edit") -> TreeNode:
        """A hand-edited sheet as a new child of ``node_id``, retrieval run there."""
        parent = self.node(node_id)
        try:
            sheet = sheet if isinstance(sheet, FactSheet) else validate_sheet(sheet)
        except ValueError as error:
            raise TreeError(str(error)) from None
        edge = EdgeModel(fact_type="manual", path="", description=description, basis="user",
                         plausibility=1.0)
        return self._add(sheet, parent, edge)

    # ---------------------------------------------------------------- reading

    def node(self, node_id: str) -> TreeNode:
        """The node ``node_id``; an unknown id is a :class:`TreeError` naming the nodes."""
        if node_id not in self.nodes:
            raise TreeError(f"no node {node_id!r} in the tree (nodes: {', '.join(list(self.nodes)[:8])}"
                            f"{', ...' if len(self.nodes) > 8 else ''})")
        return self.nodes[node_id]

    def diff(self, a: str, b: str):
        first, second = self.node(a), self.node(b)
        return diff_rankings([r["doc_id"] for r in first.retrieval_results],
                             [r["doc_id"] for r in second.retrieval_results], self.k,
                             self.stable_below)

    @staticmethod
    def _sensitivity(nodes: list[TreeNode]) -> dict[str, float]:
        by_type: dict[str, list[float]] = defaultdict(list)
        for node in nodes:
            if node.edge is not None and node.diff_vs_parent is not None:
                by_type[node.edge.fact_type].append(node.diff_vs_parent.mean_displacement)
        return {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())}

    def sensitivity(self) -> dict[str, float]:
        """Per fact type: the mean displacement over all its edges in the tree."""
        return self._sensitivity(list(self.nodes.values()))

    # ---------------------------------------------------------------- JSON

    def to_model(self, params: dict[str, Any] | None = None) -> TreeModel:
        return TreeModel(case_id=self.root_sheet.case_id, query_construction=self.construction,
                         source_text=self.text, params=params or {"k": self.k, "granularity": self.granularity},
                         nodes=list(self.nodes.values()), sensitivity_scores=self.sensitivity(),
                         notes=self.notes)

    def to_json(self, params: dict[str, Any] | None = None) -> str:
        return self.to_model(params).model_dump_json(indent=1)

    @classmethod
    def from_json(cls, data: str, search: Search, edges: pd.DataFrame) -> "PerturbationTree":
        model = TreeModel.model_validate_json(data)
        root = next(n for n in model.nodes if n.parent_id is None)
        tree = cls.__new__(cls)
        tree.search, tree.edges, tree.k = search, edges, int(model.params.get("k", 10))
        tree.validator, tree.checked, tree.accepted = None, 0, 0
        tree.text, tree.construction = model.source_text, model.query_construction
        tree.granularity = str(model.params.get("granularity", "field"))
        tree.prune_below = float(model.params.get("prune_below", 0.5))
        tree.stable_below = int(model.params.get("stable_below", 3))
        tree.root_sheet = root.fact_sheet_state
        tree.notes = list(model.notes)
        tree.nodes = {n.node_id: n for n in model.nodes}
        tree._children = defaultdict(list)
        for n in model.nodes:
            if n.parent_id is not None:
                tree._children[n.parent_id].append(n.node_id)
        return tree


def write_schema() -> None:
    """``python -m countercase.perturb.tree`` rewrites the shipped schema from the model."""
    SCHEMA_PATH.write_text(json.dumps(TreeModel.model_json_schema(), indent=1, sort_keys=True)
                           + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_schema()

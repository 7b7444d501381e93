"""The ``explain`` stage: every node of every tree explained, every sentence re-verified.

Each tree of the ``perturb`` stage gets, at every node, an explanation of each result (keyed by
chunk id, :mod:`countercase.explain.results`) and, below the root, the counterfactual summary of
its edge (:mod:`countercase.explain.edges`) with, when the holding profiles and the citation
graph are given, the edge's citation-grounded targets and whether the ranking moved toward them
(:mod:`countercase.explain.toward`; counted in the metrics' ``targets``). The checker
(:func:`claims.verify`) then looks every claim up again in the sources; the metrics count
sentences, grounded sentences and faithfulness (grounded / sentences), per template. Term weights
are the IDF of each word over the precedent chunks.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError
from tqdm import tqdm

from countercase.datasets.ids import natural_key
from countercase.errors import CountercaseError
from countercase.explain.claims import Sentence, Sources, verify
from countercase.explain.edges import explain_edge
from countercase.explain.markdown import tree_markdown
from countercase.explain.results import TERM, explain_result
from countercase.explain.toward import explain_targets
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.store import read_sheets
from countercase.factsheet.values import sheet_values
from countercase.holdings.case_targets import Corpus, Finder, Inputs
from countercase.holdings.profile import Profile
from countercase.holdings.targets import Settings, contrast
from countercase.layout import CORPUS_TREES
from countercase.perturb.tree import TreeModel


class TreeFileError(CountercaseError, ValueError):
    """A tree JSON that is not a perturbation tree (the message names the failing path)."""


def term_weights(texts: Iterable[str]) -> dict[str, float]:
    """word -> IDF (log of documents over documents containing it), over ``texts``."""
    df: Counter = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update(set(TERM.findall(text.lower())))
    return {term: math.log(n / count) for term, count in df.items()}


class Explainer:
    def __init__(self, sheets: dict[str, FactSheet], chunks: dict[str, str],
                 weights: dict[str, float], profiles: dict[str, Profile] | None = None,
                 finder: Finder | None = None, settings: Settings = Settings()) -> None:
        self.sheets, self.chunks, self.weights = sheets, chunks, weights
        self.profiles = profiles or {}
        self.finder, self.settings = finder, settings

    def explain(self, tree: TreeModel) -> tuple[TreeModel, list[dict[str, Any]]]:
        """The tree with ``explanations`` and ``counterfactual_summary`` filled, and one record
        per sentence (node, template, the checker's problems)."""
        by_id = {n.node_id: n for n in tree.nodes}
        k = int(tree.params.get("k", 10))
        records, nodes = [], []
        for node in tree.nodes:
            started = time.perf_counter()
            sources = Sources(sheets={"query": node.fact_sheet_state},
                              chunks={"query": node.query}, profiles=self.profiles)
            values = sheet_values(node.fact_sheet_state, node.query)
            explanations = {}
            for result in node.retrieval_results:
                doc, chunk = result["doc_id"], result.get("chunk_id") or ""
                text = self.chunks.get(chunk, "")
                sources.sheets[doc] = self.sheets.get(doc)
                sources.metadata[doc] = result.get("metadata") or {}
                sources.chunks[chunk] = text
                found = explain_result(node.fact_sheet_state, node.query, doc, chunk, text,
                                       self.sheets.get(doc), sources.metadata[doc],
                                       self.weights.get, self.profiles.get(doc), values)
                explanations[chunk or doc] = [s.to_dict() for s in found]
                records += self._check(found, sources, tree.case_id, node.node_id, "result")
            summary = []
            if node.edge is not None and node.diff_vs_parent is not None:
                parent = by_id[node.parent_id]
                diff = node.diff_vs_parent.model_dump()
                ids = set(diff["dropped"]) | set(diff["new"])
                sheets = {d: self.sheets[d] for d in ids if d in self.sheets}
                metadata = {r["doc_id"]: r.get("metadata") or {}
                            for r in parent.retrieval_results + node.retrieval_results}
                edge = node.edge.model_dump()
                found = explain_edge(edge, diff, k, sheets, metadata, node.fact_sheet_state)
                edge_sources = Sources(sheets={**sheets, "node": node.fact_sheet_state},
                                       metadata=metadata, edge=edge, diff=diff)
                if self.finder is not None:
                    targets = self._targets(tree, parent.fact_sheet_state, node.edge)
                    toward = explain_targets(contrast(node.edge), targets, diff, k)
                    found += toward
                    edge_sources.targets = targets
                    records.append({"edge_targets": next(
                        (c.value for s in toward for c in s.claims if c.kind == "toward"), None)})
                summary = [s.to_dict() for s in found]
                records += self._check(found, edge_sources, tree.case_id, node.node_id, "edge")
            nodes.append(node.model_copy(update={"explanations": explanations,
                                                 "counterfactual_summary": summary}))
            records.append({"node_seconds": time.perf_counter() - started})
        return tree.model_copy(update={"nodes": nodes}), records

    def _targets(self, tree: TreeModel, sheet: FactSheet, edge) -> dict[str, Any]:
        found = self.finder.targets(tree.case_id, sheet, tree.source_text, edge, self.settings)
        return {"appear": list(found.appear), "drop": list(found.drop), "reason": found.reason}

    @staticmethod
    def _check(found: list[Sentence], sources: Sources, case_id: str, node_id: str,
               what: str) -> list[dict[str, Any]]:
        return [{"case_id": case_id, "node_id": node_id, "what": what, "template": s.template,
                 "claims": len(s.claims), "problems": verify(s, sources)} for s in found]


def faithfulness(records: list[dict[str, Any]]) -> dict[str, Any]:
    sentences = [r for r in records if "template" in r]
    grounded = [r for r in sentences if not r["problems"]]
    per_template = Counter(r["template"] for r in sentences)
    seconds = [r["node_seconds"] for r in records if "node_seconds" in r]
    edges = [r["edge_targets"] for r in records if "edge_targets" in r]
    moved = Counter(v for v in edges if v is not None)
    targets = {"edges": len(edges), "with_targets": sum(moved.values()),
               **{v: moved[v] for v in ("toward", "away", "neither")}} if edges else None
    return {"sentences": len(sentences), "grounded": len(grounded),
            "faithfulness": round(len(grounded) / len(sentences), 4) if sentences else None,
            "claims": sum(r["claims"] for r in sentences),
            "per_template": dict(sorted(per_template.items())),
            "failures": [r for r in sentences if r["problems"]][:20],
            "targets": targets,
            "nodes": len(seconds),
            "ms_per_node": round(1000 * sum(seconds) / len(seconds), 2) if seconds else None}


def read_tree(path: Path) -> TreeModel:
    """A tree JSON; one off its schema is an error naming the file and the failing path."""
    try:
        return TreeModel.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise TreeFileError(f"{path}: not a perturbation tree: {where}: {first['msg']}") from None


def open_explainer(sheets_path: Path, chunks_path: Path, grounds: Inputs | None = None,
                   settings: Settings = Settings()) -> Explainer:
    """The judgments' fact sheets, the chunk texts and their IDF weights; with ``grounds``
    (the citation collection, documents and holding profiles), the holdings each result turns
    on and each edge's citation-grounded targets, under ``settings``."""
    table = pd.read_parquet(chunks_path, columns=["chunk_id", "text"])
    chunks, weights = dict(zip(table["chunk_id"], table["text"])), term_weights(table["text"])
    if grounds is None:
        return Explainer({s.case_id: s for s in read_sheets(sheets_path)}, chunks, weights)
    corpus = Corpus(grounds)
    return Explainer(corpus.sheets, chunks, weights, corpus.profiles, corpus.finder, settings)


def run_explain(trees: Path, explainer: Explainer, out: Path,
                one: Path | None = None) -> dict[str, Any]:
    """Every ``trees/*.json`` explained into ``out`` (JSON and Markdown), or the tree ``one``
    into the Markdown file ``out``; the metrics."""
    if one is not None:
        explained, records = explainer.explain(read_tree(one))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(tree_markdown(explained), encoding="utf-8")
        return faithfulness(records)
    records = []
    paths = tree_paths(trees)
    for path in tqdm(paths, desc="explain", unit="tree"):
        explained, found = explainer.explain(read_tree(path))
        records += found
        target = out / path.relative_to(trees)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(explained.model_dump_json(indent=1), encoding="utf-8")
        target.with_suffix(".md").write_text(tree_markdown(explained), encoding="utf-8")
    report = faithfulness(records)
    report["trees"] = len(paths)
    return report


def tree_paths(trees: Path) -> list[Path]:
    """The AILA queries' trees, then the corpus cases' (``corpus/``), in id order."""
    def ordered(paths):
        return sorted(paths, key=lambda p: natural_key(p.stem))

    trees = Path(trees)
    return (ordered(trees.glob("AILA_Q*.json"))
            + ordered((trees / CORPUS_TREES.name).glob("*.json")))

"""A case in three lines: the facade notebooks (and the explorer) build on.

    from countercase.case import Case
    case = Case.from_query("AILA_Q30")     # or Case.from_id("C12"), Case.from_text("..."),
                                           # Case.from_sheet("sheet.json")
    tree = case.tree(depth=2, branching=4) # tree.diff("n0", "n0.1"), tree.edit("n0", {...}),
                                           # tree.to_markdown()

A :class:`Workspace` is what cases are searched with: the pipeline's outputs under a project
folder (found from the working directory upwards, so a notebook never changes directory) and its
``params.yaml``, opened once and shared by every case. A corpus judgment (``from_id``) is
searched as the validity experiment searches it: its facts window as the query, never itself nor
a judgment decided after it. In Jupyter a case shows its fact sheet with each value's confidence,
a result list its attribution, a diff its stable, dropped and new precedents coloured.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from countercase import layout
from countercase.config import load_params
from countercase.datasets.aila import read_queries
from countercase.errors import CountercaseError
from countercase.explain.markdown import tree_markdown
from countercase.explain.run import open_explainer
from countercase.extract.years import read_years
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import FactSheet, validate_sheet
from countercase.factsheet.show import SheetNotFoundError, case_text, find_sheet, sheet_rows
from countercase.holdings.case_targets import Inputs
from countercase.holdings.targets import Settings
from countercase.layout import IndexPaths
from countercase.ner.confidence import sheet_confidence
from countercase.perturb.cases import QueryCase, window
from countercase.perturb.query import structured_query
from countercase.perturb.run import retriever_search
from countercase.perturb.tree import PerturbationTree, TreeError
from countercase.retrieve.load import open_retriever
from countercase.retrieve.registry import tree_params
from countercase.retrieve.trees import searching, tree_ranker


class CaseError(CountercaseError, ValueError):
    """A case that cannot be made or searched as asked; the message names the input."""


def find_root(start: Path | None = None) -> Path:
    """The project folder: the first of ``start`` (default: the working directory) and its
    parents that holds ``params.yaml`` and ``dvc.yaml``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "params.yaml").is_file() and (folder / "dvc.yaml").is_file():
            return folder
    raise CaseError(f"no project (params.yaml and dvc.yaml) in {here} or above it")


@dataclass
class Workspace:
    """The indexes, adjacency map, fact sheets and parameters cases are searched with; ``system``:
    the system of ``configs/systems.yaml`` the trees search (default: ``perturb.system``)."""

    root: Path = field(default_factory=find_root)
    system: str | None = None

    def path(self, relative: Path) -> Path:
        return Path(self.root) / relative

    @cached_property
    def params(self):
        return searching(load_params(self.path(Path("params.yaml"))), self.system)

    @cached_property
    def index_paths(self):
        return IndexPaths(*(self.path(p) for p in (layout.INDEX, layout.DENSE, layout.CHUNKS,
                                                   layout.METADATA, layout.FACT_INDEX)))

    @cached_property
    def retriever(self):
        """What the trees search: the learned system, or the pipeline as the trees run it."""
        return tree_ranker(self.params, self.index_paths, open_retriever(
            "precedents", tree_params(self.params), self.index_paths), Path(self.root))

    @cached_property
    def edges(self) -> pd.DataFrame:
        path = self.path(layout.SECTION_EDGES)
        if not path.is_file():
            raise CaseError(f"no section adjacency map at {path}: run `dvc repro adjacency`")
        return pd.read_parquet(path)

    @cached_property
    def explainer(self):
        sheets, chunks = self.path(layout.JUDGMENT_SHEETS), self.index_paths.chunks
        grounds = Inputs(*(self.path(p) for p in (layout.CITATIONS, layout.DOCUMENTS,
                                                  layout.JUDGMENT_SHEETS, layout.METADATA,
                                                  layout.SECTION_EDGES, layout.HOLDING_PROFILES)))
        if not (grounds.profiles.is_file() and grounds.citations.exists()):
            return open_explainer(sheets, chunks)  # built before stages holdings and citations
        return open_explainer(sheets, chunks, grounds, Settings.of(self.params.targets))

    def query_text(self, qid: str) -> str:
        queries = read_queries(self.path(layout.AILA_QUERIES))
        if qid not in queries:
            raise CaseError(f"no AILA query {qid!r} (AILA_Q1 .. AILA_Q{len(queries)})")
        return queries[qid]


@dataclass
class Case:
    case_id: str
    sheet: FactSheet
    text: str | None  # None: a structured case, searched by its sheet alone
    workspace: Workspace = field(default_factory=Workspace, repr=False)
    corpus: bool = False  # a corpus judgment: never returned itself, nor anything decided later
    year: int | None = None

    # ------------------------------------------------------------------ making one

    @classmethod
    def from_text(cls, text: str, case_id: str = "text",
                  workspace: Workspace | None = None) -> "Case":
        if not text or not text.strip():
            raise CaseError("empty text: give the facts of a case")
        return cls(case_id, extract_rules(text, case_id, "text"), text, workspace or Workspace())

    @classmethod
    def from_query(cls, qid: str, workspace: Workspace | None = None) -> "Case":
        workspace = workspace or Workspace()
        text = workspace.query_text(qid)
        return cls(qid, extract_rules(text, qid, "query"), text, workspace)

    @classmethod
    def from_id(cls, doc_id: str, workspace: Workspace | None = None) -> "Case":
        """A corpus judgment: its stage fact sheet, its facts window as the query."""
        workspace = workspace or Workspace()
        try:
            sheet = find_sheet(doc_id, workspace.path(layout.FACTSHEETS))
        except SheetNotFoundError as error:
            raise CaseError(str(error)) from None
        text = case_text(doc_id, workspace.path(layout.AILA_QUERIES),
                         workspace.path(layout.DOCUMENTS))
        if text is None:
            raise CaseError(f"no text of {doc_id!r} in {workspace.path(layout.DOCUMENTS)}")
        text, sheet = window(text, sheet, workspace.params.perturb.case_chars)
        year = read_years(workspace.index_paths.metadata).get(doc_id)
        return cls(doc_id, sheet, text, workspace, True, year)

    @classmethod
    def from_sheet(cls, sheet: Path | str | dict | FactSheet,
                   workspace: Workspace | None = None) -> "Case":
        """A fact sheet (a file, a mapping or a model), searched as a structured query."""
        try:
            if isinstance(sheet, (str, Path)):
                sheet = json.loads(Path(sheet).read_text(encoding="utf-8"))
            sheet = sheet if isinstance(sheet, FactSheet) else validate_sheet(sheet)
        except (OSError, ValueError) as error:  # json and schema errors are ValueErrors
            raise CaseError(f"not a fact sheet: {error}") from None
        return cls(sheet.case_id, sheet, None, workspace or Workspace())

    def corrected(self, changes: dict[str, Any]) -> "Case":
        """The same case with its sheet corrected by hand (a partial sheet merged into it,
        validated), as before a tree is built; the text is searched as it was."""
        try:
            sheet = validate_sheet(_merged(self.sheet.model_dump(mode="json"), changes))
        except ValueError as error:
            raise CaseError(f"correction of {self.case_id}: {error}") from None
        return Case(self.case_id, sheet, self.text, self.workspace, self.corpus, self.year)

    # ------------------------------------------------------------------ using one

    def _search(self):
        corpus = (QueryCase(self.case_id, self.text or "", self.sheet, self.year)
                  if self.corpus else None)
        return retriever_search(self.workspace.retriever, corpus)

    def search(self, k: int = 10) -> "Results":
        """The top ``k`` precedents for the case's query (its text, or its sheet as words)."""
        query = self.text if self.text is not None else structured_query(self.sheet)
        return Results(self._search()(query, self.sheet, k))

    def tree(self, depth: int | None = None, branching: int | None = None) -> "Tree":
        """The case's perturbation tree; ``depth=0``: the root alone, to expand by hand."""
        p = self.workspace.params.perturb
        depth = p.depth if depth is None else depth
        if depth < 0:
            raise CaseError(f"a tree's depth is 0 or more (got {depth})")
        built = PerturbationTree(self.sheet, self._search(), self.workspace.edges, p.k,
                                 text=self.text, prune_below=p.prune_below,
                                 granularity=p.granularity)
        if depth:
            built.build(depth, p.branching if branching is None else branching)
        return Tree(built, self)

    def facts(self) -> pd.DataFrame:
        """The fact sheet: one row per value, with its sources and confidence."""
        rows = pd.DataFrame(sheet_rows(self.sheet), columns=["field", "value", "from the text"])
        queues: dict[str, list] = {}
        for value in sheet_confidence(self.sheet)["values"]:
            queues.setdefault(value.field, []).append(value)
        shown = []
        for name, value in zip(rows["field"], rows["value"]):
            queue = queues.get(name, [])
            found = queue.pop(0) if queue and value != "Unknown" else None
            shown.append("" if found is None else found.level if found.score is None
                         else f"{found.score:.2f} {found.level}")
        rows["confidence"] = shown
        return rows

    def _repr_html_(self) -> str:
        return (f"<b>{self.case_id}</b> ({self.sheet.source}, facts located by "
                f"{self.sheet.facts_located_by})" + self.facts().to_html(index=False))


class Results(list):
    """Ranked precedents, each a mapping with its attribution; a table in Jupyter."""

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([{"rank": r["rank"], "judgment": r["doc_id"],
                              "year": r["metadata"].get("year"),
                              "section": r["section_type"], "page": r["page_number"],
                              "fused score": r["scores"].get("rrf")} for r in self])

    def _repr_html_(self) -> str:
        return self.table().to_html(index=False)


_STATUS_COLOURS = {"stable": "#000000", "dropped": "#b00020", "new": "#1b7f3b"}


class Tree:
    """A built perturbation tree of a case, to read, extend and export."""

    def __init__(self, tree, case: Case) -> None:
        self.tree, self.case = tree, case

    @property
    def nodes(self) -> pd.DataFrame:
        return pd.DataFrame([{"node": n.node_id, "depth": n.depth,
                              "change": n.edge.description if n.edge else "(the case)",
                              "fact type": n.edge.fact_type if n.edge else "",
                              "mean displacement": (n.diff_vs_parent.mean_displacement
                                                    if n.diff_vs_parent else None),
                              "pruned": n.pruned} for n in self.tree.nodes.values()])

    def sensitivity(self) -> dict[str, float]:
        return self.tree.sensitivity()

    def diff(self, a: str, b: str) -> pd.DataFrame:
        """Each precedent in either top k: its status and its rank in both lists."""
        found = self.tree.diff(a, b)
        first = [r["doc_id"] for r in self.tree.node(a).retrieval_results]
        second = [r["doc_id"] for r in self.tree.node(b).retrieval_results]
        rows = []
        for doc in dict.fromkeys(first + second):
            status = ("stable" if doc in first and doc in second
                      else "dropped" if doc in first else "new")
            rows.append({"judgment": doc, "status": status,
                         f"rank in {a}": first.index(doc) + 1 if doc in first else None,
                         f"rank in {b}": second.index(doc) + 1 if doc in second else None})
        table = pd.DataFrame(rows)
        table.attrs["mean_displacement"] = found.mean_displacement
        return table

    def show_diff(self, a: str, b: str):
        """:meth:`diff` coloured for Jupyter: dropped red, new green."""
        return self.diff(a, b).style.apply(
            lambda row: [f"color: {_STATUS_COLOURS[row['status']]}"] * len(row), axis=1)

    def edit(self, node_id: str, changes: dict[str, Any],
             description: str = "manual edit") -> str:
        """A child of ``node_id`` whose sheet is the node's with ``changes`` (fields of the
        fact sheet, nested mappings merged, lists replaced); retrieval runs there. Returns the
        new node's id."""
        base = self.tree.node(node_id).fact_sheet_state.model_dump(mode="json")
        try:
            node = self.tree.edit(node_id, _merged(base, changes), description)
        except TreeError as error:
            raise CaseError(f"edit of {node_id}: {error}") from None
        return node.node_id

    def expand(self, node_id: str, branching: int | None = None) -> list[str]:
        p = self.case.workspace.params.perturb
        return [n.node_id for n in self.tree.expand(node_id, branching or p.branching)]

    def to_model(self, explained: bool = True):
        model = self.tree.to_model()
        return self.case.workspace.explainer.explain(model)[0] if explained else model

    def to_json(self, explained: bool = True) -> str:
        return self.to_model(explained).model_dump_json(indent=1)

    def to_markdown(self) -> str:
        return tree_markdown(self.to_model())

    def _repr_html_(self) -> str:
        return (f"<b>tree of {self.case.case_id}</b>: {len(self.tree.nodes)} nodes; "
                f"sensitivity {self.sensitivity()}" + self.nodes.to_html(index=False))


def _merged(base: dict, changes: dict) -> dict:
    out = dict(base)
    for key, value in changes.items():
        if key not in base:
            raise CaseError(f"no field {key!r} in a fact sheet (fields: {', '.join(base)})")
        out[key] = (_merged(base[key], value) if isinstance(value, dict)
                    and isinstance(base[key], dict) else value)
    return out

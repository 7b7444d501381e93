"""What the explorer holds between clicks: one case, its tree and the node in view.

Everything the page shows or changes goes through :class:`Explorer`, which knows nothing of the
web framework, so the whole interaction is testable without a browser. A failing action
(an unknown case id, an empty text, an invalid edit) raises :class:`CaseError` with a message
for the page and leaves the case, the tree and the node in view as they were.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from countercase import layout
from countercase.case import Case, CaseError, Tree, Workspace
from countercase.extract.act_sections import UnknownSectionError, parse_section_id
from countercase.factsheet.schema import EVIDENCE_TYPES, FactSheet
from countercase.ingest.run import read_documents
from countercase.ner.confidence import HIGH, sheet_confidence
from countercase.perturb.tree import TreeError

KINDS = {"query": "AILA query id", "judgment": "corpus judgment id", "text": "pasted text",
         "sheet": "fact sheet file"}
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(years?|months?|weeks?|days?|hours?)\s*$", re.I)
_EVIDENCE_BY_LOWER = {e.lower(): e for e in EVIDENCE_TYPES}


# ---------------------------------------------------------------------- the sheet as a form

def form_values(sheet: FactSheet) -> dict[str, str]:
    """A sheet's facts as the form's fields: one string per field, lists comma-separated."""
    facts = sheet.numerical_facts
    return {"petitioner": sheet.parties.petitioner.type,
            "respondent": sheet.parties.respondent.type,
            "sections": ", ".join(s.section_id for s in sheet.sections_cited),
            "evidence": ", ".join(e.evidence_type for e in sheet.evidence_items),
            "ages": ", ".join(f"{a.years:g}" for a in facts.ages),
            "amounts": ", ".join(f"{a.value:g}" for a in facts.amounts),
            "durations": ", ".join(f"{d.value:g} {d.unit}" for d in facts.durations),
            "outcome": sheet.outcome}


def changed_fields(sheet: FactSheet, values: dict[str, str]) -> list[str]:
    before = form_values(sheet)
    return [k for k, v in values.items() if k in before and v.strip() != before[k].strip()]


def _items(text: str) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _number(field_name: str, item: str) -> float:
    try:
        value = float(item.replace("_", ""))
    except ValueError:
        raise CaseError(f"{field_name}: {item!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        raise CaseError(f"{field_name}: {item!r} is not a number of zero or more")
    return value


def _kept(old: list[dict], key, wanted: list, make) -> list[dict]:
    """``wanted`` keys as items: an old item with the same key is kept (its span and
    extractor), a new one is made by hand."""
    pool = {}
    for item in old:
        pool.setdefault(key(item), []).append(item)
    return [pool[k].pop(0) if pool.get(k) else make(k) for k in wanted]


def sheet_changes(sheet: FactSheet, values: dict[str, str]) -> dict[str, Any]:
    """The changes the form's ``values`` make to ``sheet``, as a partial sheet for
    :meth:`countercase.case.Tree.edit`; a field left as it was is not in it. A value that
    cannot be read raises :class:`CaseError` naming the field."""
    before, base = form_values(sheet), sheet.model_dump(mode="json")
    unknown = set(values) - set(before)
    if unknown:
        raise CaseError(f"no field {sorted(unknown)[0]!r} in the form (fields: {', '.join(before)})")
    changed = set(changed_fields(sheet, values))
    changes: dict[str, Any] = {}
    manual = {"span": None, "extractor": "manual"}
    for side in ("petitioner", "respondent"):
        if side in changed:
            changes.setdefault("parties", {})[side] = {"type": values[side].strip(), **manual}
    if "sections" in changed:
        wanted = []
        for item in _items(values["sections"]):
            try:
                wanted.append(parse_section_id(item))
            except UnknownSectionError as error:
                raise CaseError(f"sections: {error}") from None
        changes["sections_cited"] = _kept(base["sections_cited"], lambda s: s["section_id"],
                                          wanted, lambda k: {"section_id": k, **manual})
    if "evidence" in changed:
        wanted = []
        for item in _items(values["evidence"]):
            if item.lower() not in _EVIDENCE_BY_LOWER:
                raise CaseError(f"evidence: {item!r} is not an evidence type "
                                f"({', '.join(EVIDENCE_TYPES)})")
            wanted.append(_EVIDENCE_BY_LOWER[item.lower()])
        changes["evidence_items"] = _kept(
            base["evidence_items"], lambda e: e["evidence_type"], wanted,
            lambda k: {"evidence_type": k, "description": f"{k} (entered by hand)", **manual})
    facts = base["numerical_facts"]
    numerical: dict[str, list] = {}
    if "ages" in changed:
        wanted = [_number("ages", item) for item in _items(values["ages"])]
        numerical["ages"] = _kept(facts["ages"], lambda a: a["years"], wanted,
                                  lambda k: {"years": k, "descriptor": None, **manual})
    if "amounts" in changed:
        wanted = [_number("amounts", item) for item in _items(values["amounts"])]
        numerical["amounts"] = _kept(facts["amounts"], lambda a: a["value"], wanted,
                                     lambda k: {"value": k, **manual})
    if "durations" in changed:
        wanted = []
        for item in _items(values["durations"]):
            found = DURATION.match(item)
            if not found:
                raise CaseError(f"durations: {item!r} is not a number and a unit (e.g. '7 years')")
            unit = found.group(2).lower()
            wanted.append((float(found.group(1)), unit if unit.endswith("s") else unit + "s"))
        numerical["durations"] = _kept(facts["durations"], lambda d: (d["value"], d["unit"]),
                                       wanted, lambda k: {"value": k[0], "unit": k[1], **manual})
    if numerical:
        changes["numerical_facts"] = numerical
    if "outcome" in changed:
        changes["outcome"] = values["outcome"].strip()
    return changes


def confidence_rows(sheet: FactSheet) -> list[dict[str, Any]]:
    """Each value of the sheet with who found it and how sure that is; a value below the
    high level (found by one extractor alone, or low) is flagged for review."""
    return [{"field": v.field, "value": v.value, "found by": ", ".join(v.found_by),
             "score": v.score, "level": v.level,
             "review": v.score is not None and v.score < HIGH}
            for v in sheet_confidence(sheet)["values"]]


# ---------------------------------------------------------------------- the session

class Judgments:
    """The corpus as a reader sees it, shared by every session of a server: each judgment's
    citation, the address of its source and its text."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    @cached_property
    def _metadata(self) -> pd.DataFrame:
        path = self.workspace.path(layout.METADATA)
        columns = ["doc_id", "year", "petitioner", "respondent", "citation_string", "source_path"]
        return pd.read_parquet(path, columns=columns).set_index("doc_id")

    @cached_property
    def _texts(self) -> dict[str, str]:
        return {d.doc_id: d.text for d in read_documents(self.workspace.path(layout.DOCUMENTS))}

    def citation(self, doc_id: str) -> str:
        """Parties, year and reporter citation where known."""
        if doc_id not in self._metadata.index:
            return doc_id
        row = self._metadata.loc[doc_id]
        known = {k: row[k] for k in ("petitioner", "respondent", "citation_string")
                 if pd.notna(row[k]) and str(row[k]).strip()}  # a missing value is NaN
        parties = " v. ".join(str(known[k]) for k in ("petitioner", "respondent") if k in known)
        year = f" ({int(row['year'])})" if pd.notna(row["year"]) else ""
        cited = f", {known['citation_string']}" if "citation_string" in known else ""
        return f"{parties or doc_id}{year}{cited}"

    def pdf(self, doc_id: str) -> Path | None:
        """The judgment's source PDF, where it was ingested from one that is still there."""
        if doc_id not in self._metadata.index:
            return None
        path = Path(str(self._metadata.loc[doc_id, "source_path"] or ""))
        path = path if path.is_absolute() else self.workspace.root / path
        return path if path.suffix.lower() == ".pdf" and path.is_file() else None

    def link(self, doc_id: str, page: int | None) -> str:
        """The app's address of a judgment's source: its PDF at the page, else its text."""
        return f"/source/{doc_id}#page={page or 1}" if self.pdf(doc_id) else f"/source/{doc_id}"

    def text(self, doc_id: str) -> str | None:
        return self._texts.get(doc_id)


@dataclass
class Explorer:
    workspace: Workspace
    judgments: Judgments
    case: Case | None = None
    tree: Tree | None = None
    selected: str | None = None
    branching: int | None = None  # children per expansion, as the tree was built
    _explained: dict[str, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ a case

    def load(self, kind: str, value: str) -> Case:
        """A case from one of :data:`KINDS`; the tree of the previous case is dropped only
        when the new one loads."""
        value = value if isinstance(value, str) else ""
        if kind not in KINDS:
            raise CaseError(f"unknown kind of case {kind!r} (one of: {', '.join(KINDS)})")
        if kind != "text" and not value.strip():
            raise CaseError(f"give a {KINDS[kind]}")
        if kind == "query":
            case = Case.from_query(value.strip(), self.workspace)
        elif kind == "judgment":
            case = Case.from_id(value.strip(), self.workspace)
        elif kind == "text":
            case = Case.from_text(value, "text", self.workspace)
        else:
            try:
                data = json.loads(value)
            except ValueError as error:
                raise CaseError(f"the fact sheet file is not JSON: {error}") from None
            if not isinstance(data, dict):
                raise CaseError("the fact sheet file holds no JSON object")
            case = Case.from_sheet(data, self.workspace)
        self.case, self.tree, self.selected = case, None, None
        self._explained.clear()
        return case

    def open(self, tree: Tree) -> "Explorer":
        """A tree built elsewhere (a notebook's ``case.tree()``), its root in view."""
        self.case, self.tree, self.selected = tree.case, tree, "n0"
        self._explained.clear()
        return self

    def review(self, values: dict[str, str]) -> FactSheet:
        """The case's sheet corrected by hand before a tree is built."""
        case = self._need_case()
        changes = sheet_changes(case.sheet, values)
        if changes:
            self.case = case.corrected(changes)
        return self.case.sheet

    def build(self, depth: int = 1, branching: int | None = None) -> Tree:
        case = self._need_case()
        if branching is not None and branching < 1:
            raise CaseError(f"branching must be 1 or more (got {branching})")
        self.tree, self.selected = case.tree(depth, branching), "n0"
        self.branching = branching
        self._explained.clear()
        return self.tree

    # ------------------------------------------------------------------ a tree

    def select(self, node_id: str) -> str:
        self._node(node_id)
        self.selected = node_id
        return node_id

    def expand(self, node_id: str | None = None) -> list[str]:
        node_id = node_id or self.selected or "n0"
        self._node(node_id)
        return self._need_tree().expand(node_id, self.branching)

    def edit(self, values: dict[str, str], node_id: str | None = None,
             description: str = "") -> str:
        """A child of the node (default: the one in view) with the form's changes; retrieval
        runs there and the child comes into view."""
        node_id = node_id or self.selected or "n0"
        sheet = self._node(node_id).fact_sheet_state
        changes = sheet_changes(sheet, values)
        if not changes:
            raise CaseError("the edit changes nothing: change a value of the form first")
        what = description.strip() or "manual edit: " + ", ".join(
            f"{k} = {values[k]}" for k in values if k in changed_fields(sheet, values))
        self.selected = self._need_tree().edit(node_id, changes, what)
        return self.selected

    def graph(self) -> list[dict[str, Any]]:
        """The nodes as the page draws them, parents before children."""
        tree = self._need_tree().tree
        return [{"id": n.node_id, "parent": n.parent_id, "depth": n.depth,
                 "label": n.edge.description if n.edge else f"{self.case.case_id} (the case)",
                 "type": n.edge.fact_type if n.edge else "root",
                 "displacement": n.diff_vs_parent.mean_displacement if n.diff_vs_parent else None,
                 "pruned": n.pruned, "expanded": n.expanded}
                for n in tree.nodes.values()]

    def sensitivity(self) -> dict[str, float]:
        return self._need_tree().sensitivity()

    def side_by_side(self, node_id: str | None = None) -> dict[str, Any]:
        """The node's results beside its parent's: each precedent's status, its rank in both
        lists and its displacement."""
        node = self._node(node_id or self.selected or "n0")
        if node.parent_id is None:
            return {"parent": None, "node": node.node_id, "rows": []}
        parent = self._node(node.parent_id)
        before = [r["doc_id"] for r in parent.retrieval_results]
        after = [r["doc_id"] for r in node.retrieval_results]
        diff = node.diff_vs_parent
        rows = []
        for doc in dict.fromkeys(before + after):
            status = ("stable" if doc in before and doc in after
                      else "dropped" if doc in before else "new")
            rows.append({"doc_id": doc, "status": status, "citation": self.judgments.citation(doc),
                         "rank_parent": before.index(doc) + 1 if doc in before else None,
                         "rank_node": after.index(doc) + 1 if doc in after else None,
                         "displacement": diff.displacement.get(doc) if diff else None})
        return {"parent": parent.node_id, "node": node.node_id, "rows": rows,
                "mean_displacement": diff.mean_displacement if diff else None,
                "change": node.edge.description if node.edge else "",
                "rule": node.edge.rule if node.edge else "",
                "scope": node.edge.scope if node.edge else "",
                "source": node.edge.basis if node.edge else ""}

    def results(self, node_id: str | None = None) -> list[dict[str, Any]]:
        """The node's precedents, each with its best chunk, where it lies and its explanation."""
        node = self._node(node_id or self.selected or "n0")
        explained = self._explanations(node.node_id)
        chunks = self.workspace.explainer.chunks
        return [{"rank": r["rank"], "doc_id": r["doc_id"], "citation": self.judgments.citation(r["doc_id"]),
                 "chunk_id": r.get("chunk_id"), "chunk": chunks.get(r.get("chunk_id") or "", ""),
                 "section_type": r.get("section_type"), "page": r.get("page_number"),
                 "source": self.judgments.link(r["doc_id"], r.get("page_number")),
                 "explanation": [s["text"] for s in
                                 explained.get(r.get("chunk_id") or r["doc_id"], [])]}
                for r in node.retrieval_results]

    def summary(self, node_id: str | None = None) -> list[str]:
        """The edge's counterfactual summary into the node, as sentences."""
        node = self._node(node_id or self.selected or "n0")
        self._explanations(node.node_id)
        return [s["text"] for s in self._explained[node.node_id]["summary"]]

    # ------------------------------------------------------------------ exports

    def export_json(self) -> str:
        return self._need_tree().to_json()

    def export_markdown(self) -> str:
        return self._need_tree().to_markdown()

    # ------------------------------------------------------------------ inside

    def _need_case(self) -> Case:
        if self.case is None:
            raise CaseError("load a case first")
        return self.case

    def _need_tree(self) -> Tree:
        if self.tree is None:
            raise CaseError("build the tree first")
        return self.tree

    def _node(self, node_id: str):
        try:
            return self._need_tree().tree.node(node_id)
        except TreeError as error:
            raise CaseError(str(error)) from None

    def _explanations(self, node_id: str) -> dict[str, Any]:
        """The node's explanations, computed when it first comes into view (a node's results
        never change, so once is enough)."""
        if node_id not in self._explained:
            tree = self._need_tree()
            node = self._node(node_id)
            model = tree.tree.to_model()
            # the node and its parent, which is shown as a root (its own edge needs its parent)
            part = [n if n.node_id == node_id else n.model_copy(update={
                "edge": None, "diff_vs_parent": None, "parent_id": None})
                for n in model.nodes if n.node_id in (node_id, node.parent_id)]
            explained, _ = self.workspace.explainer.explain(model.model_copy(update={"nodes": part}))
            found = next(n for n in explained.nodes if n.node_id == node_id)
            self._explained[node_id] = {"results": found.explanations,
                                        "summary": found.counterfactual_summary}
        return self._explained[node_id]["results"]

"""The case facade on a small real project: thirty AILA judgments through ingest, extract and
index, their rule fact sheets and the section adjacency map, laid out as the pipeline lays them
out, searched and perturbed as a notebook would."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from countercase import layout
from countercase.case import Case, CaseError, Workspace, find_root

JUDGMENTS = [f"C{i}" for i in range(1, 31)]  # the project fixture's judgments (conftest)


@pytest.fixture(scope="module")
def workspace(project) -> Workspace:
    return Workspace(project)


def test_the_project_is_found_from_a_folder_inside_it(workspace):
    inner = workspace.root / layout.EXTRACT
    assert find_root(inner) == workspace.root.resolve()
    with pytest.raises(CaseError, match="no project"):
        find_root(workspace.root.parent)


def test_a_query_case_shows_its_sheet_and_finds_precedents(workspace):
    case = Case.from_query("AILA_Q30", workspace)
    assert case.sheet.case_id == "AILA_Q30" and case.text == workspace.query_text("AILA_Q30")
    facts = case.facts()
    assert {"field", "value", "confidence"} <= set(facts.columns)
    assert set(facts["field"]) >= {"petitioner", "respondent", "outcome"}
    assert "AILA_Q30" in case._repr_html_()
    found = case.search(k=5)
    assert [r["rank"] for r in found] == [1, 2, 3, 4, 5]
    assert set(found.table()["judgment"]) <= set(JUDGMENTS)
    assert "<table" in found._repr_html_()


def test_a_corpus_judgment_is_searched_leave_one_out(workspace):
    case = Case.from_id("C5", workspace)
    years = pd.read_parquet(workspace.index_paths.metadata).set_index("doc_id")["year"]
    found = case.search(k=20)
    assert found and "C5" not in {r["doc_id"] for r in found}
    assert all(years[r["doc_id"]] <= case.year for r in found)


def test_a_tree_reads_diffs_edits_and_exports(workspace):
    tree = Case.from_query("AILA_Q30", workspace).tree(depth=1, branching=3)
    nodes = tree.nodes
    assert nodes.iloc[0]["node"] == "n0" and 1 < len(nodes) <= 4
    child = nodes.iloc[1]["node"]
    diff = tree.diff("n0", child)
    assert set(diff["status"]) <= {"stable", "dropped", "new"}
    assert len(diff) >= len(tree.tree.nodes["n0"].retrieval_results)
    dropped = diff[diff["status"] == "dropped"]
    assert dropped[f"rank in {child}"].isna().all()
    added = tree.edit("n0", {"outcome": "Allowed"}, "the appeal allowed")
    assert added in set(tree.nodes["node"]) and tree.tree.nodes[added].fact_sheet_state.outcome == "Allowed"
    with pytest.raises(CaseError, match="no field 'verdict'"):
        tree.edit("n0", {"verdict": "guilty"})
    with pytest.raises(CaseError, match="edit of n0"):
        tree.edit("n0", {"outcome": "Won"})
    exported = json.loads(tree.to_json())
    assert len(exported["nodes"]) == len(tree.tree.nodes)
    assert exported["nodes"][0]["explanations"]  # each result of the root explained
    assert "n0" in tree.to_markdown()


def test_bad_cases_are_named(workspace, tmp_path):
    with pytest.raises(CaseError, match="empty text"):
        Case.from_text("  ", workspace=workspace)
    with pytest.raises(CaseError, match="AILA_Q99"):
        Case.from_query("AILA_Q99", workspace)
    with pytest.raises(CaseError, match="C9999"):
        Case.from_id("C9999", workspace)
    bad = tmp_path / "sheet.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CaseError, match="not a fact sheet"):
        Case.from_sheet(bad, workspace)
    sheet = Case.from_query("AILA_Q30", workspace).sheet.model_dump(mode="json")
    structured = Case.from_sheet(sheet, workspace)
    assert structured.text is None and structured.search(k=3)

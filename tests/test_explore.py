"""The explorer's session and panels on the small real project (conftest ``project``): every
action a page offers, its messages for bad input, and that a failing action changes nothing."""

from __future__ import annotations

import json
from html import escape

import pandas as pd
import pytest

from countercase import layout
from countercase.case import CaseError, Workspace
from countercase.explore import render
from countercase.explore.session import (Explorer, Judgments, confidence_rows, form_values,
                                         sheet_changes)
from countercase.perturb.tree import TreeModel


@pytest.fixture(scope="module")
def workspace(project) -> Workspace:
    return Workspace(project)


@pytest.fixture
def explorer(workspace) -> Explorer:
    return Explorer(workspace, Judgments(workspace))


@pytest.fixture(scope="module")
def grown(workspace) -> Explorer:
    """AILA_Q30 with a tree of depth 1, as after Load and Build."""
    found = Explorer(workspace, Judgments(workspace))
    found.load("query", "AILA_Q30")
    found.build(depth=1, branching=3)
    return found


def test_a_case_loads_from_each_kind_of_input(explorer, workspace, tmp_path):
    assert explorer.load("query", " AILA_Q30 ").case_id == "AILA_Q30"
    assert explorer.load("judgment", "C5").corpus
    text = workspace.query_text("AILA_Q12")
    assert explorer.load("text", text).text == text
    sheet = explorer.case.sheet.model_dump_json()
    loaded = explorer.load("sheet", sheet)
    assert loaded.text is None and loaded.sheet == explorer.case.sheet


@pytest.mark.parametrize("kind, value, named", [
    ("query", "AILA_Q99", "AILA_Q99"), ("judgment", "C9999", "C9999"), ("text", "   ", "empty text"),
    ("sheet", "{not json", "not JSON"), ("sheet", "[1, 2]", "no JSON object"),
    ("sheet", '{"case_id": "x"}', "not a fact sheet"), ("query", "", "give a AILA query id"),
    ("court", "x", "unknown kind")])
def test_a_bad_case_is_named_and_the_loaded_one_stays(explorer, kind, value, named):
    explorer.load("query", "AILA_Q30")
    explorer.build(depth=0)
    with pytest.raises(CaseError, match=named):
        explorer.load(kind, value)
    assert explorer.case.case_id == "AILA_Q30" and explorer.tree is not None


def test_the_form_round_trips_and_reads_changes(workspace):
    sheet = Explorer(workspace, Judgments(workspace)).load("query", "AILA_Q30").sheet
    values = form_values(sheet)
    assert sheet_changes(sheet, values) == {}
    edited = {**values, "ages": "17, 45", "evidence": "dyingdeclaration, EyeWitness",
              "durations": "7 year, 3 months", "sections": "ipc 302, Section 34 IPC",
              "petitioner": "Minor"}
    changes = sheet_changes(sheet, edited)
    assert [a["years"] for a in changes["numerical_facts"]["ages"]] == [17.0, 45.0]
    assert [e["evidence_type"] for e in changes["evidence_items"]] == ["DyingDeclaration",
                                                                      "EyeWitness"]
    assert changes["numerical_facts"]["durations"][0] == {
        "value": 7.0, "unit": "years", "span": None, "extractor": "manual"}
    assert [s["section_id"] for s in changes["sections_cited"]] == ["IPC-302", "IPC-34"]
    assert changes["parties"]["petitioner"]["type"] == "Minor"
    assert "amounts" not in changes.get("numerical_facts", {})
    # a value kept keeps its span and extractor
    if sheet.sections_cited:
        first = sheet.sections_cited[0]
        kept = sheet_changes(sheet, {**values, "sections": values["sections"] + ", IPC-120B"})
        assert kept["sections_cited"][0] == first.model_dump(mode="json")


@pytest.mark.parametrize("field, value, named", [
    ("ages", "seventeen", "ages: 'seventeen' is not a number"),
    ("ages", "-3", "zero or more"), ("amounts", "nan", "zero or more"),
    ("durations", "7 fortnights", "durations: '7 fortnights'"),
    ("sections", "IPC-99999x", "sections:"), ("evidence", "Rumour", "not an evidence type"),
    ("verdict", "guilty", "no field 'verdict'")])
def test_a_bad_form_value_is_named(workspace, field, value, named):
    sheet = Explorer(workspace, Judgments(workspace)).load("query", "AILA_Q30").sheet
    with pytest.raises(CaseError, match=named):
        sheet_changes(sheet, {**form_values(sheet), field: value})


def test_confidence_flags_what_one_extractor_alone_found(workspace):
    sheet = Explorer(workspace, Judgments(workspace)).load("query", "AILA_Q30").sheet
    rows = confidence_rows(sheet)
    assert rows and all(r["review"] == (r["score"] is not None and r["score"] < 0.75) for r in rows)
    assert all(r["found by"] == "rules" and r["review"] for r in rows)  # rules alone: 0.6
    html = render.confidence_table(rows)
    assert html.count("cc-review") == len(rows) and "review" in html


def test_review_corrects_the_sheet_before_the_tree(explorer):
    explorer.load("query", "AILA_Q30")
    values = {**form_values(explorer.case.sheet), "outcome": "Allowed"}
    assert explorer.review(values).outcome == "Allowed"
    assert explorer.case.text is not None  # the text is still the query
    with pytest.raises(CaseError, match="build the tree first"):
        explorer.expand()


def test_a_tree_is_drawn_opened_and_diffed(grown):
    graph = grown.graph()
    assert graph[0]["id"] == "n0" and graph[0]["parent"] is None
    assert {n["parent"] for n in graph[1:]} == {"n0"} and 1 < len(graph) <= 4
    child = graph[1]["id"]
    assert grown.select(child) == child
    diff = grown.side_by_side()
    parent = [r["doc_id"] for r in grown.tree.tree.node("n0").retrieval_results]
    node = [r["doc_id"] for r in grown.tree.tree.node(child).retrieval_results]
    assert {r["doc_id"] for r in diff["rows"]} == set(parent) | set(node)
    for row in diff["rows"]:
        assert row["status"] == ("stable" if row["rank_parent"] and row["rank_node"]
                                 else "dropped" if row["rank_parent"] else "new")
        if row["rank_parent"]:
            assert parent[row["rank_parent"] - 1] == row["doc_id"]
    html = render.side_by_side(diff)
    assert html.count("<table>") == 2
    assert diff["rule"] and diff["scope"] and diff["source"]
    assert f"rule: {escape(diff['rule'])}; scope: {escape(diff['scope'])}" in html
    assert html.count('class="cc-dropped"') == 2 * sum(r["status"] == "dropped" for r in diff["rows"])
    with pytest.raises(CaseError, match="no node 'n9'"):
        grown.select("n9")
    assert grown.selected == child


def test_results_carry_their_chunk_source_and_explanation(grown):
    found = grown.results("n0")
    chunks = pd.read_parquet(grown.workspace.path(layout.CHUNKS)).set_index("chunk_id")["text"]
    assert found and all(r["chunk"] == chunks[r["chunk_id"]] for r in found)
    assert all(r["explanation"] for r in found)  # every result has a sentence
    assert all(r["source"] == f"/source/{r['doc_id']}" for r in found)  # text-ingested
    assert grown.judgments.text(found[0]["doc_id"]).strip()
    html = render.results(found, [])
    assert html.count('class="cc-result"') == len(found) and "<details" in html


def test_an_edit_makes_a_child_and_a_bad_one_changes_nothing(grown):
    before = set(grown.tree.tree.nodes)
    sheet = grown.tree.tree.node("n0").fact_sheet_state
    values = {**form_values(sheet), "outcome": "Dismissed" if sheet.outcome != "Dismissed"
              else "Allowed"}
    node = grown.edit(values, "n0", "the outcome flipped")
    assert set(grown.tree.tree.nodes) == before | {node} and grown.selected == node
    assert grown.tree.tree.node(node).edge.description == "the outcome flipped"
    assert grown.side_by_side(node)["parent"] == "n0"
    nodes = set(grown.tree.tree.nodes)
    for bad in ({**values, "ages": "x"}, form_values(grown.tree.tree.node(node).fact_sheet_state)):
        with pytest.raises(CaseError):
            grown.edit(bad, node)
    assert set(grown.tree.tree.nodes) == nodes and grown.selected == node


def test_expansion_is_lazy_and_sensitivity_per_type(grown):
    first = grown.graph()[1]["id"]
    children = grown.expand(first)
    assert grown.expand(first) == children  # computed once
    assert all(c.startswith(first + ".") for c in children)
    if children:  # a node two edges down is explained too (its parent has a parent)
        assert all(r["explanation"] for r in grown.results(children[0]))
        assert grown.summary(children[0])
    scores = grown.sensitivity()
    types = {n["type"] for n in grown.graph()} - {"root"}
    assert set(scores) == types
    chart = render.sensitivity_chart(scores)
    assert chart.count('class="cc-bar"') == len(scores)


def test_exports_are_a_valid_tree_and_its_report(grown):
    model = TreeModel.model_validate_json(grown.export_json())
    assert [n.node_id for n in model.nodes] == list(grown.tree.tree.nodes)
    assert all(n.explanations for n in model.nodes if n.retrieval_results)
    report = grown.export_markdown()
    assert all(f"## {n}" in report for n in grown.tree.tree.nodes)


def test_layout_puts_parents_over_their_children():
    nodes = [{"id": "n0", "parent": None, "depth": 0, "type": "root"},
             {"id": "n0.1", "parent": "n0", "depth": 1, "type": "numerical"},
             {"id": "n0.2", "parent": "n0", "depth": 1, "type": "section"},
             {"id": "n0.1.1", "parent": "n0.1", "depth": 2, "type": "party"},
             {"id": "n0.1.2", "parent": "n0.1", "depth": 2, "type": "party"}]
    placed = {n["id"]: n for n in render.layout(nodes)}
    assert placed["n0.1"]["x"] == 0.5 and placed["n0.2"]["x"] == 2.0
    assert placed["n0"]["x"] == 1.25 and placed["n0.1.2"]["y"] == 2.0


def test_text_from_the_data_is_escaped():
    html = render.results([{"rank": 1, "doc_id": "C1", "citation": "<b>A</b> v. B",
                            "chunk": "<script>x</script>", "section_type": "Facts", "page": 2,
                            "source": "/source/C1", "explanation": ["1 < 2"]}], ["<i>"])
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>A</b>" not in html


def test_a_pdf_judgment_links_its_page(tmp_path, pdf_dir):
    from countercase.case import Workspace

    pdf = sorted(pdf_dir.glob("*.pdf"))[0]
    (tmp_path / layout.EXTRACT).mkdir(parents=True)
    pd.DataFrame([{"doc_id": "P1", "year": 2001, "petitioner": "A", "respondent": "B",
                   "citation_string": None, "source_path": str(pdf)},
                  {"doc_id": "T1", "year": None, "petitioner": None, "respondent": None,
                   "citation_string": None, "source_path": "gone.pdf"}]
                 ).to_parquet(tmp_path / layout.METADATA)
    judgments = Judgments(Workspace(tmp_path))
    assert judgments.pdf("P1") == pdf and judgments.link("P1", 3) == "/source/P1#page=3"
    assert judgments.pdf("T1") is None and judgments.link("T1", 3) == "/source/T1"
    assert judgments.citation("P1") == "A v. B (2001)" and judgments.citation("X") == "X"


def test_the_tree_json_names_every_node(grown):
    data = json.loads(grown.export_json())
    assert {n["node_id"] for n in data["nodes"]} == set(grown.tree.tree.nodes)


def test_the_benchmark_times_every_edit_it_makes(workspace):
    from countercase.explore.bench import run_bench

    report = run_bench(workspace, ["AILA_Q30", "AILA_Q12"])
    edits = report["edit_to_redraw_seconds"]
    assert report["build_depth1_seconds"]["n"] == 2 and edits["n"] in (2, 3, 4)
    assert 0 < edits["p50"] <= edits["p95"] <= edits["max"]
    assert report["target_met_p95"] == (edits["p95"] <= report["target_seconds"])


def test_a_notebook_tree_opens_in_the_page(workspace):
    from countercase.case import Case
    from countercase.explore.app import ExplorerApp

    tree = Case.from_query("AILA_Q30", workspace).tree(depth=1, branching=2)
    explorer = Explorer(workspace, Judgments(workspace)).open(tree)
    app = ExplorerApp(explorer)
    assert [n["id"] for n in app.graph.nodes] == list(tree.tree.nodes)
    assert "Fact sheet of node n0" in app.sheet_title.object and app.results.object


def test_a_judgments_citation_never_shows_a_missing_value(workspace):
    """The whole corpus's metadata reads a missing reporter citation as NaN (the fixture's as
    None): neither may print."""
    import numpy as np
    import pandas as pd

    judgments = Judgments(workspace)
    table = pd.read_parquet(workspace.path(layout.METADATA)).set_index("doc_id")
    first = table.index[0]
    table["citation_string"] = np.nan
    table.loc[first, "respondent"] = np.nan
    judgments.__dict__["_metadata"] = table  # the cached property, as read from such a file
    shown = [judgments.citation(doc) for doc in table.index]
    assert shown and not [c for c in shown if "nan" in c.replace(",", " ").split()]
    assert judgments.citation(first).startswith(str(table.loc[first, "petitioner"]))

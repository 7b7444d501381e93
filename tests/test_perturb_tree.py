"""Perturbation trees end to end on a small real index: forty AILA judgments, real queries."""

from __future__ import annotations

import json

import jsonschema
import pandas as pd
import pytest

from countercase.config import RetrieveParams
from countercase.extract.chunking import chunk_document, load_tokenizer
from countercase.extract.metadata import extract_metadata
from countercase.extract.run import CHUNK_CASE_FIELDS
from countercase.extract.segment import segment
from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
from countercase.factsheet.rules import extract_rules
from countercase.index.bm25 import Bm25Searcher, build_bm25_index
from countercase.index.run import chunk_records
from countercase.ingest.text import text_document
from countercase.legal.adjacency import build_adjacency
from countercase.perturb.diff import diff_rankings
from countercase.perturb.rules import Perturbation, check
from countercase.perturb.run import retriever_search
from countercase.perturb.tree import SCHEMA_PATH, PerturbationTree, TreeError, TreeModel
from countercase.retrieve.pipeline import Retriever

DOCS = [f"C{i}" for i in range(1, 41)]


@pytest.fixture(scope="module")
def world(tmp_path_factory, raw_dir, aila_files):
    out = tmp_path_factory.mktemp("trees")
    tokenizer = load_tokenizer("all-MiniLM-L6-v2")
    rows, cited = [], []
    texts = aila_files.casedocs(DOCS)
    for name in DOCS:
        doc = text_document(name, texts[name].encode(), name)
        meta = extract_metadata(doc).to_dict()
        cited.append(meta["act_sections"])
        rows += [{**c.to_dict(), **{f: meta[f] for f in CHUNK_CASE_FIELDS}}
                 for c in chunk_document(doc, segment(doc.text), tokenizer, 254, 32)]
    chunks = pd.DataFrame(rows)
    build_bm25_index(chunk_records(chunks), out / "bm25")
    params = RetrieveParams(steps=("bm25", "rerank", "bridge"))
    retriever = Retriever(chunks, params, bm25=Bm25Searcher(out / "bm25"))
    edges = build_adjacency(statute_frame(raw_dir / "statutes"),
                            pd.DataFrame(build_constitution_crossrefs(raw_dir / "statutes")),
                            cited, min_count=2)
    return retriever_search(retriever), edges


@pytest.fixture(scope="module")
def q30(aila_files):
    return aila_files.queries()["AILA_Q30"]


@pytest.fixture(scope="module")
def built(world, q30):
    search, edges = world
    return PerturbationTree(extract_rules(q30, "AILA_Q30", "query"), search, edges, k=10,
                            text=q30).build(depth=2, branching=3)


def test_a_real_tree_respects_its_caps_and_rules(built, world):
    _, edges = world
    nodes = list(built.nodes.values())
    assert 4 <= len(nodes) <= 1 + 3 + 9 and max(n.depth for n in nodes) <= 2
    for node in nodes[1:]:
        edge = node.edge
        check(Perturbation(edge.fact_type, edge.path, edge.old, edge.new, edge.description,
                           edge.basis), edges)
        assert node.query != built.nodes[node.parent_id].query or edge.fact_type == "party"
    assert all(len([n for n in nodes if n.parent_id == p.node_id]) <= 3 for p in nodes)


def test_each_diff_is_the_arithmetic_of_the_two_result_lists(built):
    for node in list(built.nodes.values())[1:]:
        parent = built.nodes[node.parent_id]
        expected = diff_rankings([r["doc_id"] for r in parent.retrieval_results],
                                 [r["doc_id"] for r in node.retrieval_results], 10)
        assert node.diff_vs_parent.model_dump() == expected.to_dict()
        assert node.pruned == (node.diff_vs_parent.mean_displacement < 0.5)


def test_sensitivity_is_the_mean_displacement_per_fact_type(built):
    by_type: dict[str, list[float]] = {}
    for node in list(built.nodes.values())[1:]:
        by_type.setdefault(node.edge.fact_type, []).append(node.diff_vs_parent.mean_displacement)
    assert built.sensitivity() == {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())}


def test_json_round_trip_and_shipped_schema(built, world):
    search, edges = world
    text = built.to_json({"k": 10})
    assert PerturbationTree.from_json(text, search, edges).to_json({"k": 10}) == text
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema == json.loads(json.dumps(TreeModel.model_json_schema()))  # regenerate: python -m countercase.perturb.tree
    jsonschema.validate(json.loads(text), schema)


def test_expansion_is_lazy_and_computed_once(world, q30):
    search, edges = world
    calls = []

    def counting(query, sheet, k):
        calls.append(query)
        return search(query, sheet, k)

    tree = PerturbationTree(extract_rules(q30, "AILA_Q30", "query"), counting, edges, text=q30)
    assert len(tree.nodes) == 1 and len(calls) == 1
    children = tree.expand("n0", branching=2)
    assert len(children) == 2 and len(calls) == 3
    assert [c.node_id for c in tree.expand("n0", branching=2)] == ["n0.1", "n0.2"]
    assert len(calls) == 3


def test_manual_edits_and_bad_requests(built):
    root = built.nodes["n0"].fact_sheet_state.model_dump()
    edited = {**root, "parties": {"petitioner": {"type": "Minor", "extractor": "manual"},
                                  "respondent": {"type": "State", "extractor": "manual"}}}
    node = built.edit("n0", edited, "petitioner made a minor, respondent the State")
    assert node.parent_id == "n0" and node.edge.fact_type == "manual"
    assert node.retrieval_results and node.diff_vs_parent is not None
    assert "The petitioner is a minor." in node.query
    with pytest.raises(TreeError, match=r"parties\.petitioner\.type.*'Alien'"):
        built.edit("n0", {**root, "parties": {"petitioner": {"type": "Alien"}}})
    with pytest.raises(TreeError, match="no node 'n9.9'"):
        built.expand("n9.9")
    with pytest.raises(TreeError, match="at least 1"):
        built.build(depth=0)

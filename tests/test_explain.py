"""Explanations on real judgments: every sentence's claims hold against their sources, a planted
false claim is caught, and nothing shared gives 'overall similarity', never a made-up reason."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from countercase.explain.claims import Claim, Sources, section_words, verify
from countercase.explain.edges import explain_edge
from countercase.explain.results import explain_result
from countercase.extract.segment import segment
from countercase.factsheet.rules import extract_rules

IDS = ["C1000", "C1002", "C1011", "C1024", "C1033"]


@pytest.fixture(scope="module")
def corpus(aila_files):
    texts = aila_files.casedocs(IDS)
    return texts, {d: extract_rules(t, d, "judgment", segment(t)) for d, t in texts.items()}


def weight(term: str) -> float:  # a stand-in IDF: longer words weigh more
    return float(len(term))


def _sources(sheets, chunks=None, **more):
    return Sources(sheets=dict(sheets), chunks=chunks or {}, **more)


def test_a_result_sharing_sections_and_evidence_is_explained_by_them(corpus):
    texts, sheets = corpus
    query, chunk = sheets["C1024"], texts["C1000"][:2000]
    found = explain_result(query, texts["C1024"][:3000], "C1000", "C1000_0", chunk,
                           sheets["C1000"], {}, weight)
    assert [s.template for s in found] == ["shared_facts", "key_terms"]
    assert section_words("IPC-302") in found[0].text and "EyeWitness" in found[0].text
    sources = _sources({"query": query, "C1000": sheets["C1000"]},
                       {"C1000_0": chunk, "query": texts["C1024"][:3000]})
    assert all(verify(s, sources) == [] for s in found)
    for claim in found[1].claims:
        if claim.source == "C1000_0":
            assert chunk[claim.start:claim.end].lower() == claim.value


def test_numbers_on_the_same_side_of_a_boundary_are_shared_facts(corpus):
    texts, sheets = corpus
    found = explain_result(sheets["C1011"], "", "C1033", "c", "", sheets["C1033"], {}, weight)
    assert "an age" in found[0].text
    sides = [c for c in found[0].claims if c.kind == "number_side"]
    assert sides and verify(found[0], _sources({"query": sheets["C1011"],
                                                "C1033": sheets["C1033"]})) == []


def test_nothing_shared_is_overall_similarity(corpus):
    texts, sheets = corpus
    found = explain_result(sheets["C1002"], "xyz", "C1000", "c", texts["C1000"][:500],
                           sheets["C1000"], {}, weight)
    assert [s.template for s in found] == ["overall_similarity"] and not found[0].claims


@pytest.mark.parametrize("plant", ["section", "term", "count", "member"])
def test_the_checker_catches_a_planted_false_claim(corpus, plant):
    texts, sheets = corpus
    chunk = texts["C1000"][:2000]
    sentence = explain_result(sheets["C1024"], texts["C1024"][:3000], "C1000", "C1000_0", chunk,
                              sheets["C1000"], {}, weight)[0 if plant == "section" else 1]
    sources = _sources({"query": sheets["C1024"], "C1000": sheets["C1000"]},
                       {"C1000_0": chunk, "query": texts["C1024"][:3000]},
                       diff={"dropped": ["C1"], "new": []})
    first = sentence.claims[0]
    if plant == "section":
        false = dataclasses.replace(first, value="IPC-999")
    elif plant == "term":
        false = dataclasses.replace(first, start=first.start + 1, end=first.end + 1)
    elif plant == "count":
        false = Claim("count", 2, "diff", "dropped")
    else:
        false = Claim("member", "C1000", "diff", "dropped")
    planted = dataclasses.replace(sentence, claims=sentence.claims + (false,))
    assert verify(sentence, sources) == [] and len(verify(planted, sources)) == 1


def test_an_edge_names_the_dropped_cases_that_state_the_old_fact(corpus):
    _, sheets = corpus
    edge = {"fact_type": "section", "path": "sections_cited.0", "old": "IPC-302",
            "new": "IPC-304", "description": "Section IPC-302 changed to IPC-304"}
    diff = {"dropped": ["C1000", "C1002"], "new": ["C1033"], "stable": []}
    node = sheets["C1002"]  # a perturbed case that no longer cites IPC-302
    found = explain_edge(edge, diff, 10, sheets, {}, node)
    assert [s.template for s in found] == ["change_counts", "dropped_section",
                                           "no_traced_reason"]
    assert "C1000" in found[1].text and "C1002" not in found[1].text
    assert "no longer states" in found[1].text
    assert found[0].text == ("After the change (Section IPC-302 changed to IPC-304), 2 precedents "
                             "dropped out of the top 10 and 1 appeared.")
    one = explain_edge(edge, {**diff, "dropped": ["C1000"]}, 10, sheets, {}, node)[0]
    assert "1 precedent dropped out" in one.text
    sources = _sources({**sheets, "node": node}, edge=edge, diff=diff)
    assert all(verify(s, sources) == [] for s in found)
    # a perturbed case that still cites IPC-302 elsewhere is not said to have dropped it
    still = explain_edge(edge, diff, 10, sheets, {}, sheets["C1024"])[1]
    assert "still states" in still.text
    assert verify(still, _sources({**sheets, "node": sheets["C1024"]}, edge=edge,
                                  diff=diff)) == []
    assert verify(found[1], _sources({**sheets, "node": sheets["C1024"]}, edge=edge,
                                     diff=diff)) != []  # "no longer" checked on the node


def test_an_age_edge_explains_by_the_side_of_the_boundary(corpus):
    _, sheets = corpus
    edge = {"fact_type": "numerical", "path": "numerical_facts.ages.0", "old": 26.0,
            "new": 17.0, "description": "Age changed from 26 to 17 (now a minor)"}
    diff = {"dropped": ["C1011"], "new": ["C1033"], "stable": []}
    node = sheets["C1033"]  # its ages are all under 18
    found = explain_edge(edge, diff, 10, sheets, {}, node)
    assert "an age of at least 18 years" in found[1].text and "no longer" in found[1].text
    assert "an age under 18 years" in found[2].text and "now states" in found[2].text
    assert all(verify(s, _sources({**sheets, "node": node}, edge=edge, diff=diff)) == []
               for s in found)
    # a change that crosses no boundary traces no reason: it never says none exists
    scaled = {**edge, "old": 26.0, "new": 27.0, "description": "Age changed from 26 to 27"}
    assert explain_edge(scaled, diff, 10, sheets, {}, node)[1].template == "no_traced_reason"


@pytest.fixture(scope="module")
def tree(corpus):
    import pandas as pd

    from countercase.perturb.tree import PerturbationTree

    texts, sheets = corpus
    ranking = {"C1024": ["C1000", "C1033", "C1011"]}

    def search(query, sheet, k):  # the root finds three judgments, every child two of them
        found = ranking["C1024"] if "302" in query and len(query) > 2900 else ["C1033", "C1002"]
        return [{"doc_id": d, "chunk_id": f"{d}_0000", "rank": i + 1, "metadata": {}}
                for i, d in enumerate(found)][:k]

    edges = pd.DataFrame(columns=["source", "target", "kind", "weight", "evidence"])
    built = PerturbationTree(sheets["C1024"], search, edges, k=3, text=texts["C1024"][:3000])
    return built.build(1, 3).to_model({"depth": 1, "branching": 3, "k": 3})


def test_every_node_of_a_tree_is_explained_and_projected_to_markdown(corpus, tree, tmp_path):
    from countercase.explain.markdown import tree_markdown
    from countercase.explain.run import Explainer, faithfulness, read_tree

    texts, sheets = corpus
    chunks = {f"{d}_0000": t[:1500] for d, t in texts.items()}
    explained, records = Explainer(sheets, chunks, {"murder": 3.0, "accused": 2.0}).explain(tree)
    assert all(set(n.explanations) == {r["chunk_id"] for r in n.retrieval_results}
               for n in explained.nodes)
    assert all(n.counterfactual_summary for n in explained.nodes[1:])
    found = faithfulness(records)
    assert found["sentences"] > len(explained.nodes) and found["faithfulness"] == 1.0
    path = tmp_path / "tree.json"
    path.write_text(explained.model_dump_json(), encoding="utf-8")
    again = read_tree(path)
    assert tree_markdown(again) == tree_markdown(explained)
    report = tree_markdown(explained)
    assert explained.nodes[1].counterfactual_summary[0]["text"] in report
    structure = report.split("## Structure")[1].split("\n## ")[0]
    listed = [line.split(":")[0].strip(" -") for line in structure.splitlines() if ": " in line]
    assert sorted(listed) == sorted(n.node_id for n in explained.nodes)
    # depth first: a grandchild added last (breadth-first order) is listed under its parent
    grandchild = explained.nodes[1].model_copy(update={"node_id": "n0.1.1", "parent_id": "n0.1",
                                                       "depth": 2})
    deeper = explained.model_copy(update={"nodes": explained.nodes + [grandchild]})
    structure = tree_markdown(deeper).split("## Structure")[1].split("\n## ")[0]
    listed = [line.split(":")[0].strip(" -") for line in structure.splitlines() if ": " in line]
    assert listed[listed.index("n0.1") + 1] == "n0.1.1"


def test_a_node_without_results_says_so(tree):
    from countercase.explain.markdown import tree_markdown

    empty = tree.model_copy(update={"nodes": [tree.nodes[0].model_copy(
        update={"retrieval_results": []})]})
    assert "No precedent was retrieved at this node" in tree_markdown(empty)


def test_a_tree_off_its_schema_is_named_with_the_failing_path(tree, tmp_path):
    from countercase.explain.run import TreeFileError, read_tree

    data = json.loads(tree.model_dump_json())
    data["nodes"][0]["depth"] = "deep"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TreeFileError, match=r"bad.json: not a perturbation tree: nodes.0.depth"):
        read_tree(path)


def test_the_cli_writes_a_report_and_names_a_bad_tree(corpus, tree, tmp_path, run_cli):
    import pandas as pd

    texts, sheets = corpus
    sheets_file = tmp_path / "judgments.jsonl"
    sheets_file.write_text("".join(s.model_dump_json() + "\n" for s in sheets.values()))
    chunks = tmp_path / "chunks.parquet"
    pd.DataFrame({"chunk_id": [f"{d}_0000" for d in texts],
                  "text": [t[:1500] for t in texts.values()]}).to_parquet(chunks)
    good, bad, report = tmp_path / "tree.json", tmp_path / "bad.json", tmp_path / "report.md"
    good.write_text(tree.model_dump_json())
    bad.write_text('{"case_id": "x"}')
    base = ["explain", "--sheets", str(sheets_file), "--chunks", str(chunks)]
    code, _, _ = run_cli(*base, "--tree", str(good), "--out", str(report))
    assert code in (0, None) and report.read_text().startswith("# Perturbation tree of C1024")
    code, _, err = run_cli(*base, "--tree", str(bad), "--out", str(report))
    assert code == 2 and "bad.json: not a perturbation tree" in err
    assert "Traceback" not in err


def test_entropy_and_gini_tell_spread_from_concentration():
    from countercase.topology.run import entropy, gini, max_over_mean

    assert entropy([1, 1, 1, 1]) == 1.0 and entropy([4, 0, 0, 0]) == 0.0
    assert gini([1, 1, 1, 1]) == 0.0 and gini([0, 0, 0, 4]) == 0.75
    assert max_over_mean([1, 1, 4]) == 2.0 and entropy([3]) is None


def test_tree_shape_and_robustness_of_a_real_tree(tree):
    from countercase.topology.run import robustness, topology, tree_shape

    shape = tree_shape(tree)
    assert shape["nodes"] == len(tree.nodes) and shape["depth_reached"] == 1
    assert 0 < shape["branching_density"] <= 1 and 0 <= shape["share_pruned"] <= 1
    held = robustness(tree)
    root = [r["doc_id"] for r in tree.nodes[0].retrieval_results]
    assert set(held) == set(root) and all(0 < v <= 1 for v in held.values())
    for doc, share in held.items():  # counted from the nodes' own results
        assert share == sum(doc in {r["doc_id"] for r in n.retrieval_results}
                            for n in tree.nodes) / len(tree.nodes)
    found = topology([tree], {d: i for i, d in enumerate(sorted(held, key=held.get))}, {},
                     seed=1)
    assert found["precedents"]["n"] == len(held)
    assert found["robustness_vs_indegree"]["n"] == len(held)


def test_a_term_glued_to_a_digit_is_not_claimed_as_a_word():
    from countercase.explain.results import key_terms

    # found by the checker on the corpus trees: "1respectively" is not the word "respectively"
    found = key_terms("Rs 1respectively paid", "c", "paid respectively", weight)
    assert [c.value for c in found.claims if c.source == "c"] == ["paid"]
    assert verify(found, _sources({}, {"c": "paid respectively",
                                       "query": "Rs 1respectively paid"})) == []


def test_every_edge_shows_its_rule_scope_and_legal_source(corpus, tree):
    from countercase.explain.markdown import tree_markdown

    edges = [n.edge for n in tree.nodes if n.edge is not None]
    assert edges and all(e.rule and e.scope and e.basis for e in edges)
    text = tree_markdown(tree)
    for e in edges:
        assert f"Rule: {e.rule}; scope: {e.scope}; source: {e.basis}." in text


@pytest.fixture(scope="module")
def profiles(corpus):
    from countercase.holdings.profile import profile
    from countercase.holdings.run import read_scorer

    texts, _ = corpus
    scorer = read_scorer(Path(__file__).resolve().parents[1] / "configs/holdings_choice.yaml")
    return {d: profile(d, t, scorer=scorer) for d, t in texts.items()}


def test_a_result_is_explained_by_the_holding_it_shares_quoting_its_sentence(corpus, profiles):
    texts, sheets = corpus
    query, text = sheets["C1024"], texts["C1024"][:3000]
    found = explain_result(query, text, "C1000", "C1000_0", "", sheets["C1000"], {}, weight,
                           profiles["C1000"])
    assert found[0].template == "held_facts"
    assert found[0].text.startswith("Its holding turns on ")
    assert section_words("IPC-302") in found[0].text
    held = next(c for c in found[0].claims if c.kind == "held")
    assert "302" in texts["C1000"][held.start:held.end]  # the span is the judgment's own
    sources = _sources({"query": query}, {"query": text}, profiles=profiles)
    assert verify(found[0], sources) == []
    # a provision the reasons only mention is not what the holding turns on
    moved = dataclasses.replace(held, field="mentioned")
    planted = dataclasses.replace(found[0], claims=found[0].claims + (moved,))
    assert len(verify(planted, sources)) == 1
    # no profile, or a case stating none of its holding's facts: no such sentence
    assert "held_facts" not in {s.template for s in explain_result(
        sheets["C1002"], "", "C1000", "c", "", sheets["C1000"], {}, weight, profiles["C1000"])}


def test_an_edge_says_whether_the_ranking_moved_toward_its_citation_targets():
    from countercase.explain.toward import explain_targets

    targets = {"appear": ["P2", "P4"], "drop": ["P1"], "reason": ""}
    diff = {"dropped": ["P1"], "new": ["P2"], "stable": ["P3"]}
    moves = ("section:IPC-302", "section:IPC-304")
    cited, toward = explain_targets(moves, targets, diff, 10)
    assert "with Section 304 IPC rather than Section 302 IPC" in cited.text
    assert "more often P2, P4" in cited.text and "less often P1" in cited.text
    assert toward.text.endswith("the ranking moved toward them.")
    sources = _sources({}, targets=targets, diff=diff)
    assert verify(cited, sources) == [] and verify(toward, sources) == []
    # the same sentences against the reverse move are caught
    back = {"dropped": ["P2"], "new": ["P1"], "stable": ["P3"]}
    assert verify(toward, _sources({}, targets=targets, diff=back)) != []
    assert "moved away from them" in explain_targets(moves, targets, back, 10)[1].text
    none = explain_targets(moves, {"appear": [], "drop": [], "reason": "too few holders"},
                           diff, 10)
    assert [s.template for s in none] == ["no_targets"] and "too few holders" in none[0].text


def test_a_trees_edges_carry_their_citation_targets_and_are_counted(corpus, tree, profiles):
    from countercase.explain.run import Explainer, faithfulness
    from countercase.holdings.case_targets import Finder
    from countercase.holdings.targets import Graph, Settings
    from countercase.perturb.rules import case_categories

    texts, sheets = corpus
    # five judgments decide the edge's old section and cite P1; five its new one and cite P2
    edge = next(n.edge for n in tree.nodes if n.edge is not None and n.edge.fact_type == "section")
    links, facts = [], {}
    for i in range(5):
        links += [(f"A{i}", "P1"), (f"B{i}", "P2")]
        facts[f"A{i}"] = frozenset({f"section:{edge.old}"})
        facts[f"B{i}"] = frozenset({f"section:{edge.new}"})
    domains = case_categories(tree.nodes[0].fact_sheet_state, tree.source_text)
    finder = Finder(Graph(links, facts, {j: domains for j in facts}))
    chunks = {f"{d}_0000": t[:1500] for d, t in texts.items()}
    explained, records = Explainer(sheets, chunks, {}, profiles, finder, Settings()).explain(tree)
    node = next(n for n in explained.nodes if n.edge == edge)
    said = [s for s in node.counterfactual_summary if s["template"] in ("targets", "toward")]
    assert len(said) == 2 and "more often P2" in said[0]["text"]
    found = faithfulness(records)
    assert found["faithfulness"] == 1.0
    assert found["targets"]["edges"] == len(explained.nodes) - 1
    assert found["targets"]["with_targets"] >= 1
    assert "held_facts" in found["per_template"]


def test_a_search_hit_reads_as_a_case_with_its_passage_and_why(indexed_corpus, tmp_path):
    """Issue 58: each hit with its parties, case number and date, the passage that best matches
    the query with its rarer words marked, and the first sentence of its explanation."""
    import pandas as pd

    from countercase.explain.hits import readable

    paths, _, _ = indexed_corpus
    chunks = pd.read_parquet(paths.chunks, columns=["chunk_id", "doc_id", "text"])
    doc = chunks["doc_id"].iloc[0]
    own = chunks[chunks["doc_id"] == doc]
    query = " ".join(own["text"].iloc[len(own) // 2].split()[:60])  # words of one of its chunks
    found = readable(query, [{"rank": 1, "judgment": doc}], paths.chunks, paths.metadata,
                     tmp_path / "no_sheets.jsonl", tmp_path / "no_profiles.jsonl")[0]
    assert found["chunk_id"] in set(own["chunk_id"]) and "**" in found["passage"]
    meta = pd.read_parquet(paths.metadata).set_index("doc_id").loc[doc]
    assert found["case_id"] == meta["case_id"] and found["why"]
    if meta["petitioner"] and meta["respondent"]:
        assert found["parties"] == f"{meta['petitioner']} v. {meta['respondent']}"
    # the chunk the ranker read is the one shown
    named = own["chunk_id"].iloc[0]
    again = readable(query, [{"rank": 1, "judgment": doc, "chunk_id": named}], paths.chunks,
                     paths.metadata, tmp_path / "a", tmp_path / "b")[0]
    assert again["chunk_id"] == named

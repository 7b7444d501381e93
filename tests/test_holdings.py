"""Holding profiles, citation-grounded targets and directional sensitivity (issue 57)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from countercase.confirm.directional import cases_needed, direction, power
from countercase.holdings.profile import Held, Profile, profile
from countercase.holdings.run import accuracy
from countercase.holdings.targets import Graph, Settings, contrast
from countercase.perturb.rules import Perturbation

JUDGMENT = """Supreme Court of India
State v. Ram
J U D G M E N T
FACTS:
The appellant, a tenant of the shop, was aged 19 years. Section 498A IPC was invoked. The
medical report was produced.
REASONS:
We hold that the dying declaration is reliable and the conviction under Section 302 IPC must
stand. The respondent, a licensee, was 16 years of age at the time.
ORDER:
The appeal is dismissed.
"""


def test_a_profile_holds_what_the_reasons_decide_with_its_span():
    found = profile("C1", JUDGMENT, ["IPC-302"])
    assert found.reasons_chars > 0
    assert found.values("provision", "decided") == {"IPC-302"}
    assert "IPC-498A" not in found.values("provision")  # cited in the facts only
    assert "DyingDeclaration" in found.values("evidence")
    assert "Licensee" in found.values("party")
    assert "ages<18" in found.values("boundary")
    held = next(h for h in found.held if h.value == "IPC-302")
    assert "Section 302" in JUDGMENT[held.start:held.end]
    assert "conviction under Section 302" in held.quote
    assert Profile.from_json(found.to_json()) == found


def test_a_judgment_without_reasons_gets_an_empty_profile():
    found = profile("C2", "Supreme Court of India\nState v. Ram\nJ U D G M E N T\nFACTS:\n"
                          "The appellant was convicted under Section 302 IPC.\n")
    assert found.reasons_chars == 0 and found.held == []


def test_accuracy_counts_the_labellers_added_provisions_as_misses():
    profiles = {"C1": Profile("C1", 10, [Held("provision", "IPC-302", "decided", 0, 1, ""),
                                         Held("provision", "IPC-34", "decided", 0, 1, ""),
                                         Held("provision", "CrPC-313", "mentioned", 0, 1, "")])}
    gold = [{"doc_id": "C1", "section_id": s, "decided": d, "labeller": "a"}
            for s, d in (("IPC-302", True), ("IPC-34", False), ("CrPC-313", False),
                         ("IPC-304", True))]
    found = accuracy(profiles, gold)
    assert (found["precision"], found["recall"]) == (0.5, 0.5)


def _edit(fact_type, path, old, new):
    return Perturbation(fact_type, path, old, new, "", "")


def test_an_edit_contrasts_the_values_it_moves_between():
    assert contrast(_edit("section", "sections_cited.0", "IPC-302", "IPC-304")) == (
        "section:IPC-302", "section:IPC-304")
    assert contrast(_edit("evidence", "evidence_items", "DyingDeclaration", None)) == (
        "evidence:DyingDeclaration", None)
    assert contrast(_edit("evidence", "evidence_items", None, "Confession")) is None
    # the explorer's manual edit (issue found by a fresh build's explore_bench): no fact value
    assert contrast(_edit("manual", "", None, None)) is None
    before, after = contrast(_edit("numerical", "numerical_facts.ages.0", 17.0, 18.0))
    assert before.startswith("boundary:ages<") and after.startswith("boundary:ages>=")


def _graph(extra=()):
    # five judgments hold 302 and cite P1; five hold 304 and cite P2; P3 everyone cites
    links, facts = list(extra), {}
    for i in range(5):
        links += [(f"A{i}", "P1"), (f"A{i}", "P3")]
        links += [(f"B{i}", "P2"), (f"B{i}", "P3")]
        facts[f"A{i}"], facts[f"B{i}"] = frozenset({"section:IPC-302"}), frozenset(
            {"section:IPC-304"})
    return Graph(links, facts, {})


def test_targets_are_what_holders_of_the_new_value_cite_more():
    graph = _graph()
    people = graph.population(frozenset(), frozenset())
    found = graph.targets(("section:IPC-302", "section:IPC-304"), people, lambda d: True,
                          Settings())
    assert (found.appear, found.drop) == (("P2",), ("P1",))  # P3: popular on both sides


def test_targets_leave_the_case_out_and_need_holders_and_admissible_precedents():
    graph = _graph()
    people = graph.population(frozenset(), frozenset({"B0"}))  # the case itself
    found = graph.targets(("section:IPC-302", "section:IPC-304"), people, lambda d: True,
                          Settings())
    assert found.appear == () and found.reason == "too few holders"  # four left of five
    found = graph.targets(("section:IPC-302", "section:IPC-304"),
                          graph.population(frozenset(), frozenset()), lambda d: d != "P2",
                          Settings())
    assert found.appear == () and found.drop == ("P1",)  # P2 was decided after the case


def test_direction_is_up_for_the_appear_set_and_down_for_the_drop_set():
    root = {"P1": 10, "P2": 10}
    node = {"P1": 5, "P2": 20}
    assert direction(root, node, ["P1"], ["P2"], 1001) == pytest.approx(2 * math.log(2))
    assert direction(root, node, ["P2"], ["P1"], 1001) == pytest.approx(-2 * math.log(2))
    assert direction(root, root, ["P1"], [], 1001) == 0.0
    assert direction({"P1": 0.2}, {"P1": 0.5}, ["P1"], [], None) == pytest.approx(0.3)
    assert direction(root, node, [], [], 1001) is None


def test_the_sample_size_reaches_the_power_it_is_computed_for():
    n = cases_needed(0.2, 0.01)
    assert power(n, 0.2, 0.01) >= 0.8 > power(n - 1, 0.2, 0.01)
    assert power(n, 0.3, 0.01) > power(n, 0.2, 0.01)


def test_v3_refuses_a_draft_preregistration(tmp_path: Path):
    from countercase.config import Params
    from countercase.confirm.prereg import PreregistrationError
    from countercase.confirm.v3 import Inputs, run_validity_v3
    from countercase.layout import IndexPaths

    prereg = tmp_path / "v3.md"
    prereg.write_text("---\nstatus: draft\n---\n# v3\n", encoding="utf-8")
    with pytest.raises(PreregistrationError, match="draft"):
        run_validity_v3(Params(), Inputs(IndexPaths(), prereg=Path("v3.md")), tmp_path / "out",
                        root=tmp_path)


def test_the_applicability_features_match_the_query_to_the_holding():
    from countercase.factsheet.rules import extract_rules
    from countercase.retrieve.features import Holding, Sheet, holding_features

    text = ("The appellant, a tenant, aged 17 years, was convicted under Section 302 IPC and "
            "Section 34 IPC. The dying declaration was recorded.")
    sheet = extract_rules(text, "Q", "query")
    query = Sheet.of(sheet, [])
    holding = Holding(frozenset({"section:IPC-302"}), frozenset({"section:IPC-34"}),
                      frozenset({"evidence:DyingDeclaration", "boundary:ages<18"}))
    found = holding_features(query, holding, {"section:IPC-302": 2.0})
    assert found["held_decided"] == 1.0 and found["held_decided_idf"] == 2.0
    assert found["held_mentioned"] == 1.0 and found["held_evidence"] == 1.0
    assert 0 < found["held_boundaries"] <= 1
    assert all(math.isnan(v) for v in holding_features(query, None, {}).values())

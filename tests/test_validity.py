"""The validity experiment's parts on real text: span-level rewriting, placebos, corpus cases
rebased to their facts window, operative labels, and the gold agreement statistic."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from countercase.extract.segment import segment
from countercase.factsheet.rules import extract_rules, find_ages
from countercase.factsheet.thresholds import crosses, load_thresholds
from countercase.perturb.cases import precedent_facts, window
from countercase.perturb.operative import label
from countercase.perturb.placebo import placebos
from countercase.perturb.query import text_query
from countercase.perturb.rules import Perturbation, apply
from countercase.perturb.validity import (cited_displacement, gold_against_chance,
                                          gold_agreement)

TEXT = ("On 9 February 1961 the appellant, a tenant, aged about 17 years, was arrested. He was "
        "17 years old then. The dying declaration was recorded by the Magistrate. The dying "
        "declaration is doubtful. He was convicted under Section 302 IPC. The tenant paid "
        "Rs. 35,000 as rent. Section 302 of the Indian Penal Code applies.")


@pytest.fixture(scope="module")
def sheet():
    return extract_rules(TEXT, "t", "query")


def _edge(fact_type, path, old, new):
    return Perturbation(fact_type, path, old, new, "", "")


@pytest.mark.parametrize("edge, old_words, new_words", [
    (_edge("numerical", "numerical_facts.ages.0", 17.0, 18.0), "17 years", "18 years"),
    (_edge("section", "sections_cited.0", "IPC-302", "IPC-304"), "Section 302", "Section 304"),
    (_edge("party", "parties.petitioner", "Tenant", "Licensee"), "tenant", "licensee"),
    (_edge("evidence", "evidence_items", "DyingDeclaration", None), "dying declaration", None),
])
def test_span_rewrites_every_mention_and_field_only_one(sheet, edge, old_words, new_words):
    changed = apply(sheet, edge)
    span, field = (text_query(changed, sheet, TEXT, g) for g in ("span", "field"))
    assert old_words.lower() not in span.lower()
    if new_words:
        assert span.lower().count(new_words.lower()) >= 2
    assert field != TEXT and field != span


def test_placebos_change_the_text_but_cross_no_boundary(sheet):
    found = {p.kind: p for p in placebos(sheet, TEXT, "span")}
    assert set(found) == {"date_month", "number_within", "role_synonym"}
    assert "9 March 1961" in found["date_month"].text
    assert "petitioner" in found["role_synonym"].text
    thresholds = load_thresholds()
    old = sheet.numerical_facts.ages[0].years
    new = found["number_within"].sheet.numerical_facts.ages[0].years
    assert new != old and not any(crosses(old, new, t.value) for t in thresholds["ages"])
    assert {a.years for a in find_ages(found["number_within"].text)} == {new}


def test_a_corpus_case_keeps_only_values_inside_its_window(aila_files):
    text = aila_files.casedocs(["C1000"])["C1000"]
    full = extract_rules(text, "C1000", "judgment", segment(text))
    facts, rebased = window(text, full, 1500)
    assert len(facts) <= 1500 and rebased.facts_span.start == 0
    values = (rebased.sections_cited + rebased.evidence_items + rebased.numerical_facts.ages
              + rebased.numerical_facts.amounts + rebased.numerical_facts.durations)
    assert values and all(facts[v.span.start:v.span.end] == v.span.text for v in values)
    assert len(values) <= len(full.sections_cited + full.evidence_items
                              + full.numerical_facts.ages + full.numerical_facts.amounts
                              + full.numerical_facts.durations)


def test_operative_when_the_changed_fact_is_shared_with_a_cited_precedent(sheet):
    cites_302 = precedent_facts(sheet)
    other = precedent_facts(sheet.model_copy(update={"sections_cited": [],
                                                     "evidence_items": []}))
    section = _edge("section", "sections_cited.0", "IPC-302", "IPC-304")
    removed = _edge("evidence", "evidence_items", "DyingDeclaration", None)
    assert label(section, [cites_302]) == "operative" == label(removed, [cites_302])
    assert label(section, [other]) == "incidental" == label(removed, [other])
    age = _edge("numerical", "numerical_facts.ages.0", 17.0, 18.0)  # the precedent's 17: minor
    assert label(age, [cites_302]) == "operative"
    assert label(_edge("party", "parties.petitioner", "Tenant", "Licensee"), [cites_302]) \
        == "operative"


def test_cited_displacement_counts_absence_as_one_past_the_depth():
    assert cited_displacement(["a", "b"], ["b", "a"], ["a"], 10) == 1.0
    assert cited_displacement(["a", "b"], ["b"], ["a"], 10) == 10.0
    assert cited_displacement(["a"], ["a"], [], 10) is None


def test_gold_agreement_is_one_when_only_the_dispositive_type_moves():
    rows = pd.DataFrame([{"case_id": c, "label": "incidental", "fact_type": t,
                          "top_k_displacement": 3.0 if t == gold else 0.5 * i}
                         for i, (c, gold) in enumerate([("A", "party"), ("B", "section"),
                                                        ("C", "evidence")])
                         for t in ("party", "section", "evidence")])
    found = gold_agreement(rows, {"A": "party", "B": "section", "C": "evidence"}, seed=1)
    assert found["spearman"] > 0.7 and found["dispositive_type_most_sensitive"] == 1.0
    assert found["ci95"][0] <= found["spearman"] <= found["ci95"][1]


def test_the_gold_test_against_chance_by_hand():
    # A: 3 types, party strictly first (the label); B: 2 types tied (no first; chance 0);
    # C: 2 types, section first but evidence labelled; D: one type only (left out)
    moved = {("A", "party"): 3.0, ("A", "section"): 1.0, ("A", "evidence"): 0.5,
             ("B", "party"): 2.0, ("B", "section"): 2.0,
             ("C", "section"): 4.0, ("C", "evidence"): 1.0, ("D", "party"): 9.0}
    rows = pd.DataFrame([{"case_id": c, "label": "operative", "fact_type": t,
                          "top_k_displacement": v} for (c, t), v in moved.items()]
                        + [{"case_id": "A", "label": "placebo", "fact_type": "role_synonym",
                            "top_k_displacement": 99.0}])
    gold = {"A": "party", "B": "party", "C": "evidence", "D": "party"}
    found = gold_against_chance(rows, gold, seed=3, permutations=20_000)
    assert found["n_cases"] == 3 and found["share_first"] == pytest.approx(1 / 3, abs=1e-4)
    assert found["chance_share"] == pytest.approx((1 / 3 + 0 + 1 / 2) / 3, abs=1e-4)
    # P(share >= 1/3) = 1 - P(A misses and C misses) = 1 - (2/3)(1/2) = 2/3
    assert found["permutation_p"] == pytest.approx(2 / 3, abs=0.02)
    assert gold_against_chance(rows, {"D": "party"}, seed=3)["n_cases"] == 0


def test_a_sheet_with_no_facts_gives_a_root_alone_and_says_why():
    import pandas as pd

    from countercase.perturb.tree import PerturbationTree

    bare = extract_rules("The appeal was heard and is dismissed.", "bare", "query")
    calls = []
    tree = PerturbationTree(bare, lambda q, s, k: calls.append(q) or [], pd.DataFrame(
        columns=["source", "target", "kind", "weight", "evidence"]), text="x").build(2, 3)
    assert len(tree.nodes) == 1 and len(calls) == 1
    assert "no fact a rule can change" in tree.to_model().notes[0]


def test_a_bad_sheet_line_is_an_error_naming_the_file_and_line(sheet, tmp_path):
    from countercase.factsheet.schema import FactSheetError
    from countercase.factsheet.store import read_sheets

    path = tmp_path / "judgments.jsonl"
    bad = sheet.model_dump(mode="json") | {"sections_cited": "IPC-302"}
    path.write_text(sheet.model_dump_json() + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(FactSheetError, match=r"judgments.jsonl:2: .*sections_cited"):
        list(read_sheets(path))
    path.write_text(sheet.model_dump_json() + "\n{oops\n", encoding="utf-8")
    with pytest.raises(FactSheetError, match="judgments.jsonl:2: not JSON"):
        list(read_sheets(path))

"""The LLM check's measurement: root candidates of real corpus cases, the blind label sample,
the hand-label file and its errors, agreement (Cohen's kappa) and separation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from countercase import layout
from countercase.extract.segment import segment
from countercase.factsheet.rules import extract_rules
from countercase.perturb.cases import CaseFileError, QueryCase, read_gold, window
from countercase.experiment.agreement import auc, cohens_kappa
from countercase.perturb.llm_check import (KEY, LabelFileError, agreement,
                                           label_sample, read_labels, root_candidates,
                                           separation, summarise)
from countercase.perturb.operative import FACT_TYPES

ROOT = Path(__file__).resolve().parents[1]
NO_EDGES = pd.DataFrame(columns=["source", "target", "kind", "weight", "evidence"])


@pytest.fixture(scope="module")
def cases(aila_files):
    found = []
    for doc, text in sorted(aila_files.casedocs(["C1000", "C1001", "C1002", "C1003"]).items()):
        facts, sheet = window(text, extract_rules(text, doc, "judgment", segment(text)), 3000)
        found.append(QueryCase(doc, facts, sheet, None))
    return found


@pytest.fixture(scope="module")
def candidates(cases):
    return root_candidates(cases, NO_EDGES, per_type=4, precedents={})


def test_root_candidates_are_labelled_and_change_one_fact(candidates):
    assert candidates and {c.label for c in candidates} == {"incidental"}  # no precedent known
    assert all(c.perturbed != c.original for c in candidates)
    per_case_type = pd.Series([(c.case_id, c.fact_type) for c in candidates]).value_counts()
    assert per_case_type.max() <= 4


def test_the_label_sample_is_seeded_round_robin_over_fact_types(cases, candidates):
    by_id = {c.case_id: c for c in cases}
    first = label_sample(candidates, by_id, seed=7, n=6)
    assert first == label_sample(candidates, by_id, seed=7, n=6)
    present = [t for t in FACT_TYPES if any(c.fact_type == t for c in candidates)]
    assert [row["fact_type"] for row in first[:len(present)]] == present
    assert all(row["case_text"] == by_id[row["case_id"]].text for row in first)
    assert len(label_sample(candidates, by_id, seed=7, n=10_000)) == len(candidates)


def test_the_committed_labels_are_two_blind_annotators_on_the_same_items():
    labels = read_labels(ROOT / layout.PERTURBATION_LABELS)
    assert sorted(labels["annotator"].unique()) == ["A", "B"]
    a, b = (set(map(tuple, labels.loc[labels["annotator"] == x, KEY].values)) for x in "AB")
    assert a == b and len(a) >= 50


@pytest.mark.parametrize("line, message", [
    ("{not json", "2: not JSON"),
    ('{"case_id": "C1", "description": "d", "annotator": "A", "plausible": "yes", '
     '"operative": true}', "2: mistyped plausible"),
    ("[1, 2]", "2: not a JSON object"),
])
def test_a_bad_label_line_is_an_error_naming_it(tmp_path, line, message):
    good = {"case_id": "C1", "description": "d", "annotator": "A", "plausible": True,
            "operative": False}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=message):
        read_labels(path)


def test_a_perturbation_labelled_twice_by_one_annotator_is_an_error(tmp_path):
    row = json.dumps({"case_id": "C1", "description": "d", "annotator": "A",
                      "plausible": True, "operative": False})
    path = tmp_path / "labels.jsonl"
    path.write_text(row + "\n" + row + "\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match="twice"):
        read_labels(path)


def test_a_bad_gold_line_is_an_error_naming_it(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"case_id": "C1", "fact_type": "party"}\n{"case_id": "C2"}\n')
    with pytest.raises(CaseFileError, match="gold.jsonl:2: missing fact_type"):
        read_gold(path)


def test_kappa_is_one_for_agreement_and_zero_at_chance():
    assert cohens_kappa([True, False, True], [True, False, True]) == 1.0
    assert cohens_kappa([True, True, False, False], [True, False, True, False]) == 0.0
    assert cohens_kappa([True, True], [True, True]) is None  # no variation: undefined


def _checked(rows):
    """Checked candidates from (case, description, label, P(plausible), P(operative))."""
    return pd.DataFrame([{"case_id": c, "description": d, "fact_type": "party", "label": lab,
                          "p_plausible": p, "p_operative": o, "plausible": p >= 0.5,
                          "operative": o >= 0.5, "accepted": p >= 0.5 and o >= 0.5}
                         for c, d, lab, p, o in rows])


def test_agreement_reads_answers_at_the_threshold_and_scores_by_auc():
    checked = _checked([("C1", "a", "operative", 0.9, 0.8), ("C1", "b", "incidental", 0.2, 0.6),
                        ("C1", "c", "operative", 0.7, 0.3),
                        ("C1", "a", "operative", 0.9, 0.8)])  # "a" again: another mention
    labels = pd.DataFrame([{"case_id": "C1", "description": d, "annotator": who,
                            "plausible": d != "b", "operative": d == "a",
                            "accepted": d == "a"} for d in "abc" for who in "AB"])
    found = agreement(checked, labels)["llm_vs_A"]
    assert found["n_matched"] == 3
    assert found["plausible"]["accuracy"] == 1.0 and found["plausible"]["auc"] == 1.0
    assert found["operative"]["accuracy"] == round(2 / 3, 4)  # "b" scores 0.6: a wrong yes
    assert found["operative"]["auc"] == 1.0  # ... yet below "a": the ranking is right
    assert "auc" not in found["accepted"]
    assert agreement(checked, labels)["between_annotators"]["accepted"]["accuracy"] == 1.0


def test_auc_counts_ties_as_half_and_needs_both_classes():
    assert auc(np.array([True, False]), np.array([0.5, 0.5])) == 0.5
    assert auc(np.array([True, False, False]), np.array([0.1, 0.2, 0.9])) == 0.0
    assert auc(np.array([True, True]), np.array([0.1, 0.2])) is None


def test_separation_and_summary_of_accepted_against_rejected():
    checked = _checked([("C1", "a", "operative", 0.9, 0.9), ("C1", "b", "incidental", 0.9, 0.1),
                        ("C2", "c", "operative", 0.6, 0.7), ("C2", "d", "incidental", 0.2, 0.8)])
    moved = pd.DataFrame({"case_id": ["C1", "C1", "C2", "C2"], "description": list("abcd"),
                          "cited_displacement": [4.0, 0.0, 6.0, 1.0]})
    found = separation(checked, moved)
    assert found["accepted"] == {"n": 2, "cited_displacement_mean": 5.0, "operative_share": 1.0}
    assert found["rejected"]["cited_displacement_mean"] == 0.5
    assert found["auc_p_operative_vs_label"] == 0.75  # 0.9 > 0.1 and 0.8; 0.7 > 0.1, < 0.8
    summary = summarise(checked, seed=1)
    assert summary["acceptance_rate"] == 0.5 and summary["n_cases"] == 2
    assert summary["operative_rate"] == 0.75 and summary["threshold"] == 0.5
    assert summary["acceptance_ci95"][0] <= 0.5 <= summary["acceptance_ci95"][1]
    assert summary["acceptance_by_label"]["operative"]["rate"] == 1.0


def test_no_candidates_is_reported_not_a_crash():
    from countercase.perturb.llm_check import check_all

    empty = check_all([], validator=None)
    found = summarise(empty, seed=1)
    assert found["n_candidates"] == 0 and found["acceptance_rate"] is None

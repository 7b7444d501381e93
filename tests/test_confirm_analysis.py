"""The confirmatory analyses by hand: the per-case excess, its test and ratio, Holm's
adjustment, the balance table and Cohen's kappa."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from countercase.confirm.analysis import (agreement, balance, excess, holm, per_case,
                                          worked_pair)
from countercase.experiment.agreement import cohens_kappa as kappa


def _rows(values):
    return pd.DataFrame([{"case_id": c, "fact_type": t, "d_operative": o, "d_placebo": p,
                          "mass_operative": 10.0, "mass_placebo": m}
                         for c, t, o, p, m in values])


def test_the_excess_is_a_mean_of_case_means():
    rows = _rows([("A", "section", 5.0, 1.0, 9.0), ("A", "party", 3.0, 3.0, 11.0),
                  ("B", "section", 2.0, 0.0, 10.0), ("C", "evidence", 1.0, 2.0, 10.0),
                  ("C", "evidence", None, 2.0, 10.0)])
    cases = per_case(rows)
    assert cases.to_dict() == {"A": 2.0, "B": 2.0, "C": -1.0}
    found = excess(rows, resamples=2000, seed=1)
    assert found["n_cases"] == 3 and found["n_pairs"] == 4
    assert found["excess_mean"] == pytest.approx(1.0)
    assert found["matched_ratio"] == pytest.approx((5 + 3 + 2 + 1) / (1 + 3 + 0 + 2), abs=1e-3)
    assert found["cohens_dz"] == pytest.approx(1.0 / np.std([2, 2, -1], ddof=1), abs=1e-4)
    low, high = found["excess_ci"]
    assert -1.0 <= low <= 1.0 <= high <= 2.0
    assert 0 < found["excess_p"] <= 1


def test_the_worked_pair_is_the_furthest_placebo_and_the_counts_by_hand():
    rows = _rows([("A", "section", 5.0, 1.0, 9.0), ("B", "party", 1.0, 4.0, 11.0),
                  ("C", "section", 0.0, 3.0, 10.0), ("A", "evidence", 2.0, 2.0, 10.0),
                  ("D", "section", None, 9.0, 10.0)])
    rows = rows.assign(operative="edit", placebo="null edit", precedents=1)
    pair = worked_pair(rows)
    # B and C both see the placebo move 3 further; B comes first by its id
    assert (pair["case_id"], pair["fact_type"], pair["d_operative"], pair["d_placebo"]) == (
        "B", "party", 1.0, 4.0)
    assert (pair["pairs"], pair["pairs_placebo_further"], pair["pairs_edit_further"]) == (4, 2, 1)
    assert worked_pair(rows.iloc[4:]) is None  # no pair with both displacements


def test_holm_by_hand():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": None}) == {
        "a": 0.03, "c": 0.06, "b": 0.06, "d": None}


def test_balance_counts_the_unmatched_edits():
    rows = _rows([("A", "section", 5.0, 1.0, 9.0), ("B", "section", 2.0, 0.0, 11.0)])
    left = pd.DataFrame([{"case_id": "C", "fact_type": "section", "description": "x",
                          "reason": "no matched placebo"}])
    found = balance(rows, left)["section"]
    assert found["pairs"] == 2 and found["share_matched"] == pytest.approx(2 / 3, abs=1e-3)
    assert found["mass_operative"] == 10.0 and found["mass_placebo"] == 10.0
    assert found["smd"] == 0.0


def test_kappa_and_agreement_by_hand():
    a = [True, True, False, False]
    b = [True, False, False, False]
    # observed 3/4; chance 0.5 * 0.25 + 0.5 * 0.75 = 0.5; kappa (0.75 - 0.5) / 0.5
    assert kappa(a, b) == pytest.approx(0.5)
    ours = {("C1", "x"): True, ("C1", "y"): False, ("C2", "z"): True}
    labels = {"A": {("C1", "x"): True, ("C1", "y"): True, ("C2", "z"): True},
              "B": {("C1", "x"): True, ("C1", "y"): False, ("C2", "w"): False}}
    found = agreement(ours, labels)
    assert found["A"]["n"] == 3 and found["A"]["agreement"] == pytest.approx(2 / 3, abs=1e-4)
    assert found["consensus"]["n"] == 1  # only ("C1", "x") both label alike

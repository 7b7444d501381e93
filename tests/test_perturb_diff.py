"""Rank diffs against hand-computed cases."""

from __future__ import annotations

import pytest

from countercase.perturb.diff import diff_rankings, rank_biased_overlap


def test_a_hand_computed_diff():
    d = diff_rankings(["A", "B", "C", "D"], ["B", "A", "E", "C"], k=4)
    assert d.dropped == ["D"] and d.new == ["E"]
    # A 1->2, B 2->1, C 3->4, D 4->5 (absent: K+1), E 5->3
    assert d.displacement == {"A": 1, "B": 1, "C": 1, "D": 1, "E": 2}
    assert d.stable == ["A", "B", "C"]  # displacement under 3
    assert d.mean_displacement == pytest.approx(6 / 5)


def test_identical_and_disjoint_rankings():
    same = diff_rankings(["A", "B", "C"], ["A", "B", "C"])
    assert same.mean_displacement == 0 and same.kendall_tau == pytest.approx(1.0)
    assert same.rbo == pytest.approx((1 - 0.9) * (1 + 0.9 + 0.81))  # A_d = 1 at every depth
    apart = diff_rankings(["A", "B"], ["C", "D"], k=2)
    assert apart.rbo == 0 and apart.dropped == ["A", "B"] and apart.new == ["C", "D"]
    assert apart.displacement == {"A": 2, "B": 1, "C": 2, "D": 1}


def test_rbo_by_hand_at_depth_two():
    # depth 1: {A} vs {B}: overlap 0; depth 2: {A,B} vs {B,A}: overlap 2, agreement 1
    assert rank_biased_overlap(["A", "B"], ["B", "A"], p=0.5) == pytest.approx(0.5 * (0 + 0.5 * 1))


def test_reversed_ranking_has_tau_minus_one():
    assert diff_rankings(["A", "B", "C"], ["C", "B", "A"]).kendall_tau == pytest.approx(-1.0)

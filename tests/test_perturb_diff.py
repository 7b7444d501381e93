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
    assert same.rbo == pytest.approx(1.0)  # extrapolated: identical lists agree fully
    assert same.rbo_truncated == pytest.approx((1 - 0.9) * (1 + 0.9 + 0.81))  # A_d = 1 each depth
    apart = diff_rankings(["A", "B"], ["C", "D"], k=2)
    assert apart.rbo == 0 and apart.rbo_truncated == 0 and apart.dropped == ["A", "B"] and apart.new == ["C", "D"]
    assert apart.displacement == {"A": 2, "B": 1, "C": 2, "D": 1}


def test_rbo_by_hand_at_depth_two():
    # depth 1: {A} vs {B}: overlap 0; depth 2: {A,B} vs {B,A}: overlap 2, agreement 1
    truncated = 0.5 * (0 + 0.5 * 1)
    assert rank_biased_overlap(["A", "B"], ["B", "A"], p=0.5,
                               extrapolated=False) == pytest.approx(truncated)
    # Webber et al.'s equation 32: the truncated sum + A_k p^k = 0.25 + 1 * 0.25
    assert rank_biased_overlap(["A", "B"], ["B", "A"], p=0.5) == pytest.approx(0.5)


def test_rbo_of_uneven_lists_by_hand():
    # S = [A] is a prefix of L = [A, B, C]: X_1 = X_2 = X_3 = 1, l = 3, s = 1, p = 0.5;
    # (1-p)/p * (sum X_d/d p^d + sum_{d=2..3} X_s (d-s)/(s d) p^d) + (0/3 + 1/1) p^3
    seen = 1 * 0.5 + 0.5 * 0.25 + (1 / 3) * 0.125
    unseen = 0.5 * 0.25 + (2 / 3) * 0.125
    expected = seen + unseen + 0.125
    assert expected == pytest.approx(1.0)  # nothing seen disagrees
    assert rank_biased_overlap(["A", "B", "C"], ["A"], p=0.5) == pytest.approx(expected)
    assert rank_biased_overlap(["A"], ["A", "B", "C"], p=0.5) == pytest.approx(expected)
    assert rank_biased_overlap(["B", "C", "D"], ["A"], p=0.5) == 0.0


def test_reversed_ranking_has_tau_minus_one():
    assert diff_rankings(["A", "B", "C"], ["C", "B", "A"]).kendall_tau == pytest.approx(-1.0)

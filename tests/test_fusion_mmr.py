"""RRF and MMR against small cases computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.mmr import mmr

A = ["d1", "d2", "d3"]
B = ["d3", "d1", "d4"]


def test_rrf_unweighted():
    fused = reciprocal_rank_fusion({"bm25": A, "dense": B}, k=60)
    assert [d for d, _ in fused] == ["d1", "d3", "d2", "d4"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)


def test_rrf_weights_can_reorder():
    fused = reciprocal_rank_fusion({"bm25": A, "dense": B}, k=60, weights={"bm25": 1, "dense": 3})
    # d3: 1/63 + 3/61 = 0.06505 beats d1: 1/61 + 3/62 = 0.06478; d4: 3/63 beats d2: 1/62
    assert [d for d, _ in fused] == ["d3", "d1", "d4", "d2"]


def test_rrf_ties_break_by_best_rank_then_id():
    fused = reciprocal_rank_fusion({"a": ["y", "x"], "b": ["x", "y"]})
    assert fused[0][1] == fused[1][1] and [d for d, _ in fused] == ["x", "y"]
    fused = reciprocal_rank_fusion({"a": ["p"], "b": ["q", "r"]}, k=0)
    assert [d for d, _ in fused] == ["p", "q", "r"]  # p and q both 1/1: p's id first


def test_mmr_by_hand():
    candidates = [("a", 1.0), ("b", 0.6), ("c", 0.5)]  # normalised relevance 1, 0.2, 0
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # b duplicates a
    assert [d for d, _ in mmr(candidates, vectors, lambda_=1.0)] == ["a", "b", "c"]
    picked = mmr(candidates, vectors, lambda_=0.6)
    # step 2: b = 0.6*0.2 - 0.4*1 = -0.28, c = 0.6*0 - 0.4*0 = 0 -> c
    assert [d for d, _ in picked] == ["a", "c", "b"]
    assert picked[0][1] == pytest.approx(0.6) and picked[1][1] == pytest.approx(0.0)
    assert picked[2][1] == pytest.approx(-0.28)


def test_mmr_edge_cases():
    assert mmr([], np.zeros((0, 2))) == []
    assert len(mmr([("a", 1.0), ("b", 1.0)], np.eye(2), k=1)) == 1
    with pytest.raises(ValueError, match="lambda"):
        mmr([("a", 1.0)], np.eye(1), lambda_=1.5)

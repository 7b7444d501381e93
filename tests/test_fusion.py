"""RRF and MMR on small cases computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.mmr import mmr, normalise_relevance

A = ["d1", "d2", "d3"]
B = ["d3", "d1", "d4"]


def ids(ranking):
    return [doc_id for doc_id, _ in ranking]


# ------------------------------------------------------------------------------------- RRF


def test_rrf_unweighted_by_hand():
    fused = reciprocal_rank_fusion({"bm25": A, "dense": B}, k=60)
    # d1: 1/61 + 1/62 = .032522; d3: 1/63 + 1/61 = .032266; d2: 1/62 = .016129; d4: 1/63
    assert ids(fused) == ["d1", "d3", "d2", "d4"]
    assert [s for _, s in fused] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62,
                                                   1 / 63], abs=1e-15)


def test_rrf_k_changes_the_scores():
    fused = dict(reciprocal_rank_fusion({"bm25": A, "dense": B}, k=0))
    assert fused == pytest.approx({"d1": 1 + 1 / 2, "d3": 1 / 3 + 1, "d2": 1 / 2, "d4": 1 / 3})


def test_rrf_weights_by_hand():
    fused = reciprocal_rank_fusion({"bm25": A, "dense": B}, k=60, weights={"bm25": 1, "dense": 3})
    # d3: 1/63 + 3/61 = .065053 now beats d1: 1/61 + 3/62 = .064780; d4: 3/63 = .047619 beats
    # d2: 1/62 = .016129
    assert ids(fused) == ["d3", "d1", "d4", "d2"]
    assert dict(fused)["d3"] == pytest.approx(1 / 63 + 3 / 61, abs=1e-15)
    assert dict(fused)["d4"] == pytest.approx(3 / 63, abs=1e-15)


def test_rrf_zero_weight_keeps_the_other_lists_order():
    fused = reciprocal_rank_fusion({"bm25": A, "dense": B}, weights={"bm25": 1, "dense": 0})
    # d1 1/61, d2 1/62, d3 1/63 (+0); d4 only in the zero-weighted list: score 0, last
    assert ids(fused) == ["d1", "d2", "d3", "d4"]
    assert dict(fused)["d4"] == 0.0


def test_rrf_equal_scores_break_by_id():
    fused = reciprocal_rank_fusion({"a": ["y", "x"], "b": ["x", "y"]})
    assert fused[0][1] == fused[1][1] == pytest.approx(1 / 61 + 1 / 62)
    assert ids(fused) == ["x", "y"]  # both have best rank 1: id decides


def test_rrf_equal_scores_break_by_best_rank_before_id():
    # u is 62nd in two lists: 2/122 = 1/61, exactly the score of z, which is 1st in one list.
    # a1, b1 and z all score 1/61 with best rank 1 (ordered by id); u has best rank 62 and comes
    # after z although "u" < "z".
    lists = {"a": [f"a{i}" for i in range(1, 62)] + ["u"],
             "b": [f"b{i}" for i in range(1, 62)] + ["u"],
             "c": ["z"]}
    fused = reciprocal_rank_fusion(lists, k=60)
    assert ids(fused)[:6] == ["a1", "b1", "z", "u", "a2", "b2"]
    assert dict(fused)["u"] == dict(fused)["z"] == pytest.approx(1 / 61)


def test_rrf_repeated_id_counts_once_at_its_best_rank():
    fused = dict(reciprocal_rank_fusion({"a": ["x", "y", "x"]}, k=60))
    assert fused == pytest.approx({"x": 1 / 61, "y": 1 / 62})


def test_rrf_rejects_bad_arguments():
    assert reciprocal_rank_fusion({}) == []
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion({"a": A}, k=-1)
    with pytest.raises(ValueError, match="weights name"):
        reciprocal_rank_fusion({"bm25": A, "dense": B}, weights={"BM25": 1, "dense": 1})
    with pytest.raises(ValueError, match=">= 0"):
        reciprocal_rank_fusion({"a": A}, weights={"a": -1})
    with pytest.raises(ValueError, match="string"):
        reciprocal_rank_fusion({"a": "d1"})


# ------------------------------------------------------------------------------------- MMR

# Relevance .9, .8, .5, .1 normalises to 1, .875, .5, 0.
CANDIDATES = [("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.1)]
VECTORS = np.array([
    [1.0, 0.0, 0.0],  # a
    [0.8, 0.6, 0.0],  # b: cos(a, b) = .8
    [0.0, 1.0, 0.0],  # c: cos(a, c) = 0, cos(b, c) = .6
    [0.0, 0.0, 1.0],  # d: orthogonal to all
])


def test_normalise_relevance():
    assert normalise_relevance([0.9, 0.8, 0.5, 0.1]) == pytest.approx([1, 0.875, 0.5, 0])
    assert list(normalise_relevance([0.3, 0.3])) == [1.0, 1.0]


def test_mmr_lambda_one_is_relevance_order():
    picked = mmr(CANDIDATES, VECTORS, lambda_=1.0)
    assert ids(picked) == ["a", "b", "c", "d"]
    assert [s for _, s in picked] == pytest.approx([1, 0.875, 0.5, 0])
    shuffled = [CANDIDATES[i] for i in (2, 0, 3, 1)]
    assert ids(mmr(shuffled, VECTORS[[2, 0, 3, 1]], lambda_=1.0)) == ["a", "b", "c", "d"]


def test_mmr_lambda_06_by_hand():
    picked = mmr(CANDIDATES, VECTORS, lambda_=0.6)
    # 1: .6 * rel -> a .6, b .525, c .3, d 0: a
    # 2: b .525 - .4 * .8 = .205, c .3 - .4 * 0 = .3, d 0: c (not the near-duplicate b)
    # 3: b .525 - .4 * max(.8, .6) = .205, d 0: b
    # 4: d 0
    assert ids(picked) == ["a", "c", "b", "d"]
    assert [s for _, s in picked] == pytest.approx([0.6, 0.3, 0.205, 0.0])


def test_mmr_lambda_03_by_hand():
    picked = mmr(CANDIDATES, VECTORS, lambda_=0.3)
    # 2: b .2625 - .7 * .8 = -.2975, c .15, d 0: c;  3: b -.2975, d 0: d;  4: b
    assert ids(picked) == ["a", "c", "d", "b"]
    assert [s for _, s in picked] == pytest.approx([0.3, 0.15, 0.0, -0.2975])


def test_mmr_is_invariant_to_the_relevance_scale():
    # RRF-sized scores (about 1/60) give the same selection as the same order on any scale.
    rrf_scale = [(d, 0.01 + s / 100) for d, s in CANDIDATES]
    assert ids(mmr(rrf_scale, VECTORS, lambda_=0.6)) == ["a", "c", "b", "d"]
    scaled = [s for _, s in mmr(rrf_scale, VECTORS, lambda_=0.6)]
    assert scaled == pytest.approx([s for _, s in mmr(CANDIDATES, VECTORS, lambda_=0.6)])


def test_mmr_ties_go_to_the_earlier_candidate_and_k_cuts():
    same = [("z", 0.5), ("y", 0.5), ("x", 0.5)]
    assert ids(mmr(same, np.eye(3), lambda_=0.6)) == ["z", "y", "x"]
    assert ids(mmr(CANDIDATES, VECTORS, lambda_=0.6, k=2)) == ["a", "c"]
    assert mmr(CANDIDATES, VECTORS, k=0) == []
    assert mmr([], np.zeros((0, 3))) == []
    assert mmr(CANDIDATES, VECTORS) == mmr(CANDIDATES, VECTORS)


def test_mmr_rejects_bad_arguments():
    with pytest.raises(ValueError, match="lambda"):
        mmr(CANDIDATES, VECTORS, lambda_=1.5)
    with pytest.raises(ValueError, match="shape"):
        mmr(CANDIDATES, VECTORS[:3])
    with pytest.raises(ValueError, match="unique"):
        mmr([("a", 1.0), ("a", 0.5)], np.eye(2))
    with pytest.raises(ValueError, match="k must"):
        mmr(CANDIDATES, VECTORS, k=-1)

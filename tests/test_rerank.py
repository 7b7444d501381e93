"""Reranker mechanics with a small real cross-encoder built here from packaged weights.

No cross-encoder is packaged anywhere reachable, so the model under test is all-MiniLM-L6-v2
(packaged) with a freshly initialised one-logit classification head (fixed seed), saved to a
temporary folder and loaded back through :class:`CrossEncoderReranker`. Its scores mean nothing;
the tests check mechanics only: lengths, determinism, batching, truncation, caching, ordering.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from countercase.retrieve.rerank import (
    CachedReranker,
    CrossEncoderReranker,
    Reranker,
    blend,
    query_key,
    rerank,
    untrained_minilm_cross_encoder,
)

N = 12


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return untrained_minilm_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


@pytest.fixture(scope="module")
def reranker(model_dir):
    return CrossEncoderReranker(model_dir, batch_size=16, max_length=256)


@pytest.fixture(scope="module")
def aila(aila_files):
    judgments = aila_files.casedocs(("C4", "C5"))
    texts = [judgments[f"C{i}"] for i in (4, 5)]
    paras = [p.strip() for t in texts for p in t.split("\n") if 15 < len(p.split()) <= 60]
    passages = [(f"C{i:02d}", text) for i, text in enumerate(dict.fromkeys(paras))][:N]
    assert len(passages) == N
    query = aila_files.queries()["AILA_Q1"]
    return " ".join(query.split()[:40]), passages, " ".join(texts)


@pytest.fixture(scope="module")
def baseline(reranker, aila):
    query, passages, _ = aila
    return reranker.score(query, passages)


class FakeReranker:
    """A deterministic stand-in that records what it was asked."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def score(self, query, passages):
        self.calls.append([chunk_id for chunk_id, _ in passages])
        return [float(len(query) % 7 + len(text) % 11) for _, text in passages]


# --------------------------------------------------------------------------- cross-encoder


def test_scores_one_finite_float_per_passage(reranker, aila, baseline):
    query, passages, _ = aila
    scores = baseline
    assert len(scores) == len(passages)
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
    assert np.std(scores) > 0.01  # the head separates passages
    assert reranker.score(query, []) == []
    assert isinstance(reranker, Reranker)


def test_deterministic(reranker, aila, baseline):
    query, passages, _ = aila
    assert reranker.score(query, passages) == baseline


def test_batched_equals_unbatched_in_another_load(reranker, model_dir, aila, baseline):
    query, passages, _ = aila
    one_by_one = CrossEncoderReranker(model_dir, batch_size=1, max_length=256)
    single = one_by_one.score(query, passages)
    assert np.max(np.abs(np.array(baseline) - np.array(single))) < 1e-5
    # and a passage's score does not depend on its neighbours in the batch
    assert reranker.score(query, passages[3:6]) == pytest.approx(baseline[3:6], abs=1e-5)


def test_long_passages_are_truncated_to_max_length(reranker, aila):
    query, _, long_text = aila
    words = long_text.split()
    assert len(words) > 3000  # far beyond the 512 positions of the model
    passage = " ".join(words[:3000])
    tail_changed = passage + " This sentence lies far beyond the truncation point."
    head_changed = "Unrelated opening words. " + passage
    scores = reranker.score(query, [("long", passage), ("tail", tail_changed),
                                    ("head", head_changed)])
    assert all(math.isfinite(s) for s in scores)
    assert abs(scores[0] - scores[1]) < 1e-5  # the tail was cut off
    assert abs(scores[0] - scores[2]) > 1e-3  # the head was read
    assert reranker.model.max_seq_length == 256


def test_missing_model_dir_fails_without_a_hub(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        CrossEncoderReranker(tmp_path / "cross-encoder-ms-marco")
    with pytest.raises(FileNotFoundError):
        CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")


# --------------------------------------------------------------------------- cache


def test_cache_makes_a_repeated_query_free(reranker, aila, baseline, monkeypatch):
    query, passages, _ = aila
    inner_calls = []
    real_predict = reranker.model.predict

    def counting_predict(pairs, **kwargs):
        inner_calls.append(len(pairs))
        return real_predict(pairs, **kwargs)

    monkeypatch.setattr(reranker.model, "predict", counting_predict)
    cached = CachedReranker(reranker)
    first = cached.score(query, passages[:8])
    assert inner_calls == [8]
    assert cached.stats.as_dict() == {"model_calls": 1, "pairs_scored": 8, "cache_hits": 0}
    assert cached.score(query, passages[:8]) == first  # repeated: zero model calls
    assert inner_calls == [8]
    assert cached.stats.model_calls == 1 and cached.stats.cache_hits == 8
    # overlapping candidates: only the 4 new pairs reach the model, in one call
    mixed = cached.score(query, passages)
    assert inner_calls == [8, 4]
    assert mixed[:8] == first
    assert mixed == pytest.approx(baseline, abs=1e-5)
    assert cached.stats.as_dict() == {"model_calls": 2, "pairs_scored": 12, "cache_hits": 16}


def test_cache_keys_are_query_text_and_chunk_id():
    fake = FakeReranker()
    cached = CachedReranker(fake)
    passages = [("c1", "alpha"), ("c2", "beta gamma")]
    cached.score("query one", passages)
    cached.score("query " + "one", passages)  # equal text, another string object: hits
    assert fake.calls == [["c1", "c2"]]
    cached.score("query two", passages)  # another query: misses
    assert fake.calls == [["c1", "c2"], ["c1", "c2"]]
    scores = cached.score("query one", [("c3", "delta"), ("c3", "delta"), ("c1", "alpha")])
    assert fake.calls[-1] == ["c3"]  # a repeated id in one call is scored once
    assert scores[0] == scores[1]
    assert cached.stats.as_dict() == {"model_calls": 3, "pairs_scored": 5, "cache_hits": 4}
    assert len(cached) == 5 and query_key("query one") == query_key("query " + "one")
    assert isinstance(cached, Reranker)


def test_cache_rejects_an_inner_reranker_that_loses_scores():
    class Broken:
        def score(self, query, passages):
            return [0.0]

    with pytest.raises(ValueError, match="1 scores for 2 passages"):
        CachedReranker(Broken()).score("q", [("a", "x"), ("b", "y")])


# --------------------------------------------------------------------------- rerank


def test_rerank_orders_by_score_and_keeps_ties_in_candidate_order():
    candidates = [("d1", 0.9), ("d2", 0.8), ("d3", 0.7), ("d4", 0.6)]
    assert rerank(candidates, [1.0, 3.0, 1.0, 2.0]) == [
        ("d2", 3.0), ("d4", 2.0), ("d1", 1.0), ("d3", 1.0)]
    assert rerank(["z", "y", "x"], [0.5, 0.5, 0.5]) == [("z", 0.5), ("y", 0.5), ("x", 0.5)]
    assert rerank([], []) == []
    with pytest.raises(ValueError, match="2 candidates but 1 scores"):
        rerank(["a", "b"], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        rerank(["a"], [float("nan")])


def test_blend_mixes_reranker_scores_with_the_first_stage_order():
    scores = [0.1, 0.2, 0.3, 5.0]  # the reranker likes the last candidate best by far
    ids = ["d1", "d2", "d3", "d4"]
    assert blend(scores, 0.0) == scores
    assert [d for d, _ in rerank(ids, blend(scores, 1.0))] == ids  # the first stage's order kept
    assert [d for d, _ in rerank(ids, blend(scores, 0.0))] == ["d4", "d3", "d2", "d1"]
    halfway = [d for d, _ in rerank(ids, blend(scores, 0.4))]
    assert halfway[0] == "d4" and halfway[1:] == ["d1", "d2", "d3"]
    assert [d for d, _ in rerank(ids, blend([1.0] * 4, 0.5))] == ids  # no spread: order kept
    assert blend([], 0.5) == []
    with pytest.raises(ValueError, match="first_stage_weight"):
        blend(scores, 1.5)


def test_rerank_with_the_cross_encoder(aila, baseline):
    _, passages, _ = aila
    scores = baseline
    ranked = rerank(passages, scores)
    assert sorted(d for d, _ in ranked) == sorted(d for d, _ in passages)
    assert [s for _, s in ranked] == sorted(scores, reverse=True)


def test_the_rerankers_validation_searches_each_query_under_its_limit(indexed_corpus,
                                                                        aila_files):
    from conftest import INDEXED_JUDGMENTS, ROOT
    from countercase.config import load_params
    from countercase.datasets import Dataset
    from countercase.datasets.limits import Limit
    from countercase.reranker.run import Validation

    paths, _, _ = indexed_corpus
    texts = aila_files.casedocs(INDEXED_JUDGMENTS[:3])
    queries = {d: text[len(text) // 2:len(text) // 2 + 1500] for d, text in texts.items()}
    limits = {d: Limit(None, frozenset({d})) for d in texts}  # never the query's own judgment
    dataset = Dataset("own/dev", "own", "precedents", queries, {d: {d: 1} for d in texts},
                      limits=limits)
    validation = Validation(load_params(ROOT / "params.yaml"), dataset, paths, 20)
    for qid, candidates in validation.candidates.items():
        assert candidates and all(validation.doc_of[c] != qid for c, _ in candidates)
    assert validation.measure(None)["MAP"] == 0.0  # its only relevant judgment is never found
    free = Dataset("own/free", "own", "precedents", queries, dataset.qrels)
    unlimited = Validation(load_params(ROOT / "params.yaml"), free, paths, 20)
    assert unlimited.measure(None)["MAP"] > 0  # found when nothing hides it
    # a shallower reranking is cut from the scores at the validation depth, not scored again
    scores = [float(i) for i in range(len(unlimited.pairs()))]
    firsts, offset = [], 0
    for qid in unlimited.qids:  # each query's first score
        firsts.append(scores[offset])
        offset += len(unlimited.candidates[qid][:20])
    assert unlimited.head(scores, 1) == firsts
    assert len(unlimited.head(scores, 5)) == len(unlimited.pairs(5))
    assert unlimited.head(scores, 20) == scores
    with pytest.raises(ValueError, match="past the validation depth 20"):
        unlimited.head(scores, 50)

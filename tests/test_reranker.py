"""The domain reranker on real AILA texts: citations, statute links, the leakage guard, the ONNX
export's parity with PyTorch, and a tiny real training run.

Fixtures read ``data/raw`` only: titles of all AILA case documents (the resolver needs the whole
corpus to know what can be cited), a few judgments' texts, the AILA statutes.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

from countercase.citations.links import CitationResolver, mine_citations, read_title
from countercase.citations.run import facts_query
from countercase.extract.act_sections import normalise_sections
from countercase.extract.statutes import statute_frame
from countercase.index.statute_map import map_statutes
from countercase.reranker.pairs import (Group, Miner, drop_leaking,
                                        leaking_documents, statutes_cited)


@pytest.fixture(scope="module")
def corpus(aila_files) -> dict[str, str]:
    return aila_files.casedocs()


@pytest.fixture(scope="module")
def titles(corpus):
    return [t for t in (read_title(d, text) for d, text in corpus.items()) if t is not None]


def _names(citations):
    return [c for c in citations if c.kind == "case_name"]


def test_a_cited_case_is_found_and_an_unknown_one_is_unresolved(corpus, titles):
    # C2040 cites "Francis Coralie Mullin vs. The Administrator, Union Territory of Delhi & Ors."
    # whose judgment is C2500 ("Francis Coralie Mullin v Administrator, Union Territory of Delhi
    # and Others")
    cites = _names(CitationResolver(titles).mentions("C2040", corpus["C2040"]))
    found = [c for c in cites if c.cited == "C2500"]
    assert found and all(c.status == "resolved" for c in found)
    assert "Francis Coralie Mullin" in corpus["C2040"][found[0].start - 40:found[0].start]
    # the same mention, with C2500 gone from the corpus, is reported and left unresolved
    without = CitationResolver([t for t in titles if t.doc_id != "C2500"])
    again = {c.start: c for c in _names(without.mentions("C2040", corpus["C2040"]))}
    assert again[found[0].start].status == "unresolved" and again[found[0].start].cited is None
    assert "Mullin" in again[found[0].start].text
    # and no judgment is found citing itself
    assert all(c.cited != "C2040" for c in cites)


def test_initials_tell_two_cases_of_one_surname_apart(corpus, titles):
    # "A.K. Roy v. Union of India" must not resolve to "P. B. Roy v Union of India"
    text = "The Court in A.K. Roy v. Union of India, (1982) 1 SCC 271 held that"
    assert not [c for c in CitationResolver(titles).mentions("X", "title\n" + text) if c.cited]


def test_reporter_citations_resolve_through_a_name_printed_beside_them(corpus):
    docs = [(d, corpus[d], None) for d in sorted(corpus, key=lambda d: int(d[1:]))[:600]]
    citations, _ = mine_citations(docs)
    reporters = [c for c in citations if c.kind != "case_name" and c.status == "resolved"]
    assert reporters, "no reporter citation resolved in 600 judgments"
    names = {(c.citing, c.cited) for c in citations if c.kind == "case_name" and c.cited}
    # a resolved reporter citation either sits next to a resolved name or repeats one seen so
    assert all(c.cited in {cited for _, cited in names} for c in reporters)


@pytest.mark.slow  # training a real model
def test_a_statute_mention_maps_to_its_aila_statute(raw_dir, corpus, aila_files):
    statutes = aila_files.statutes()
    mapping = map_statutes(((s["statute_id"], s["title"], s["text"]) for s in statutes),
                           statute_frame(raw_dir / "statutes"))
    passage = corpus["C1000"][:1200]  # "... offences under Sections 147, 148, 341, 447, 302 ..."
    sections = normalise_sections(passage)
    assert "IPC-302" in sections
    cited = statutes_cited(sections, mapping)
    assert "S2" in cited  # "Punishment for murder"
    assert all(set(mapping[s]) & set(sections) for s in cited)


def _group(doc, query, pos_doc, pos, negs):
    return Group("precedents", doc, query, pos_doc, pos, tuple(d for d, _ in negs),
                 tuple(t for _, t in negs))


def test_the_leakage_guard_drops_pairs_of_a_planted_near_duplicate(corpus, aila_files):
    queries = aila_files.queries()
    query = queries["AILA_Q30"]
    planted = corpus["C7"] + "\n" + query  # a judgment that holds the test query's facts
    docs = {"C7": planted, "C8": corpus["C8"], "C9": corpus["C9"], "C10": corpus["C10"]}
    leaking = leaking_documents({"AILA_Q30": query, "AILA_Q31": queries["AILA_Q31"]}, docs.items())
    assert list(leaking) == ["C7"] and leaking["C7"][0][0] == "AILA_Q30"
    para = {d: corpus[d][200:700] for d in docs}
    groups = [_group("C8", para["C8"], "C9", para["C9"], [("C10", para["C10"])]),
              _group("C8", para["C8"], "C9", para["C9"], [("C7", para["C7"])]),
              _group("C7", para["C7"], "C9", para["C9"], [("C10", para["C10"])])]
    kept, dropped = drop_leaking(groups, set(leaking))
    assert kept == groups[:1] and dropped == groups[1:]


@pytest.fixture(scope="module")
def real_groups(corpus, titles):
    """Groups from real resolved citations: the citing judgment's facts, the cited judgment's
    best paragraph, paragraphs of uncited judgments as negatives."""
    resolver = CitationResolver(titles)
    links = []
    for doc in sorted(corpus, key=lambda d: int(d[1:]))[:300]:
        for c in resolver.mentions(doc, corpus[doc]):
            if c.cited and (doc, c.cited) not in links:
                links.append((doc, c.cited))
    links = links[:12]
    assert len(links) == 12
    used = {d for pair in links for d in pair}
    rows = [(f"{d}_{i}", d, p) for d in sorted(used | {"C1", "C2", "C3", "C4"})
            for i, p in enumerate(p for p in corpus[d].split("\n") if 40 < len(p.split()) < 150)]
    chunks = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "text"])
    miner = Miner("precedents", chunks, bm25=None)
    rng = random.Random(0)
    groups = []
    for citing, cited in links:
        query = facts_query(corpus[citing], None, 800)
        positive = miner._positive(query, cited)
        others = [r for r in rows if r[1] not in {citing, cited}]
        negatives = [(d, t) for _, d, t in rng.sample(others, 3)]
        groups.append(_group(citing, query, cited, miner.text_of[positive], negatives))
    return groups


def test_negatives_are_never_decided_after_the_citing_judgment(corpus, tmp_path):
    """A judgment only cites older ones: a later negative would teach the model dates, not
    relevance. Real paragraphs of 80 judgments, years from their header dates, a real index."""
    import re

    from countercase.index.bm25 import Bm25Searcher, build_bm25_index

    date = re.compile(r"\b\d{1,2}\s+[A-Z][a-z]+\s+(\d{4})\b")
    docs = sorted(corpus, key=lambda d: int(d[1:]))[:80]
    years = {d: int(m.group(1)) for d in docs
             if (m := date.search("\n".join(corpus[d].splitlines()[:6])))}
    rows = [(f"{d}_{i}", d, para) for d in years
            for i, para in enumerate(p for p in corpus[d].split("\n") if 40 < len(p.split()) < 150)]
    chunks = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "text"])
    index = build_bm25_index(({"id": c, "contents": t, "doc_id": d, "year": years[d]}
                              for c, d, t in rows), tmp_path / "chunks")
    ordered = sorted(years, key=lambda d: (years[d], d))
    citing = ordered[len(ordered) // 2]  # as many judgments before it as after it
    query = facts_query(corpus[citing], None, 800)
    positive = ordered[0]
    with Bm25Searcher(index) as bm25:
        timed = Miner("precedents", chunks, bm25, negatives=3, negative_skip=0, search_depth=300,
                      year_of=years)
        untimed = Miner("precedents", chunks, bm25, negatives=3, negative_skip=0, search_depth=300)
        pool = timed._negative_pool(query, {citing, positive}, years[citing])
        unfiltered = untimed._negative_pool(query, {citing, positive})
        (group,) = timed.groups(citing, query, [positive], set(), random.Random(0))
    assert pool and all(years[d] <= years[citing] for _, d in pool)
    assert any(years[d] > years[citing] for _, d in unfiltered)  # the rule has work to do
    assert all(years[d] <= years[citing] for d in group.negative_docs)


@pytest.fixture(scope="module")
def untrained_dir(tmp_path_factory):
    from countercase.retrieve.rerank import untrained_minilm_cross_encoder

    return untrained_minilm_cross_encoder(tmp_path_factory.mktemp("ce"))


@pytest.mark.slow  # training a real model
def test_onnx_scores_match_pytorch_and_do_not_depend_on_their_batch(untrained_dir, real_groups,
                                                                     tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from countercase.reranker.onnx import export_onnx, parity
    from countercase.reranker.train import score_pairs
    from countercase.retrieve.rerank import FP32, OnnxCrossEncoderReranker, trained_length

    pairs = [(g.query, p) for g in real_groups[:6] for p in (g.positive, *g.negatives)]
    model = AutoModelForSequenceClassification.from_pretrained(str(untrained_dir)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(untrained_dir))
    # the export reads pairs at the model's own length unless told otherwise
    reference = score_pairs(model, tokenizer, pairs, trained_length(untrained_dir))
    export_onnx(untrained_dir, tmp_path)
    reranker = OnnxCrossEncoderReranker(tmp_path, FP32)
    fp32 = parity(reference, reranker.score_pairs(pairs))
    assert fp32["max_abs_diff"] <= 1e-3 * max(1.0, fp32["score_std"])  # float noise only
    alone = reranker.score_pairs(pairs[:1])  # a pair's score is the same in any batch
    assert abs(alone[0] - reranker.score_pairs(pairs)[0]) <= 1e-4 * max(1.0, fp32["score_std"])
    assert reranker.score("q", []) == []
    assert len(reranker.score(pairs[0][0], [("a", pairs[0][1]), ("b", pairs[1][1])])) == 2
    # int8 with static scales read from pairs (configs/int8_rule.yaml's cross-encoder lines,
    # benchmarks/int8_reranker.py): the same ranking up to noise, made once
    from countercase.index.encoders import quantise_static

    int8_file = quantise_static(tmp_path, pairs[::2], "MinMax", trained_length(untrained_dir), 4)
    assert quantise_static(tmp_path, pairs[::2], "MinMax",
                           trained_length(untrained_dir), 4) == int8_file
    int8 = parity(reranker.score_pairs(pairs),
                  OnnxCrossEncoderReranker(tmp_path, int8_file.name).score_pairs(pairs))
    assert int8["spearman"] > 0.8 and int8["max_abs_diff"] > 0  # an approximation, not a copy


@pytest.mark.slow  # training a real model
def test_a_tiny_real_training_run_lowers_the_loss(real_groups, tmp_path):
    from countercase.reranker.train import group_loss, load_backbone, train

    tokenizer, model = load_backbone(seed=7)
    before = group_loss(model, tokenizer, real_groups, 128)
    after = {}
    result = train(real_groups, tmp_path / "model", seed=7, max_length=128, groups_per_step=2,
                   learning_rate=1e-4, warmup_fraction=0.0, max_steps=0,
                   curve_at=(0.5, 1.0), log_every=2,
                   keep=lambda m, t: after.update(loss=group_loss(m, t, real_groups, 128)))
    assert result.steps == 6 and not result.stopped_by_budget
    assert after["loss"] < before
    assert (tmp_path / "model" / "config.json").is_file()
    assert [c["fraction_of_pairs"] for c in result.curve] == [0.0, 0.5, 1.0]
    # the length it trained at is the length it is served at
    from countercase.retrieve.rerank import OnnxCrossEncoderReranker, trained_length
    from countercase.reranker.onnx import export_onnx

    assert trained_length(tmp_path / "model") == 128
    export_onnx(tmp_path / "model", tmp_path / "onnx")
    assert OnnxCrossEncoderReranker(tmp_path / "onnx", "model.onnx").max_length == 128


class _Interrupted(Exception):
    """A session ending in the middle of a run."""


@pytest.mark.slow  # training a real model
def test_an_interrupted_training_run_goes_on_to_the_same_model(real_groups, tmp_path):
    import torch

    from countercase.reranker.train import group_loss, train

    groups = real_groups[:8]  # 4 steps of 2 groups; checkpoints after steps 2 and 4
    settings = dict(seed=7, max_length=64, groups_per_step=2, learning_rate=1e-4,
                    warmup_fraction=0.0, curve_at=(0.5, 1.0), log_every=1)

    def run(out, stop_at_call=None, resume=None):
        calls, final = [], {}

        def validate(model, tokenizer):
            calls.append(1)
            if len(calls) == stop_at_call:
                raise _Interrupted
            return {"score": -group_loss(model, tokenizer, groups[:4], 64)}

        result = train(groups, out, validate=validate, resume=resume, resume_every=1,
                       keep=lambda m, t: final.update(m.state_dict()), **settings)
        return result, final

    whole, weights = run(tmp_path / "whole")
    saved = (tmp_path / "resume", "the stage's inputs")
    with pytest.raises(_Interrupted):  # in the checkpoint after step 4: the last state is step 3's
        run(tmp_path / "cut", stop_at_call=3, resume=saved)
    assert (saved[0] / "state.pt").is_file() and (saved[0] / "best").is_dir()
    went_on, went_on_weights = run(tmp_path / "cut", resume=saved)
    assert went_on.resumed_at == [3]
    for name, tensor in weights.items():
        assert torch.equal(tensor, went_on_weights[name]), name
    assert went_on.losses == whole.losses and went_on.curve == whole.curve
    assert went_on.best == whole.best
    assert (tmp_path / "cut" / "config.json").is_file()
    # a finished state is not trained again: the same model at once
    again, again_weights = run(tmp_path / "again", resume=saved)
    assert again.resumed_at == [3, 4] and again.steps == 4
    assert all(torch.equal(t, again_weights[n]) for n, t in weights.items())
    assert (tmp_path / "again" / "config.json").is_file()  # the best checkpoint, restored
    # a state of other inputs is set aside
    other, other_weights = run(tmp_path / "other", resume=(saved[0], "other inputs"))
    assert other.resumed_at == [] and other.losses == whole.losses


def test_a_damaged_saved_state_is_named_and_training_starts_over(tmp_path, caplog):
    import logging

    from countercase.reranker.train import Resume

    (tmp_path / "state.pt").write_bytes(b"PK\x03\x04 cut off")
    with caplog.at_level(logging.WARNING, logger="countercase.reranker.train"):
        assert Resume(tmp_path, "key").load() is None
    assert "state.pt" in caplog.text and "unreadable" in caplog.text


def test_a_damaged_tokenizer_config_is_named_not_a_stack_trace(tmp_path):
    from countercase.errors import CountercaseError
    from countercase.retrieve.rerank import trained_length

    assert trained_length(tmp_path) == 256  # no config: the default
    config = tmp_path / "tokenizer_config.json"
    config.write_text('{"model_max_length": 384}')
    assert trained_length(tmp_path) == 384
    config.write_text('{"model_max_length": 38')  # cut off mid-write
    with pytest.raises(CountercaseError, match="tokenizer_config.json"):
        trained_length(tmp_path)

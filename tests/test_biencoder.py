"""The dense encoder fine-tuned on citation pairs: the split, the in-batch mask, the dev score,
a short real training run and the stage's refusals, on AILA judgments."""

from __future__ import annotations

import json

import numpy as np
import pytest

from countercase.biencoder.run import (GroupsError, pool_map, read_pairs, resume_inputs,
                                       run_train_biencoder)
from countercase.biencoder.train import Pair, in_batch_mask, train
from countercase.config import Params
from countercase.datasets.citations import read_citations
from countercase.runtime.models import MINILM, encoder_dir
from countercase.training.learning_check import NotLearnedError
from countercase.training.splits import held_back, tuning_split

DOCS = [f"C{i}" for i in range(1, 25)]


def paragraphs(text: str, n: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i * 60:(i + 1) * 60]) for i in range(n)]


@pytest.fixture(scope="module")
def collection(tmp_path_factory, aila_files):
    """A citation collection over 24 AILA judgments: C1..C12 are queries (their first words),
    each citing the next two judgments; groups as the reranker stage writes them."""
    folder = tmp_path_factory.mktemp("citations")
    texts = aila_files.casedocs(DOCS)
    queries = DOCS[:12]
    cited = {q: [DOCS[i + 1], DOCS[i + 2]] for i, q in enumerate(queries)}
    rows = lambda rs: "".join("\t".join(map(str, r)) + "\n" for r in rs)  # noqa: E731
    (folder / "topics.tsv").write_text(rows([q, " ".join(texts[q].split()[:80])]
                                            for q in queries))
    (folder / "cases.tsv").write_text(rows([q, 2000, "tuning" if i < 9 else "heldout"]
                                           for i, q in enumerate(queries)))
    (folder / "judgments.tsv").write_text(rows([d, 2000, ""] for d in DOCS))
    (folder / "copies.tsv").write_text("")
    (folder / "links.tsv").write_text(rows([q, c] for q in queries for c in cited[q]))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {c} 1\n" for q in queries
                                              for c in cited[q]))
    groups = folder / "groups.jsonl"
    with groups.open("w") as handle:
        for i, q in enumerate(queries):
            for c in cited[q]:
                negative = DOCS[(i + 7) % len(DOCS)]
                handle.write(json.dumps({
                    "task": "precedents", "query_doc": q, "query": texts[q][:500],
                    "positive_doc": c, "positive": paragraphs(texts[c], 1)[0],
                    "negative_docs": [negative], "negatives": [paragraphs(texts[negative], 2)[1]]})
                    + "\n")
            handle.write(json.dumps({"task": "statutes", "query_doc": q, "query": "x",
                                     "positive_doc": "S1", "positive": "y",
                                     "negative_docs": ["S2"], "negatives": ["z"]}) + "\n")
    return folder, groups


def test_the_split_keeps_the_heldout_half_out_and_is_seeded(collection):
    folder, groups = collection
    citations = read_citations(folder)
    train_q, dev_q = tuning_split(citations, 1 / 3, 2019)
    assert len(dev_q) == 3 and len(train_q) == 6
    assert set(train_q) | set(dev_q) == set(citations.qids("tuning"))
    assert not set(train_q) & set(dev_q)
    assert tuning_split(citations, 1 / 3, 2019) == (train_q, dev_q)
    assert tuning_split(citations, 1 / 3, 7) != (train_q, dev_q)
    pairs = read_pairs(groups, citations, set(train_q))
    assert len(pairs) == 12  # two precedent pairs each; the statute groups are not read
    assert {p.query_doc for p in pairs} == set(train_q)
    assert all(p.query == citations.topics[p.query_doc] for p in pairs)  # the masked text


def test_the_held_out_and_dev_queries_and_their_copies_never_train(collection, tmp_path):
    import shutil

    folder, _ = collection
    copied = tmp_path / "citations"
    shutil.copytree(folder, copied)
    train_q, dev_q = tuning_split(read_citations(copied), 1 / 3, 2019)
    (copied / "copies.tsv").write_text(f"C10\tC20\n{dev_q[0]}\tC21\n{train_q[0]}\tC22\n")
    held = held_back(read_citations(copied), 1 / 3, 2019)
    assert held == {"C10", "C11", "C12", *dev_q, "C20", "C21"}
    assert not held & set(train_q) and "C22" not in held  # a train query's copy may train


def test_a_passage_the_query_cites_is_not_its_negative():
    pairs = [Pair("C1", "q1", "C2", "p", "C9", "n"), Pair("C1", "q1", "C3", "p", "C8", "n"),
             Pair("C4", "q4", "C2", "p", "C3", "n")]
    links = {("C1", "C2"), ("C1", "C3"), ("C4", "C2")}
    keep = in_batch_mask(pairs, lambda a, b: (a, b) in links).tolist()
    # columns: positives C2, C3, C2, then negatives C9, C8, C3
    assert keep[0] == [True, False, False, True, True, False]
    assert keep[1] == [False, True, False, True, True, False]
    assert keep[2] == [False, True, True, True, True, True]


def test_the_dev_score_ranks_the_pool(collection):
    folder, groups = collection
    citations = read_citations(folder)
    pairs = read_pairs(groups, citations, set(citations.qids("tuning")))
    qids = sorted({p.query_doc for p in pairs})
    doc_of = {p.positive: p.positive_doc for p in pairs} | {p.negative: p.negative_doc
                                                            for p in pairs}
    query_of = {citations.topics[q]: q for q in qids}

    def encoder(sign: float):  # a query: its own axis; a passage: the axes of the queries citing it
        def embed(texts):
            return np.array([[float(query_of.get(t) == q) if t in query_of else
                              sign * float(citations.qrels[q].get(doc_of[t], 0) > 0)
                              for q in qids] for t in texts])
        return embed

    assert pool_map(encoder(1.0), pairs, citations) == 1.0
    assert pool_map(encoder(-1.0), pairs, citations) < 0.5


@pytest.mark.slow  # training a real model
def test_training_lowers_the_loss_and_a_seed_gives_one_model(collection, tmp_path):
    folder, groups = collection
    citations = read_citations(folder)
    pairs = read_pairs(groups, citations, set(citations.qids()))
    links = set(citations.links)
    runs = []
    for name in ("a", "b"):
        result = train(pairs, encoder_dir(MINILM), tmp_path / name, lambda a, b: (a, b) in links,
                       seed=3, epochs=2, batch_size=3, learning_rate=1e-4, max_length=64,
                       max_steps=6, curve_at=(1.0,), log_every=2,
                       validate=lambda model: {"score": 0.0})
        runs.append(result)
    assert runs[0].steps == 6 and runs[0].steps_planned == 16 and runs[0].stopped_by_budget
    assert runs[0].losses == runs[1].losses  # the same seed, the same steps, the same losses
    assert runs[0].losses[-1] < runs[0].losses[0]
    assert (tmp_path / "a" / "modules.json").is_file()
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == \
           (tmp_path / "b" / "model.safetensors").read_bytes()


class _Interrupted(Exception):
    pass


@pytest.mark.slow  # training a real model
def test_an_interrupted_training_run_goes_on_to_the_same_model(collection, tmp_path):
    from countercase.biencoder.train import batch_loss

    folder, groups = collection
    citations = read_citations(folder)
    pairs = read_pairs(groups, citations, set(citations.qids()))
    links = set(citations.links)
    cites = lambda a, b: (a, b) in links  # noqa: E731

    def run(out, stop_at_call=None, resume=None):
        calls = []

        def validate(model):  # checkpoints after steps 4 and 6 (and the untrained model)
            calls.append(1)
            if len(calls) == stop_at_call:
                raise _Interrupted
            return {"score": -batch_loss(model, pairs[:3], cites, 20.0).item()}

        return train(pairs, encoder_dir(MINILM), out, cites, seed=3, epochs=2, batch_size=3,
                     learning_rate=1e-4, max_length=64, max_steps=6, curve_at=(0.25, 1.0),
                     log_every=1, validate=validate, resume=resume, resume_every=1)

    whole = run(tmp_path / "whole")
    saved = (tmp_path / "resume", "the stage's inputs")
    with pytest.raises(_Interrupted):  # in the checkpoint after step 6: the last state is step 5's
        run(tmp_path / "cut", stop_at_call=3, resume=saved)
    assert (saved[0] / "state.pt").is_file() and (saved[0] / "best").is_dir()
    went_on = run(tmp_path / "cut", resume=saved)
    assert went_on.resumed_at == [5] and whole.resumed_at == []
    # the cut run's seconds up to its last state count, so the stage's time is not this run's
    assert 0 < went_on.seconds_before < went_on.seconds and whole.seconds_before == 0
    assert went_on.counts()["seconds_in_earlier_runs"] == round(went_on.seconds_before, 1)
    assert went_on.losses == whole.losses and went_on.curve == whole.curve
    assert (tmp_path / "cut" / "model.safetensors").read_bytes() == \
           (tmp_path / "whole" / "model.safetensors").read_bytes()
    other = run(tmp_path / "other", resume=(saved[0], "other inputs"))  # not taken up
    assert other.resumed_at == [] and other.losses == whole.losses


def test_a_saved_state_outlives_a_change_to_another_stage_s_parameters():
    dev = [Pair("C1", "facts", "C2", "cited", "C3", "not cited")]
    base = Params()
    key = resume_inputs(base, dev)
    elsewhere = base.model_copy(update={"retrieve": base.retrieve.model_copy(
        update={"steps": ("bm25",)})})
    saving = base.model_copy(update={"biencoder": base.biencoder.model_copy(
        update={"resume_every": base.biencoder.resume_every + 1})})
    assert resume_inputs(elsewhere, dev) == key and resume_inputs(saving, dev) == key
    own = base.model_copy(update={"biencoder": base.biencoder.model_copy(
        update={"learning_rate": base.biencoder.learning_rate * 2})})
    assert resume_inputs(own, dev) != key
    assert resume_inputs(base, [Pair("C1", "facts", "C2", "cited", "C4", "not cited")]) != key


@pytest.mark.slow  # training a real model
def test_the_stage_refuses_an_encoder_that_did_not_learn(collection, tmp_path):
    folder, groups = collection
    params = Params().model_copy(update={"biencoder": Params().biencoder.model_copy(update={
        "max_steps": 1, "max_length": 32, "batch_size": 4, "min_dev_gain": 0.5})})
    with pytest.raises(NotLearnedError, match="dev MAP gain"):
        run_train_biencoder(params, groups, folder, tmp_path / "out")
    assert not (tmp_path / "out" / "model").exists()  # nothing for a later stage to read
    empty = tmp_path / "groups.jsonl"
    empty.write_text("")
    with pytest.raises(NotLearnedError, match="too few"):
        run_train_biencoder(Params(), empty, folder, tmp_path / "out")


def test_a_damaged_groups_file_is_named_with_its_line(collection, tmp_path, run_cli):
    folder, groups = collection
    damaged = tmp_path / "groups.jsonl"
    lines = groups.read_text().splitlines()
    damaged.write_text("\n".join([lines[0], lines[1][:40], *lines[2:]]) + "\n")
    citations = read_citations(folder)
    with pytest.raises(GroupsError, match=r"groups.jsonl, line 2: not a group"):
        read_pairs(damaged, citations, set(citations.qids()))
    code, _, err = run_cli("train-biencoder", "--groups", str(damaged), "--citations", str(folder),
                           "--out", str(tmp_path / "out"))
    assert code == 2 and "line 2" in err and "a bug" not in err

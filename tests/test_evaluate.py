"""The evaluation harness: measures and tests against hand-computed cases, a TREC collection
end to end on real statutes and AILA queries, and the regression file of a real condition."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from countercase.aila import TEST, read_queries
from countercase.config import load_params
from countercase.evaluate.collection import (QrelsError, aila_collection, read_qrels,
                                             read_tsv_topics, unretrievable)
from countercase.evaluate.conditions import BY_NAME
from countercase.evaluate.measures import aggregate, per_query
from countercase.evaluate.regressions import regression_path
from countercase.evaluate.run import run_condition
from countercase.evaluate.significance import holm, paired
from countercase.index.bm25 import build_bm25_index
from countercase.index.run import plain_doc_records, statute_documents
from countercase.retrieve.load import IndexPaths

ROOT_REGRESSIONS = __import__("pathlib").Path(__file__).resolve().parents[1] / "regressions"


def test_measures_on_a_hand_computed_ranking():
    qrels = {"q1": {"a": 1, "b": 1, "c": 0, "d": 0}, "q2": {"x": 1}}
    run = {"q1": [("a", 3.0), ("c", 2.0), ("b", 1.0)]}  # q2 is not answered
    table = per_query(qrels, run, ("q1", "q2"))
    q1 = table.loc["q1"]
    assert q1["MAP"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert q1["P@10"] == pytest.approx(0.2) and q1["RR"] == 1.0 and q1["R@5"] == 1.0
    # bpref: a is above no judged non-relevant, b is above one of min(R=2, N=2) = 2
    assert q1["BPREF"] == pytest.approx((1 + (1 - 1 / 2)) / 2)
    assert (table.loc["q2"] == 0).all()
    assert aggregate(table)["MAP"] == pytest.approx(round(q1["MAP"] / 2, 4))


def test_holm_and_paired_tests():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adjusted == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    same = paired(np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, 0.3]))
    assert same["t_p"] is None and same["wilcoxon_p"] is None and same["mean_diff"] == 0
    better = paired(np.linspace(0.2, 0.9, 20), np.linspace(0.1, 0.8, 20) - 0.01 * np.arange(20) % 3)
    assert better["mean_diff"] > 0 and better["t_p"] < 0.01 and better["cohens_d"] > 0


def test_bad_qrels_and_topics_name_the_line(tmp_path):
    (tmp_path / "q.txt").write_text("AILA_Q1 Q0 S1 1\nAILA_Q1 S2 1\n")
    with pytest.raises(QrelsError, match=r"q\.txt:2"):
        read_qrels(tmp_path / "q.txt")
    (tmp_path / "t.tsv").write_text("q1\tfacts\nq2 no tab here\n")
    with pytest.raises(ValueError, match=r"t\.tsv:2"):
        read_tsv_topics(tmp_path / "t.tsv")


def test_aila_collections_and_the_statute_without_text(raw_dir):
    task1 = aila_collection("aila2019-task1", raw_dir / "aila2019")
    task2 = aila_collection("aila2019-task2", raw_dir / "aila2019")
    assert len(task1.topics) == 50 and task1.test_qids() == TEST and len(TEST) == 40
    assert sum(len(j) for j in task1.qrels.values()) == 50 * 2914  # every document judged
    statutes = {d.doc_id for d in statute_documents(raw_dir / "aila2019/Object_statutes.tar.gz")}
    assert len(statutes) == 197
    assert unretrievable(task2.qrels, statutes) == {
        "S58": ["AILA_Q2", "AILA_Q33", "AILA_Q49", "AILA_Q50"]}


@pytest.fixture(scope="module")
def trec_collection(tmp_path_factory, raw_dir):
    """Real statutes as documents, four real AILA queries as topics, their real qrels."""
    root = tmp_path_factory.mktemp("trec")
    qids = ["AILA_Q1", "AILA_Q2", "AILA_Q3", "AILA_Q4"]
    qrels = read_qrels(raw_dir / "aila2019/relevance_judgments_statutes.txt")
    keep = {f"S{i}" for i in range(1, 31)} | {d for q in qids for d, r in qrels[q].items() if r}
    docs = [d for d in statute_documents(raw_dir / "aila2019/Object_statutes.tar.gz")
            if d.doc_id in keep]
    lines = [json.dumps({"id": d.doc_id, "contents": d.text}) for d in docs]
    lines.insert(3, "{not json")  # a damaged line: reported, the rest goes on
    (root / "docs.jsonl").write_text("\n".join(lines) + "\n")
    queries = read_queries(raw_dir / "aila2019/Query_doc.txt")
    (root / "topics.tsv").write_text("".join(f"{q}\t{queries[q]}\n" for q in qids))
    (root / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q in qids
                                            for d, r in qrels[q].items() if d in keep))
    return root, len(docs)


def test_a_trec_collection_runs_through_the_same_command(trec_collection, run_cli):
    root, n_docs = trec_collection
    out = root / "out"
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"),
                     "--topics", str(root / "topics.tsv"), "--qrels", str(root / "qrels.txt"),
                     "--out", str(out), "--metrics", str(root / "scores.json"),
                     "--condition", "bm25_docs", "--condition", "hybrid_rrf")
    assert code == 0, err
    failures = [json.loads(line) for line in (out / "index/failures.jsonl").read_text().splitlines()]
    assert len(failures) == 1 and failures[0]["source_path"].endswith("docs.jsonl:4")
    scores = json.loads((root / "scores.json").read_text())["topics"]
    assert set(scores) == {"bm25_docs", "hybrid_rrf"} and 0 < scores["hybrid_rrf"]["MAP"] <= 1
    run = pd.read_csv(out / "topics/bm25_docs.run", sep=" ", header=None)
    assert set(run[0]) == {"AILA_Q1", "AILA_Q2", "AILA_Q3", "AILA_Q4"}
    assert run.groupby(0).size().max() <= n_docs
    table = pd.read_csv(out / "topics/per_query.csv")
    assert len(table) == 2 * 4 and {"condition", "qid", "MAP", "R@20"} <= set(table.columns)


def test_evaluate_rejects_bad_arguments(trec_collection, run_cli):
    root, _ = trec_collection
    code, _, err = run_cli("evaluate", "--condition", "bm26")
    assert code == 2 and "unknown condition(s) bm26" in err
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"))
    assert code == 2 and "--docs, --topics and --qrels together" in err


def test_bm25_over_whole_statutes_reproduces_its_regression_file(tmp_path, raw_dir):
    expected = yaml.safe_load(regression_path(ROOT_REGRESSIONS, "aila2019-task2", "bm25_docs")
                              .read_text())
    statutes = statute_documents(raw_dir / "aila2019/Object_statutes.tar.gz")
    build_bm25_index(plain_doc_records(statutes), tmp_path / "statutes_docs")
    collection = aila_collection("aila2019-task2", raw_dir / "aila2019")
    params = load_params()
    assert expected["config"]["evaluate"] == params.evaluate.model_dump()
    run = run_condition(BY_NAME["bm25_docs"], collection, IndexPaths(index_dir=tmp_path),
                        params.retrieve, params.evaluate)
    scores = aggregate(per_query(collection.qrels, run, collection.test_qids()))
    for measure, value in expected["expected"].items():
        assert scores[measure] == pytest.approx(value, abs=expected["tolerance"]), measure

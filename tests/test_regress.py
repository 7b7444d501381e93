"""Regressions as committed inputs: ``countercase regress`` re-runs a condition and fails, naming
the collection, condition and measure, when a score moved; the evaluate stage never writes them.

The condition that runs on a fixture in seconds: BM25 over the 197 whole statutes (Task 2),
indexed here exactly as the index stage indexes them."""

from __future__ import annotations

import shutil

import pytest
import yaml

from conftest import ROOT

REGRESSIONS = ROOT / "regressions"
REF = "aila2019-task2/bm25_docs"


@pytest.fixture(scope="module")
def fixture(tmp_path_factory, aila_files):
    from countercase.config import ExtractParams
    from countercase.index.bm25 import build_bm25_index
    from countercase.index.run import plain_chunk_table, plain_doc_records, statute_documents

    root = tmp_path_factory.mktemp("regress")
    statutes = statute_documents(aila_files.dir / "Object_statutes.tar.gz")
    build_bm25_index(plain_doc_records(statutes), root / "index" / "statutes_docs")
    plain_chunk_table(statutes, ExtractParams(), "Statute").to_parquet(
        root / "index" / "statutes_chunks.parquet")  # what --update records of the index
    return root


@pytest.fixture
def regressions(tmp_path):
    shutil.copytree(REGRESSIONS, tmp_path / "regressions")
    return tmp_path / "regressions"


def _verify(run_cli, fixture, regressions, *extra):
    return run_cli("regress", "--verify", REF, "--regressions", str(regressions),
                   "--index-dir", str(fixture / "index"), "--documents",
                   str(fixture / "no-documents.jsonl"), "--chunks", str(fixture / "none.parquet"),
                   *extra)


def test_a_moved_score_fails_and_names_what_moved(run_cli, fixture, regressions):
    code, _, err = _verify(run_cli, fixture, regressions)
    assert code == 0, err
    path = regressions / "aila2019-task2" / "bm25_docs.yaml"
    original = path.read_text()
    record = yaml.safe_load(original)
    record["expected"]["MAP"] = round(record["expected"]["MAP"] + 0.01, 4)
    path.write_text(yaml.safe_dump(record, sort_keys=False))
    code, _, err = _verify(run_cli, fixture, regressions)
    assert code == 1
    moved = [line for line in err.splitlines() if "aila2019-task2" in line]
    assert len(moved) == 1 and "bm25_docs" in moved[0] and "MAP" in moved[0], err
    assert "1 drift(s)" in err
    path.write_text(original)
    code, _, err = _verify(run_cli, fixture, regressions)
    assert code == 0, err


def test_a_changed_configuration_is_a_drift(run_cli, fixture, regressions, tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["evaluate"]["depth"] = 100
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    code, _, err = _verify(run_cli, fixture, regressions, "--params", str(tmp_path / "params.yaml"))
    assert code == 1 and "config: evaluate.depth" in err


def test_the_committed_files_are_the_reproduction_matrix():
    from countercase.evaluate.regressions import read_regressions, render_matrix

    records = read_regressions(REGRESSIONS)
    assert {(r["collection"], r["condition"]) for r in records} >= {
        ("aila2019-task1", "full"), ("aila2019-task2", "full"), ("aila2019-task2", "bm25_docs")}
    for r in records:
        assert r["command"] == f"countercase regress --verify {r['collection']}/{r['condition']}"
        assert r["updates"] and r["updates"][-1]["reason"]
    assert (REGRESSIONS / "README.md").read_text() == render_matrix(REGRESSIONS) + "\n"


def test_update_needs_a_reason_and_records_it(run_cli, fixture, regressions, tmp_path):
    path = regressions / "aila2019-task2" / "bm25_docs.yaml"
    before = yaml.safe_load(path.read_text())
    code, _, err = run_cli("regress", "--update", REF, "--regressions", str(regressions))
    assert code == 2 and "--reason" in err
    args = ["--regressions", str(regressions), "--documents", str(fixture / "none.jsonl"),
            "--reason", "a test re-records it"]
    code, _, err = run_cli("regress", "--update", REF, "--index-dir", str(tmp_path), *args)
    assert code == 2 and "statutes_chunks.parquet" in err  # no index: nothing written
    assert yaml.safe_load(path.read_text()) == before
    code, _, err = run_cli("regress", "--update", REF, "--index-dir", str(fixture / "index"), *args)
    assert code == 0, err
    after = yaml.safe_load(path.read_text())
    assert after["expected"] == before["expected"]  # the same run scores the same
    assert after["updates"][:-1] == before["updates"]
    assert after["updates"][-1]["reason"] == "a test re-records it"
    assert after["index"] == {"documents": 197}
    assert "a test re-records it" in (regressions / "README.md").read_text()


def test_a_cpu_class_is_checked_against_its_own_record(run_cli, fixture, regressions):
    from countercase.runtime.cpu import cpu_class

    path = regressions / "aila2019-task2" / "bm25_docs.yaml"
    before = yaml.safe_load(path.read_text())
    code, _, err = run_cli("regress", "--update", REF, "--cpu-class", "--regressions",
                           str(regressions), "--index-dir", str(fixture / "index"), "--documents",
                           str(fixture / "none.jsonl"), "--reason", "this class's own record")
    assert code == 0, err
    after = yaml.safe_load(path.read_text())
    own = after.pop("by_cpu")
    assert after == before  # the reference stays as it was
    assert list(own) == [cpu_class()] and own[cpu_class()]["expected"] == before["expected"]
    assert "this class's own record" in (regressions / "README.md").read_text()

    def planted(cpu, shift):
        record = yaml.safe_load(path.read_text())
        record["by_cpu"] = {cpu: {**own[cpu_class()], "expected": {
            **before["expected"], "MAP": round(before["expected"]["MAP"] + shift, 4)}}}
        path.write_text(yaml.safe_dump(record, sort_keys=False))
    planted("another CPU / avx2", 0.01)  # another class's record: not this run's check
    code, _, err = _verify(run_cli, fixture, regressions)
    assert code == 0, err
    planted(cpu_class(), 0.01)  # this class's own: checked instead of the reference
    code, _, err = _verify(run_cli, fixture, regressions)
    assert code == 1 and "MAP" in err


def test_run_files_are_verified_without_re_running(run_cli, fixture, regressions, tmp_path):
    from countercase.datasets import load
    from countercase.experiment import Experiment
    from countercase.retrieve.steps import bm25_docs_system

    dataset = load("aila2019/task2/test", ROOT / "data/raw/aila2019")
    Experiment({"bm25_docs": bm25_docs_system(fixture / "index" / "statutes_docs", 1000)},
               dataset, out=tmp_path / "runs" / "aila2019-task2")
    code, _, err = run_cli("regress", "--verify", REF, "--regressions", str(regressions),
                           "--runs", str(tmp_path / "runs"))
    assert code == 0, err
    code, _, err = run_cli("regress", "--verify", "aila2019-task2/full", "--regressions",
                           str(regressions), "--runs", str(tmp_path / "runs"))
    assert code == 1 and "not run" in err  # no run file: a failure, not a pass


def test_unknown_regressions_and_arguments_are_user_errors(run_cli, regressions):
    code, _, err = run_cli("regress", "--verify", "bm26", "--regressions", str(regressions))
    assert code == 2 and "no regression 'bm26'" in err
    code, _, err = run_cli("regress", "--regressions", str(regressions), "--all")
    assert code == 2 and "--verify" in err
    code, _, err = run_cli("regress", "--verify", "--all", "--regressions", str(regressions / "x"))
    assert code == 2 and "no regression files in" in err  # never "0 verified, no drift"
    (regressions / "aila2019-task1" / "broken.yaml").write_text("collection: [\n")
    code, _, err = run_cli("regress", "--verify", "--all", "--regressions", str(regressions))
    assert code == 2 and "broken.yaml" in err and len(err.strip().splitlines()) == 1


def test_re_running_a_tuned_condition_reads_the_tuning_choice(run_cli, fixture, regressions,
                                                              tmp_path, caplog):
    """The systems that name chosen values run with the tune stage's choice: ``--verify``
    without ``--runs`` reads it, and a choice without the value, or none, fails the condition
    with the reason named."""
    lever = "aila2019-task1/docs_tuned"
    broken = tmp_path / "tuning_choice.yaml"
    broken.write_text("precedents: {docs: {k1: 0.9}}\n")
    code, _, err = _verify(run_cli, fixture, regressions, "--choice", str(broken))
    assert code == 0, err  # a condition without chosen values does not need the choice
    code, _, err = run_cli("regress", "--verify", lever, "--regressions", str(regressions),
                           "--index-dir", str(fixture / "index"), "--choice", str(broken))
    assert code == 1 and "docs_tuned" in err
    assert f"docs_tuned skipped: {broken} holds no precedents.docs.b" in caplog.text
    code, _, err = run_cli("regress", "--verify", lever, "--regressions", str(regressions),
                           "--index-dir", str(fixture / "index"),
                           "--choice", str(tmp_path / "none.yaml"))
    assert code == 1 and "not run" in err


def test_the_opt_in_evaluation_tests_against_the_default_runs_without_ranking_them(fixture,
                                                                                     tmp_path):
    """evaluate_ft reads the default pipeline's reference runs back (here a stored `full`) and
    tests its own conditions against them; their scores stay in the default build's file."""
    from countercase.config import Params
    from countercase.datasets import load
    from countercase.retrieve.registry import BY_NAME
    from countercase.evaluate.run import evaluate_dataset
    from countercase.retrieve.runs import write_trec_run
    from countercase.retrieve.steps import bm25_docs_system
    from countercase.layout import IndexPaths

    dataset = load("aila2019/task2/test", ROOT / "data/raw/aila2019")
    stored = tmp_path / "default" / dataset.collection
    stored.mkdir(parents=True)
    run = bm25_docs_system(fixture / "index" / "statutes_docs", 50)(dataset.topics)
    write_trec_run({q: ranking[::-1] for q, ranking in run.items()}, stored / "full.run", "full")
    params = Params()
    paths = IndexPaths(fixture / "index", tmp_path / "no-dense", tmp_path / "none.parquet",
                       tmp_path / "none.parquet")
    result = evaluate_dataset(dataset, [BY_NAME["bm25_docs"]], paths, params.retrieve,
                              params.evaluate, None, set(), compare_runs=tmp_path / "default")
    assert set(result["scores"]) == {"bm25_docs"}  # `full` read back, not scored here
    assert "bm25_docs" in result["significance"]["MAP"]["full"]
    alone = evaluate_dataset(dataset, [BY_NAME["bm25_docs"]], paths, params.retrieve,
                             params.evaluate, None, set())
    assert "full" not in alone["significance"]["MAP"]  # without the default runs, no test

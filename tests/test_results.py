"""The results table (``countercase.report.results``): computed once, from the outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from countercase.confirm.directional import power
from countercase.report import results
from countercase.report.outputs import Outputs

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_results_table_is_what_the_committed_outputs_say():
    committed = json.loads((ROOT / results.RESULTS).read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(results.table(Outputs(ROOT))))


def test_the_table_sets_each_collection_against_bm25_and_the_served_system():
    found = results.table(Outputs(ROOT))
    assert list(found["collections"]) == list(results.COLLECTIONS)
    for name, collection in found["collections"].items():
        systems = [row["system"] for row in collection["rows"]]
        assert collection["served"] in systems and "bm25" in systems, name
        served = systems.index(collection["served"])
        for row in collection["rows"]:
            if row["MAP_ci"] is not None:  # the track's best run has no per-query scores
                low, high = row["MAP_ci"]
                assert low <= row["MAP"] <= high, (name, row["system"])
        assert collection["rows"][served]["vs_served"] is None


def test_a_missing_per_query_table_is_named(tmp_path, run_cli):
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    code, _, err = run_cli("results", "--root", str(tmp_path))
    assert code == 2 and "per_query.csv" in err and "Traceback" not in err
    assert err.count("\n") == 1 and not (tmp_path / results.RESULTS).exists()


def test_missing_parameters_are_named(tmp_path):
    with pytest.raises(results.ResultsError, match="params.yaml"):
        results.table(Outputs(tmp_path))


def test_a_damaged_output_is_named_in_one_line(tmp_path, run_cli):
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    for kept in results.L.PAPER_INPUTS.values():
        if kept.suffix == ".csv":
            (tmp_path / kept).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / kept, tmp_path / kept)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/retrieval.json").write_text("{not json")
    code, _, err = run_cli("results", "--root", str(tmp_path))
    assert code == 2 and "metrics/retrieval.json: not JSON" in err and err.count("\n") == 1


def test_stage_results_writes_the_table_the_paper_and_readme_format(tmp_path, run_cli):
    out = tmp_path / "results.json"
    code, _, err = run_cli("results", "--root", str(ROOT), "--out", str(out))
    assert code == 0, err
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(
        (ROOT / results.RESULTS).read_text(encoding="utf-8"))
    paper = (ROOT / "paper" / "paper.qmd").read_text(encoding="utf-8")
    assert "countercase.report.results" not in paper  # the paper formats the file, no more


def test_task1_without_its_near_copies_is_the_mean_over_the_queries_kept():
    scores = pd.DataFrame({"condition": ["served"] * 3 + ["full"] * 3,
                           "qid": ["Q1", "Q2", "Q3"] * 2,
                           "MAP": [0.9, 0.3, 0.0, 0.6, 0.2, 0.4]})
    found = results.without_copies(scores, ["Q1"], ["served", "full"])
    assert found["n_queries"] == 2 and found["queries_left_out"] == ["Q1"]
    assert found["MAP"] == {"served": 0.15, "full": 0.3}
    assert found["MAP_all_queries"]["served"] == 0.4
    assert results.without_copies(scores, [], ["served"]) is None


def test_the_v2_power_is_stated_at_its_preregistered_sample(tmp_path):
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/validity_v2.json").write_text(json.dumps({"settings": {"alpha": 0.01}}))
    found = results.v2_power(Outputs(tmp_path))
    assert found["expected_cases"] == results.V2_EXPECTED_CASES and found["power"] < 0.8
    reach = found["effect_at_80"]
    assert power(found["expected_cases"], reach, 0.01) >= 0.8 > power(
        found["expected_cases"], reach - 0.01, 0.01)
    assert results.v2_power(Outputs(tmp_path / "none")) is None


def test_a_per_query_gap_is_the_systems_ap_minus_the_baselines_per_query():
    scores = pd.DataFrame({"condition": ["ltr"] * 3 + ["bm25_docs"] * 3,
                           "qid": ["Q2", "Q1", "Q3"] * 2,
                           "MAP": [0.9, 0.3, 0.0, 0.6, 0.2, 0.4]})
    found = results.gaps(scores, (("ltr", "bm25_docs"), ("full", "bm25_docs")))
    assert list(found) == ["ltr - bm25_docs"]  # no `full` in the table: left out
    assert found["ltr - bm25_docs"] == pytest.approx({"Q1": 0.1, "Q2": 0.3, "Q3": -0.4})

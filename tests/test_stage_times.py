"""The per-stage timing table: a stage that succeeds under DVC records its seconds in
``metrics/timing/summary.json`` (in ``dvc.yaml``'s order, with the total); a failing one does
not; a command outside DVC writes nothing."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


WHEN = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with the pipeline's dvc.yaml (the table's order) as the working folder."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    return tmp_path


def test_the_table_keeps_the_last_seconds_of_each_stage_in_pipeline_order(project):
    from countercase.report import stage_times

    path, when = project / "summary.json", WHEN
    stage_times.record("evaluate", 380.04, path, when)
    stage_times.record("ingest", 12.0, path, when)
    table = stage_times.record("evaluate", 400.0, path, when)  # a later run replaces the first
    assert list(table["stages"]) == ["ingest", "evaluate"]
    assert table["stages"]["evaluate"] == {"seconds": 400.0, "finished": "2026-01-02T03:04:05+00:00"}
    assert table["total_seconds"] == 412.0 and json.loads(path.read_text()) == table
    assert "| total | 412 | 6.9 | |" in stage_times.markdown(table)


def test_a_stage_that_went_on_from_an_interrupted_run_counts_the_earlier_seconds(project,
                                                                                 monkeypatch):
    from countercase.report import stage_times

    table = stage_times.record("train_reranker", 600.0, project / "summary.json", WHEN,
                               carried=7200.0)
    assert table["stages"]["train_reranker"]["seconds"] == 7800.0
    assert table["stages"]["train_reranker"]["carried_seconds"] == 7200.0
    assert "| 7,800 | 130.0 | 2026-01-02T03:04:05+00:00 (went on from an interrupted run: " \
           "7,200 s of it before) |" in stage_times.markdown(table)
    monkeypatch.setenv("DVC_STAGE", "dvc.yaml:evaluate")
    path = project / stage_times.SUMMARY  # relative: the stage's working folder
    stage_times.begin()
    stage_times.carry(30.0)
    stage_times.carry(0.0)
    stage_times.record_dvc_stage(10.0)
    assert json.loads(path.read_text())["stages"]["evaluate"]["seconds"] == 40.0
    stage_times.begin()
    stage_times.record_dvc_stage(10.0)  # nothing carried into the next command
    assert "carried_seconds" not in json.loads(path.read_text())["stages"]["evaluate"]


def _run(args, cwd, stage):
    env = {k: v for k, v in os.environ.items() if k != "DVC_STAGE"}
    if stage:
        env["DVC_STAGE"] = stage
    return subprocess.run([sys.executable, "-m", "countercase.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_only_a_stage_that_succeeds_under_dvc_is_recorded(tmp_path):
    shutil.copy(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    summary = tmp_path / "metrics" / "timing" / "summary.json"
    assert _run(["--help"], tmp_path, None).returncode == 0
    assert not summary.exists()  # not under DVC
    assert _run(["regress"], tmp_path, "dvc.yaml:regress").returncode == 2
    assert not summary.exists()  # failed
    done = _run(["--help"], tmp_path, "dvc.yaml:paper")
    assert done.returncode == 0, done.stderr
    assert list(json.loads(summary.read_text())["stages"]) == ["paper"]


def test_the_committed_stage_table_lists_every_stage_of_the_default_pipeline():
    """metrics/timing/summary.json is the stage-times table of the README and the paper: a stage
    missing from it would hide its cost from the budgets."""
    import yaml

    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    table = json.loads((ROOT / "metrics" / "timing" / "summary.json").read_text())["stages"]
    assert not set(stages) - set(table), sorted(set(stages) - set(table))

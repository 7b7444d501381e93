"""make repro's record of itself (countercase.report.repro_clock): fresh is found, never typed;
a rerun does not overwrite the fresh run's record."""

from __future__ import annotations

import json

import pytest

from countercase.report import repro_clock

CPU = {"model": "a CPU", "capability": "AVX2", "native_bf16": False}


def test_a_fresh_machine_is_recognised_and_timed(tmp_path):
    (tmp_path / "data/processed/ner").mkdir(parents=True)
    (tmp_path / "data/processed/ner/.gitignore").write_text("/model\n")  # committed: not output
    state = repro_clock.start(tmp_path, now=100.0)
    assert state["fresh"] and state["no_processed_outputs"] and state["empty_dvc_cache"]
    repro_clock.setup_done(tmp_path, now=400.0)
    path = repro_clock.finish(tmp_path, now=3400.0, cpu=CPU)
    assert path == tmp_path / repro_clock.FRESH_RECORD
    record = json.loads(path.read_text())
    assert (record["setup_s"], record["pipeline_s"], record["total_s"]) == (300.0, 3000.0, 3300.0)
    assert record["fresh"] is True and record["native_bf16"] is False and record["cpu"] == "a CPU"
    assert not (tmp_path / repro_clock.STATE).exists()


def test_a_machine_with_outputs_or_a_cache_is_not_fresh_and_keeps_the_fresh_record(tmp_path):
    (tmp_path / "data/processed/ingest").mkdir(parents=True)
    (tmp_path / "data/processed/ingest/documents.jsonl").write_text("{}\n")
    fresh = tmp_path / repro_clock.FRESH_RECORD
    fresh.parent.mkdir(parents=True)
    fresh.write_text('{"total_s": 3400.0}\n')
    state = repro_clock.start(tmp_path, now=0.0)
    assert not state["fresh"] and not state["no_processed_outputs"]
    repro_clock.setup_done(tmp_path, now=5.0)
    path = repro_clock.finish(tmp_path, now=45.0, cpu=CPU)
    assert path == tmp_path / repro_clock.RERUN_RECORD
    assert json.loads(path.read_text())["total_s"] == 45.0
    assert json.loads(fresh.read_text()) == {"total_s": 3400.0}
    (tmp_path / ".dvc/cache/files").mkdir(parents=True)
    (tmp_path / ".dvc/cache/files/ab").write_text("x")
    assert not repro_clock.is_fresh(tmp_path)["empty_dvc_cache"]


def test_finish_without_start_says_what_to_run(tmp_path):
    with pytest.raises(SystemExit, match="repro_clock.py start"):
        repro_clock.finish(tmp_path, cpu=CPU)
    with pytest.raises(SystemExit, match="usage"):
        repro_clock.main(["begin"])


def test_a_machine_whose_own_dvc_cache_holds_a_build_is_not_fresh(tmp_path, monkeypatch):
    cache = tmp_path / "machine-cache"
    monkeypatch.setenv("DVC_CACHE", str(cache))
    assert repro_clock.is_fresh(tmp_path)["fresh"]
    (cache / "files" / "md5" / "ab").mkdir(parents=True)
    (cache / "files" / "md5" / "ab" / "cdef").write_text("an output of an earlier build")
    found = repro_clock.is_fresh(tmp_path)
    assert not found["fresh"] and not found["empty_dvc_cache"]

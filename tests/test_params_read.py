"""The params.yaml keys a run reads are noted, and a stage that reads a key its registry entry
does not declare is named (countercase.dag.params)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from countercase import config
from countercase.dag import params as params_read
from countercase.dag.stages import BY_NAME
from countercase.dag.write import main


@pytest.fixture
def reads():
    found = config.record_reads()
    yield found
    config.stop_reads()


def test_attribute_reads_are_noted_by_key(reads):
    params = config.Params()
    _ = params.seed, params.retrieve.rrf_k, params.perturb
    assert reads == {"seed", "retrieve.rrf_k"}  # a section itself is no key
    copy = params.retrieve.model_copy(update={"rrf_k": 5})
    assert copy.k == 10 and "retrieve.k" in reads  # a copy keeps its section
    _ = config.RetrieveParams().mmr_lambda  # a section made alone is still its section
    assert "retrieve.mmr_lambda" in reads


def test_nothing_is_noted_when_not_recording():
    config.stop_reads()
    assert config.Params().retrieve.rrf_k == config.RetrieveParams().rrf_k
    assert config._read is None


def test_a_section_or_a_key_declared_covers_a_read():
    assert params_read.undeclared(("retrieve", "evaluate.depth"),
                                  ["retrieve.rrf_k", "evaluate.depth", "evaluate.chunk_depth",
                                   "seed"]) == ["evaluate.chunk_depth", "seed"]
    assert params_read.undeclared(None, ["seed"]) == ["seed"]


def test_a_stage_run_writes_its_reads_and_the_check_names_the_undeclared(tmp_path, monkeypatch,
                                                                           capsys):
    monkeypatch.delenv("DVC_STAGE", raising=False)
    assert params_read.begin() is None and params_read.write({"seed"}, tmp_path) is None
    monkeypatch.setenv("DVC_STAGE", "topology")  # declares seed only
    found = params_read.begin()
    try:
        params = config.Params()
        _ = params.seed, params.perturb.k
    finally:
        config.stop_reads()
    path = params_read.write(found, tmp_path)
    assert json.loads(path.read_text()) == ["perturb.k", "seed"]
    (tmp_path / "not_a_stage.json").write_text('["anything"]')
    assert params_read.check(BY_NAME, tmp_path) == {"topology": ["perturb.k"]}
    assert main(["--params-read", str(tmp_path)]) == 1
    assert "topology read undeclared params: perturb.k" in capsys.readouterr().out
    path.write_text('["seed"]')
    assert main(["--params-read", str(tmp_path)]) == 0
    assert main(["--params-read", str(tmp_path / "missing")]) == 2
    assert "no records of params read" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()  # a folder with no records says so too, not exit 0 silently
    assert main(["--params-read", str(tmp_path / "empty")]) == 2
    assert "no records of params read" in capsys.readouterr().err


def test_an_opt_in_stage_is_recorded_under_its_name(tmp_path, monkeypatch):
    """DVC names an opt-in stage with its file ("experiments/dvc.yaml:validity_v2"): its record
    is written under the stage's name, not into a folder that does not exist."""
    monkeypatch.setenv("DVC_STAGE", "experiments/dvc.yaml:validity_v2")
    found = params_read.begin()
    try:
        _ = config.Params().seed
    finally:
        config.stop_reads()
    assert params_read.write(found, tmp_path) == tmp_path / "validity_v2.json"


def test_no_measured_number_lives_in_a_comment_of_params_yaml():
    """Issue 60: params.yaml says what each value governs; what a run measured lives in
    metrics/. A decimal in a comment may only name another setting of the file."""
    text = (Path(__file__).resolve().parents[1] / "params.yaml").read_text(encoding="utf-8")

    def values(node):
        if isinstance(node, dict):
            return [v for value in node.values() for v in values(value)]
        if isinstance(node, list):
            return [v for value in node for v in values(value)]
        return [node]

    settings = {float(v) for v in values(yaml.safe_load(text))
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
    comments = [line.split("#", 1)[1] for line in text.splitlines() if "#" in line]
    found = [(number, comment.strip()) for comment in comments
             for number in re.findall(r"(?<![\w.])\d+\.\d+", comment)
             if float(number) not in settings]
    assert found == []

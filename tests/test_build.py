"""The build record (``countercase.report.build``): one commit for every input the paper reads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from countercase.report import build

ROOT = Path(__file__).resolve().parents[1]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of two pipelines, committed, whose default pipeline has run."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "code.py").write_text("x = 1\n")
    (tmp_path / "params.yaml").write_text("k: 1\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "choice.yaml").write_text("w: 0.1\n")  # an earlier build's choice
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"score": {
        "cmd": "score", "outs": ["out/run.txt", "configs/choice.yaml"],
        "metrics": [{"metrics/score.json": {
            "cache": False}}]}}}))
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"ft": {
        "wdir": "..", "cmd": "ft", "metrics": [{"metrics/ft.json": {"cache": False}}]}}}))
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "ft.json").write_text('{"map": 0.2}\n')  # an earlier build's
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.qmd").write_text("text\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "c")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.txt").write_text("q1 d1\n")
    (tmp_path / "metrics" / "score.json").write_text('{"map": 0.1}\n')
    (tmp_path / "dvc.lock").write_text("stages: {}\n")
    return tmp_path


CPU = {"model": "test CPU", "capability": "AVX2"}


def test_a_record_names_the_commit_and_what_its_pipeline_wrote(project: Path) -> None:
    found = build.record(project, "dvc.yaml", cpu=CPU, now=0)
    assert set(found["outputs"]) == {"out/run.txt", "configs/choice.yaml", "metrics/score.json"}
    assert found["runs"]["default"]["cpu"] == "test CPU"
    inputs = ["metrics/score.json", "metrics/ft.json", "params.yaml", "paper/paper.qmd"]
    said = build.provenance(inputs, project)
    commit = found["commit"]
    # the opt-in pipeline has not run at this commit: its committed metric is an earlier build's
    assert said == {"metrics/score.json": commit, "metrics/ft.json": build.EARLIER,
                    "params.yaml": commit, "paper/paper.qmd": "authored"}
    assert build.missing_runs(found) == ["opt-in"]


def test_the_other_pipeline_at_the_same_commit_joins_the_build(project: Path) -> None:
    build.record(project, "dvc.yaml", cpu=CPU)
    # the default pipeline chose anew: its choice file differs from the commit's, and is an
    # output, not an edited source, when the opt-in pipeline is recorded
    (project / "configs" / "choice.yaml").write_text("w: 0.2\n")
    (project / "experiments" / "dvc.lock").write_text("stages: {}\n")
    (project / "metrics" / "ft.json").write_text('{"map": 0.3}\n')
    found = build.record(project, "experiments/dvc.yaml", cpu=CPU)
    assert sorted(found["runs"]) == ["default", "opt-in"]
    assert build.missing_runs(found) == []
    said = build.provenance(["metrics/ft.json", "metrics/score.json"], project)
    assert set(said.values()) == {found["commit"]}


def test_a_stage_rerun_or_a_source_edited_after_the_build_is_named(project: Path) -> None:
    found = build.record(project, "dvc.yaml", cpu=CPU)
    (project / "metrics" / "score.json").write_text('{"map": 0.11}\n')  # a piecemeal rerun
    (project / "params.yaml").write_text("k: 2\n")
    said = build.provenance(["metrics/score.json", "params.yaml", "out/run.txt"], project)
    assert said == {"metrics/score.json": build.AFTER, "params.yaml": build.AFTER,
                    "out/run.txt": found["commit"]}
    (project / "params.yaml").write_text("k: 1  # a comment the build did not read\n")
    assert build.provenance(["params.yaml"], project) == {"params.yaml": found["commit"]}


def test_a_run_with_uncommitted_sources_is_refused(project: Path) -> None:
    (project / "src" / "code.py").write_text("x = 2\n")
    with pytest.raises(build.BuildError, match="src/code.py"):
        build.record(project, "dvc.yaml", cpu=CPU)
    assert not (project / build.RECORD).exists()


def test_a_new_commit_starts_a_new_build(project: Path) -> None:
    first = build.record(project, "dvc.yaml", cpu=CPU)
    (project / "src" / "code.py").write_text("x = 3\n")
    _git(project, "commit", "-q", "-am", "d")
    second = build.record(project, "dvc.yaml", cpu=CPU)
    assert second["commit"] != first["commit"] and sorted(second["runs"]) == ["default"]


def test_the_committed_manifest_says_where_each_input_came_from() -> None:
    """The paper's manifest names, for every input, the build it came from, as the committed
    record and files say today (a stage rerun after the render makes this fail)."""
    manifest = json.loads((ROOT / "paper" / "manifest.json").read_text(encoding="utf-8"))
    if "build" not in manifest:
        pytest.skip("the paper was rendered before metrics/build.json existed")
    record = build.read(ROOT)
    assert manifest["build"]["commit"] == record["commit"]
    assert manifest["build"]["inputs"] == build.provenance(list(manifest["inputs"]), ROOT,
                                                           record)


def test_check_names_a_missing_manifest_in_one_line(project: Path, capsys, monkeypatch) -> None:
    build.record(project, "dvc.yaml", cpu=CPU)
    monkeypatch.chdir(project)
    assert build.main(["check"]) == 1
    err = capsys.readouterr().err
    assert "paper/manifest.json" in err and "Traceback" not in err and err.count("\n") == 1

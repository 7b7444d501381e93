"""Two runs agree (countercase.report.rerun): the committed metrics against a copy in which only the
allow-listed keys moved, then one in which a score moved."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from countercase.report.rerun import allowlist, differences, main

ROOT = Path(__file__).resolve().parents[1]


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(ROOT / "metrics", target)
    return target


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_timings_and_cache_counts_may_differ_and_nothing_else(tmp_path):
    patterns = allowlist(ROOT / "configs/rerun_allowlist.yaml")
    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    _edit(b / "timing/summary.json", lambda d: d.update(total_seconds=1.0))
    _edit(b / "llm_check.json", lambda d: d.update(model_calls=d["model_calls"] + 7))
    _edit(b / "evaluation.json",
          lambda d: d[next(iter(d))].update(seconds=123.0))
    assert differences(a, b, patterns) == []
    task = next(iter(json.loads((b / "retrieval.json").read_text())))
    _edit(b / "retrieval.json", lambda d: d[task]["full"].update(MAP=d[task]["full"]["MAP"] + 1e-4))
    (found,) = differences(a, b, patterns)
    assert found.startswith(f"retrieval.json:{task}.full.MAP: ")
    (b / "extra.json").write_text("{}")
    assert any(line.startswith("extra.json: only in") for line in differences(a, b, patterns))


def test_the_command_exits_1_on_a_difference(tmp_path, capsys):
    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    assert main([str(a), str(b), "--allowlist", str(ROOT / "configs/rerun_allowlist.yaml")]) == 0
    _edit(b / "topology.json", lambda d: d.update(extra_key=1))
    assert main([str(a), str(b), "--allowlist", str(ROOT / "configs/rerun_allowlist.yaml")]) == 1
    assert "topology.json:extra_key: '<absent>' -> 1" in capsys.readouterr().out


def test_an_unreadable_metrics_file_or_allowlist_is_named(tmp_path, capsys):
    import pytest

    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    (b / "topology.json").write_text("{not json")
    allow = str(ROOT / "configs/rerun_allowlist.yaml")
    with pytest.raises(SystemExit) as exit_:
        main([str(a), str(b), "--allowlist", allow])
    assert exit_.value.code == 2
    assert "topology.json: not readable JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(a), str(a), "--allowlist", str(tmp_path / "none.yaml")])
    assert "none.yaml: not an allowlist" in capsys.readouterr().err

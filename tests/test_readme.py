"""The README's measured blocks are written from the pipeline's outputs, never typed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from countercase.report import readme
from countercase.report.readme import Outputs, render, stale

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_blocks_are_what_the_committed_outputs_say():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert {m["name"] for m in readme.BLOCK.finditer(text)} == set(readme.BLOCKS)
    assert stale(text, Outputs(ROOT)) == [], "run `python -m countercase.report.readme`"


def _copy(tmp_path: Path, *relative: str) -> Path:
    for name in relative:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_a_changed_output_makes_its_block_stale_and_the_command_rewrites_it(tmp_path, capsys):
    root = _copy(tmp_path, "metrics/ingest.json", "metrics/extraction.json",
                 "metrics/timing/summary.json")
    (root / "README.md").write_text("intro\n<!-- measured:results -->\nold\n"
                                    "<!-- /measured:results -->\nbetween\n"
                                    "<!-- measured:stage_times -->\n<!-- /measured:stage_times -->\n"
                                    "end\n", encoding="utf-8")
    assert readme.main(["--root", str(root), "--check"]) == 1
    assert "results, stage_times" in capsys.readouterr().err
    assert readme.main(["--root", str(root)]) == 0
    written = (root / "README.md").read_text(encoding="utf-8")
    assert written.startswith("intro\n") and "\nbetween\n" in written and written.endswith("end\n")
    ingest = json.loads((root / "metrics/ingest.json").read_text())
    assert f"{ingest['documents_per_source']['aila_text']:,} AILA" in written
    # the stages that have not run have no rows; the table has the ones that did
    assert "Task 1" not in written and "statute table" in written
    assert readme.main(["--root", str(root), "--check"]) == 0

    ingest["n_failures"] = 3  # the output moves: the block no longer says what it says
    (root / "metrics/ingest.json").write_text(json.dumps(ingest))
    assert stale(written, Outputs(root)) == ["results"]
    assert "3 failures" in render(written, Outputs(root))


def test_an_unknown_block_or_a_damaged_output_is_one_line(tmp_path, capsys):
    (tmp_path / "README.md").write_text("<!-- measured:nope -->\n<!-- /measured:nope -->\n")
    assert readme.main(["--root", str(tmp_path)]) == 1
    assert "unknown measured block 'nope'" in capsys.readouterr().err
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics/scaleout.json").write_text("{not json")
    (tmp_path / "README.md").write_text("<!-- measured:scaleout -->\n<!-- /measured:scaleout -->\n")
    assert readme.main(["--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "README.md" in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("block", sorted(readme.BLOCKS))
def test_every_block_says_so_when_its_outputs_are_missing(tmp_path, block):
    body = render(f"<!-- measured:{block} -->\n<!-- /measured:{block} -->\n", Outputs(tmp_path))
    assert body.split("\n")[1].startswith("*") and body.count("\n") == 3, body

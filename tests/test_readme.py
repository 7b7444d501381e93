"""The README's measured blocks are written from the pipeline's outputs, never typed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from countercase.report import readme
from countercase.report.readme import Outputs, render, stale

ROOT = Path(__file__).resolve().parents[1]


def test_the_blocks_are_what_the_committed_outputs_say():
    for name in readme.FILES:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert stale(text, Outputs(ROOT)) == [], f"{name}: run `python -m countercase.report.readme`"


def test_every_block_lives_in_one_file():
    found = [block for name in readme.FILES
             for block in readme.blocks((ROOT / name).read_text(encoding="utf-8"))]
    assert sorted(found) == sorted(readme.BLOCKS)  # each once: the README or docs/reproducing.md
    assert set(readme.blocks((ROOT / "README.md").read_text(encoding="utf-8"))) == {"headline"}


def test_the_readme_is_short_and_its_first_screen_answers():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 200 + 1  # the last line ends with a newline
    first = "\n".join(lines[:40])
    assert "make repro" in first and "make test" in first
    block = readme.BLOCK.search(first)  # the headline block, opened and closed on the first screen
    assert block and block["name"] == "headline"
    assert any(line.startswith("| ") for line in block["body"].split("\n")), block["body"]


def test_the_links_of_the_readme_and_the_docs_name_files_that_exist():
    for name in ("README.md", "docs/reproducing.md", "docs/usage.md", "docs/decisions.md"):
        path = ROOT / name
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (path.parent / target).exists(), f"{name}: {target}"


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


def test_the_blocks_of_docs_reproducing_are_written_and_checked_as_the_readmes(tmp_path, capsys):
    root = _copy(tmp_path, "metrics/timing/summary.json")
    (root / "README.md").write_text("intro\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs/reproducing.md").write_text("<!-- measured:stage_times -->\nold\n"
                                              "<!-- /measured:stage_times -->\n", encoding="utf-8")
    assert readme.main(["--root", str(root), "--check"]) == 1
    err = capsys.readouterr().err
    assert "reproducing.md" in err and "stage_times" in err and err.count("\n") == 1
    assert readme.main(["--root", str(root)]) == 0
    assert (root / "README.md").read_text(encoding="utf-8") == "intro\n"
    assert "| stage |" in (root / "docs/reproducing.md").read_text(encoding="utf-8")
    assert readme.main(["--root", str(root), "--check"]) == 0


def test_the_headline_formats_the_results_table(tmp_path):
    """The README's first table computes nothing: it prints the results table's numbers."""
    root = _copy(tmp_path, "metrics/results.json")
    table = json.loads((root / "metrics/results.json").read_text())
    task1 = table["collections"]["aila2019-task1"]
    served = next(r for r in task1["rows"] if r["system"] == task1["served"])
    served["MAP"], served["MAP_ci"] = 0.5, [0.25, 0.75]  # what the table says is what it prints
    (root / "metrics/results.json").write_text(json.dumps(table))
    body = render("<!-- measured:headline -->\n<!-- /measured:headline -->\n", Outputs(root))
    row = next(line for line in body.split("\n") if "AILA 2019 Task 1" in line)
    assert f"`{task1['served_system']}` | 0.5000 [0.250, 0.750] |" in row
    assert f"{task1['track']['MAP']} (`{task1['track']['run']}`)" in row
    assert "*counterfactual test not run yet" in body  # no metrics/validity_v3.json here


def test_the_counterfactual_row_is_the_v3_tests_own_summary(tmp_path):
    """The v3 test runs after the results stage (opt-in pipeline): the README's row reads its
    summary, so a rerun of the test shows without a rerun of the default pipeline."""
    root = _copy(tmp_path, "metrics/results.json", "metrics/validity_v3.json")
    v3 = json.loads((root / "metrics/validity_v3.json").read_text())
    v3["by_ranker"]["trees"]["excess_mean"] = 0.25  # what the summary says is what it prints
    (root / "metrics/validity_v3.json").write_text(json.dumps(v3))
    body = render("<!-- measured:headline -->\n<!-- /measured:headline -->\n", Outputs(root))
    row = next(line for line in body.split("\n") if line.startswith("| counterfactual"))
    assert f" {v3['n_cases']} held-out cases;" in row and "excess +0.2500 [" in row


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

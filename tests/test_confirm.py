"""The confirmatory experiment's guard and its cases: a draft, an uncommitted or changed
preregistration and a case list other than the one it names are refused, naming the hashes;
the draw leaves out what earlier runs and labelled files used."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from countercase.confirm.cases import draw, named_cases
from countercase.confirm.prereg import PreregistrationError, verify

PREREG = "docs/prereg.md"


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _write(root, status: str, cases_sha: str) -> None:
    (root / PREREG).write_text(f"---\nstatus: {status}\ncases_file: docs/cases.txt\n"
                               f"cases_sha256: {cases_sha}\n---\n\n# The plan\n",
                               encoding="utf-8")


@pytest.fixture()
def repo(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/cases.txt").write_text("C7\nC3\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    return tmp_path


def test_only_a_committed_final_preregistration_naming_its_cases_passes(repo):
    cases_sha = hashlib.sha256(b"C7\nC3\n").hexdigest()
    _write(repo, "draft", cases_sha)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "draft")
    with pytest.raises(PreregistrationError, match="is a draft"):
        verify(PREREG, repo)
    _write(repo, "final", "0" * 64)
    with pytest.raises(PreregistrationError, match="differs from its committed version"):
        verify(PREREG, repo)  # final, but not committed so
    _git(repo, "commit", "-qam", "final, the wrong list")
    with pytest.raises(PreregistrationError, match=f"names 0{{64}}, the file's is {cases_sha}"):
        verify(PREREG, repo)
    _write(repo, "final", cases_sha)
    _git(repo, "commit", "-qam", "final")
    found = verify(PREREG, repo)
    assert found.cases_sha256 == cases_sha and len(found.commit) == 40
    assert found.sha256 == hashlib.sha256((repo / PREREG).read_bytes()).hexdigest()
    assert verify(PREREG, repo, recorded=found.sha256) == found
    (repo / PREREG).write_text((repo / PREREG).read_text() + "\nA change.\n")
    _git(repo, "commit", "-qam", "changed after the run")
    now = hashlib.sha256((repo / PREREG).read_bytes()).hexdigest()
    with pytest.raises(PreregistrationError, match=f"recorded {found.sha256}, now {now}"):
        verify(PREREG, repo, recorded=found.sha256)


def test_a_file_without_front_matter_is_named(tmp_path):
    (tmp_path / "p.md").write_text("# no front matter\n")
    with pytest.raises(PreregistrationError, match="p.md: no front matter"):
        verify("p.md", tmp_path)


def test_the_draw_leaves_out_the_used_and_those_citing_nothing_here(tmp_path):
    heldout = {"C10": {"C1": 1}, "C2": {"C1": 1}, "C30": {"C99": 1}, "C4": {"C1": 0},
               "C5": {"C1": 1, "C99": 1}, "C6": {"C1": 1}}
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit/labels.jsonl").write_text(json.dumps({"case_id": "C6"}) + "\n\n")
    used = named_cases(tmp_path) | {"C2"}
    order, left_out = draw(heldout, used, {"C1"}, seed=5)
    assert sorted(order) == ["C10", "C5"] and order == draw(heldout, used, {"C1"}, seed=5)[0]
    assert left_out == {"cites no judgment of the corpus": 2,
                        "used by an earlier run or a labelled file": 2}
    (tmp_path / "audit/bad.jsonl").write_text("{not json\n")
    with pytest.raises(Exception, match="bad.jsonl:1: not JSON"):
        named_cases(tmp_path)


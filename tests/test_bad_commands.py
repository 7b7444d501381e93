"""Bad command lines a fuzz run found (issue 60): each is one line naming what was wrong, exit
2, before any work; none is reported as a bug."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXISTING = str(ROOT / "params.yaml")  # an input that exists, where only existence is checked


@pytest.mark.parametrize("args, words", [
    (["tree", "--query", "AILA_Q1", "--edges", EXISTING, "--depth", "1000000"],
     "--depth 1000000: give 1 to 6"),
    (["tree", "--query", "AILA_Q1", "--edges", EXISTING, "--branching", "0"],
     "--branching 0: give 1 to 20"),
    (["tree", "--query", "AILA_Q1", "--edges", EXISTING, "--out", "/proc/no/tree.json"],
     "cannot write tree file /proc/no/tree.json"),
    (["tree", "--query", "AILA_Q1", "--edges", EXISTING, "--out", f"{EXISTING}/tree.json"],
     "is not a folder"),
    (["evaluate", "--metrics", "/proc/no/scores.json"], "cannot write metrics file"),
    (["leakage-audit", "--metrics", "/proc/no/leakage.json"], "cannot write metrics file"),
    (["regress", "--verify", "--all", "--runs", "/no/such/runs"],
     "runs folder (--runs: the evaluate stage's out) not found: /no/such/runs"),
    (["lab", "audit-results", "--out", "/proc/no/audit.json"], "cannot write results file"),
    (["lab", "validity-feasibility", "--tolerance", "nan"], "--tolerance nan"),
    (["lab", "validity-feasibility", "--tolerance", "-0.5"], "--tolerance -0.5"),
    (["search", "murder", "--system", "ltr", "--citations", "/no/citations"],
     "it reads the citation collection /no/citations (stage citations)"),
])
def test_a_bad_command_line_is_one_line_and_exit_2(run_cli, args, words):
    code, _, err = run_cli(*args)
    assert code == 2, err
    assert words in err and "bug" not in err and len(err.strip().splitlines()) == 1, err

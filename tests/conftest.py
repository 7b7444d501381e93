"""Shared fixtures: every test reads the real data embedded in the project, never ../shared."""

from __future__ import annotations

from pathlib import Path

import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    return RAW


@pytest.fixture(scope="session")
def pdf_dir() -> Path:
    return RAW / "pdfs"


@pytest.fixture
def run_cli(monkeypatch, capsys):
    """``run_cli(*args) -> (exit status, stdout, stderr)`` of ``countercase`` run in-process, as
    its console script runs it (errors become one line and an exit status)."""
    from countercase import cli

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["countercase", *args])
        with pytest.raises(SystemExit) as exit_:
            cli.main()
        out = capsys.readouterr()
        return exit_.value.code, out.out, out.err

    return run

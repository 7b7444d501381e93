"""Shared fixtures: every test reads the real data embedded in the project, never ../shared."""

from __future__ import annotations

from pathlib import Path

import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
AILA_DIR = RAW / "aila2019"


def pytest_addoption(parser):
    parser.addoption("--fuzz-examples", type=int, default=None,
                     help="examples per property of the fuzz suite (tests/test_fuzz.py); "
                          "default: a quick run, e.g. 2000 for a campaign")


class AilaFiles:
    """The AILA 2019 files, read through :mod:`countercase.datasets` (checksums and counts
    checked), as the tests need them."""

    dir = AILA_DIR

    def casedocs(self, ids=None) -> dict[str, str]:
        """Judgment id -> text (``ids``: only these; all 2,914 by default)."""
        from countercase.datasets import aila

        return dict(aila.casedocs(AILA_DIR, set(ids) if ids is not None else None))

    def statutes(self) -> list[dict[str, str]]:
        from countercase.datasets import aila

        return aila.statutes(AILA_DIR)

    def queries(self) -> dict[str, str]:
        from countercase.datasets import aila

        return aila.queries(AILA_DIR)

    def qrels(self, task: str = "precedents") -> dict[str, dict[str, int]]:
        from countercase.datasets import aila

        return aila.qrels(AILA_DIR, task)

    def dataset(self, dataset_id: str):
        from countercase import datasets

        return datasets.load(dataset_id, AILA_DIR)


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    return RAW


@pytest.fixture(scope="session")
def aila_files() -> AilaFiles:
    return AilaFiles()


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


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Path:
    """A small real project: thirty AILA judgments (C1..C30) and twenty statutes through
    ingest, extract and index, their rule fact sheets and the section adjacency map, laid out
    as the pipeline lays them out (``make quickstart`` builds the same on the whole corpus)."""
    from countercase.quickstart import build_project

    return build_project(tmp_path_factory.mktemp("project"), ROOT,
                         [f"C{i}" for i in range(1, 31)], statutes=20, min_count=2)

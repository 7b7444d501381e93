"""Shared fixtures: every test reads the real data embedded in the project, never ../shared."""

from __future__ import annotations

from pathlib import Path

import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
AILA_DIR = RAW / "aila2019"


# The full suite is CI's; `pytest -m "not slow"` is the everyday tier. Slow by what a module
# does, whatever it takes today: builds a whole project (SLOW_FIXTURES) or its indexes,
# asks the LLM, drives a
# browser, renders the paper or runs the notebooks. A test that trains a real model is marked
# where it stands (@pytest.mark.slow), so its module's quick tests stay in the everyday tier.
SLOW_MODULES = frozenset({
    "test_notebooks", "test_paper", "test_explore_browser", "test_factsheet_llm",
    "test_rerank_llm", "test_index_search", "test_evaluate", "test_chunking", "test_dense",
    "test_ingest_pdf"})


SLOW_FIXTURES = frozenset({"project", "tiny_model"})  # a project built, a tagger trained


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.stem in SLOW_MODULES or SLOW_FIXTURES & set(getattr(item, "fixturenames",
                                                                          ())):
            item.add_marker(pytest.mark.slow)


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


# the small real corpus of `indexed_corpus`
INDEXED_JUDGMENTS = [f"C{i}" for i in range(1, 13)]
INDEXED_STATUTES = [f"S{i}" for i in range(1, 21)]
INDEXED_PDF = "judgment_01"


@pytest.fixture(scope="session")
def indexed_corpus(tmp_path_factory, raw_dir, pdf_dir, aila_files):
    """Twelve AILA judgments, one Supreme Court PDF and twenty AILA statutes through ingest,
    extract, index and embed: (index paths, the index stage's report, the embed stage's)."""
    import io
    import shutil
    import tarfile

    from countercase.config import ExtractParams, IndexParams
    from countercase.extract.run import run_extract
    from countercase.index.run import STATUTE_CHUNKS, run_embed, run_index
    from countercase.ingest.pdf import PdfDirectorySource
    from countercase.ingest.run import run_ingest
    from countercase.ingest.text import TextSource
    from countercase.layout import IndexPaths

    root = tmp_path_factory.mktemp("corpus")
    (root / "txt").mkdir()
    (root / "pdf").mkdir()
    for name, text in aila_files.casedocs(INDEXED_JUDGMENTS).items():
        (root / "txt" / f"{name}.txt").write_bytes(text.encode())
    shutil.copy(pdf_dir / f"{INDEXED_PDF}.pdf", root / "pdf")
    statutes = root / "statutes.tar.gz"
    with tarfile.open(statutes, "w:gz") as target:  # the index stage reads an AILA-form archive
        for statute in aila_files.statutes():
            if statute["statute_id"] in INDEXED_STATUTES:
                data = f"Title: {statute['title']}\nDesc: {statute['text']}\n".encode()
                member = tarfile.TarInfo(f"Object_statutes/{statute['statute_id']}.txt")
                member.size = len(data)
                target.addfile(member, io.BytesIO(data))
    run_ingest([TextSource(root / "txt"), PdfDirectorySource(root / "pdf")], root / "ingest")
    run_extract(root / "ingest/documents.jsonl", raw_dir / "statutes", raw_dir / "sc_metadata/raw",
                root / "extract", ExtractParams())
    paths = IndexPaths(root / "index", root / "dense", root / "extract/chunks.parquet",
                       root / "extract/metadata.parquet")
    indexed = run_index(paths.chunks, paths.metadata, root / "ingest/documents.jsonl", statutes,
                        root / "extract/statutes.parquet", paths.index_dir)
    # float32: onnx-int8 (params.yaml) calibrates on the citation collection's tuning half,
    # which twelve judgments have not got (tests/test_dense.py covers int8)
    embedded = run_embed(paths.chunks, paths.index_dir / STATUTE_CHUNKS, paths.dense_dir,
                         IndexParams(precision="float32"))
    return paths, indexed, embedded

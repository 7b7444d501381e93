"""Shared fixtures: every test reads the real data embedded in the project, never ../shared."""

from __future__ import annotations

from pathlib import Path

import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
AILA_DIR = RAW / "aila2019"


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
def project(tmp_path_factory, raw_dir, aila_files) -> Path:
    """A small real project: thirty AILA judgments (C1..C30) through ingest, extract and
    index, their rule fact sheets and the section adjacency map, laid out as the pipeline lays
    them out, with the repository's params.yaml and dvc.yaml (the case facade and the explorer
    search it)."""
    import io
    import shutil
    import tarfile

    import pandas as pd

    from countercase import layout
    from countercase.config import ExtractParams
    from countercase.extract.run import read_sections, run_extract
    from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
    from countercase.factsheet.rules import extract_rules
    from countercase.index.run import run_index
    from countercase.ingest.run import read_documents, run_ingest
    from countercase.ingest.text import TextSource
    from countercase.perturb.adjacency import build_adjacency

    root = tmp_path_factory.mktemp("project")
    project = raw_dir.parents[1]  # the repository: its params.yaml and dvc.yaml
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(project / name, root / name)
    (root / layout.AILA).mkdir(parents=True)
    shutil.copy(raw_dir / "aila2019" / "Query_doc.txt", root / layout.AILA_QUERIES)
    txt = root / "txt"
    txt.mkdir()
    for name, text in aila_files.casedocs([f"C{i}" for i in range(1, 31)]).items():
        (txt / f"{name}.txt").write_bytes(text.encode())
    statutes = root / "statutes.tar.gz"
    with tarfile.open(statutes, "w:gz") as target:
        for statute in aila_files.statutes()[:20]:
            data = f"Title: {statute['title']}\nDesc: {statute['text']}\n".encode()
            member = tarfile.TarInfo(f"Object_statutes/{statute['statute_id']}.txt")
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    run_ingest([TextSource(txt)], root / layout.INGEST)
    run_extract(root / layout.DOCUMENTS, raw_dir / "statutes", raw_dir / "sc_metadata/raw",
                root / layout.EXTRACT, ExtractParams())
    run_index(root / layout.CHUNKS, root / layout.METADATA, root / layout.DOCUMENTS, statutes,
              root / layout.STATUTE_TABLE, root / layout.INDEX)
    segments = read_sections(root / layout.SECTIONS)
    (root / layout.FACTSHEETS).mkdir(parents=True)
    with (root / layout.JUDGMENT_SHEETS).open("w", encoding="utf-8") as handle:
        for doc in read_documents(root / layout.DOCUMENTS):
            sheet = extract_rules(doc.text, doc.doc_id, "judgment", segments.get(doc.doc_id))
            handle.write(sheet.model_dump_json() + "\n")
    cited = list(pd.read_parquet(root / layout.METADATA)["act_sections"])
    edges = build_adjacency(statute_frame(raw_dir / "statutes"),
                            pd.DataFrame(build_constitution_crossrefs(raw_dir / "statutes")),
                            cited, min_count=2)
    (root / layout.ADJACENCY).mkdir(parents=True)
    edges.to_parquet(root / layout.SECTION_EDGES, index=False)
    return root

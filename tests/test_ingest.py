"""Ingest sources on the real data: PDFs (incl. the damaged ones), AILA text, the open-data tar."""

from __future__ import annotations

import io
import json
import random
import tarfile

import pdfplumber
import pytest

from countercase.ingest.document import Document, IngestFailure
from countercase.ingest.pdf import PdfDirectorySource, drop_cause_list, find_gutter, read_pdf
from countercase.ingest.run import read_documents, run_ingest
from countercase.ingest.sc_opendata import ScOpenDataSource, pdf_name
from countercase.ingest.text import TextSource

DAMAGED = ["judgment_03", "judgment_04", "judgment_06", "judgment_07", "judgment_08",
           "judgment_09", "judgment_10"]


@pytest.fixture(scope="module")
def judgment_01(pdf_dir):
    return read_pdf(pdf_dir / "judgment_01.pdf", "judgment_01.pdf", "judgment_01")


def test_pages_follow_the_pdf_page_index(judgment_01, pdf_dir):
    assert isinstance(judgment_01, Document)
    with pdfplumber.open(pdf_dir / "judgment_01.pdf") as pdf:
        assert [p.index for p in judgment_01.pages] == list(range(len(pdf.pages)))
        for i in (0, 7, len(pdf.pages) - 1):
            raw_words = set((pdf.pages[i].extract_text() or "").split())
            ours = set(judgment_01.pages[i].text.split())
            assert len(ours & raw_words) > 0.9 * len(ours)  # page i's text is PDF page i's


def test_repeated_footer_is_removed(judgment_01, pdf_dir):
    with pdfplumber.open(pdf_dir / "judgment_01.pdf") as pdf:
        assert "Page 2 of 18" in pdf.pages[1].extract_text()
    assert judgment_01.provenance["header_footer_lines_removed"] >= len(judgment_01.pages) - 1
    assert not any("Page 2 of 18" in page.text for page in judgment_01.pages)
    assert "CIVIL APPEAL" in judgment_01.pages[0].text  # the body stays


def test_single_column_pages_are_detected_as_such(judgment_01, pdf_dir):
    assert set(judgment_01.provenance["columns"]) == {1}
    with pdfplumber.open(pdf_dir / "judgment_01.pdf") as pdf:
        words = pdf.pages[3].extract_words()
    assert find_gutter(words, 595.0) is None
    # The same real words laid out as two columns: the right half shifted past a gutter.
    left = [w for w in words if w["x0"] < 300]
    right = [dict(w, x0=w["x0"] + 620, x1=w["x1"] + 620) for w in left]
    gutter = find_gutter(left + right, 1240.0)
    assert gutter is not None and max(w["x1"] for w in left) < gutter < 620


def test_cause_list_before_the_title_is_dropped():
    text = "Diary No. 1234/2019\nBefore: HON'BLE MR. JUSTICE A\nSTATE OF X v. Y\n1. Facts"
    cleaned, dropped = drop_cause_list(text)
    assert dropped and cleaned.startswith("STATE OF X v. Y")
    assert drop_cause_list("REPORTABLE\nIN THE SUPREME COURT OF INDIA") == (
        "REPORTABLE\nIN THE SUPREME COURT OF INDIA", False)


@pytest.fixture(scope="module")
def all_pdfs(pdf_dir):
    # three pages each: all of judgment_04's 56 took half a minute (two damaged files are read
    # whole in test_scaleout)
    return list(PdfDirectorySource(pdf_dir, max_pages=3))


def test_damaged_pdfs_are_repaired_or_reported(pdf_dir, all_pdfs):
    results = {item.doc_id if isinstance(item, Document) else item.source_path: item
               for item in all_pdfs}
    for stem in DAMAGED:
        with pdfplumber.open(pdf_dir / f"{stem}.pdf") as pdf:
            assert len(pdf.pages) == 0  # really damaged for pdfplumber alone
        item = results.get(stem)
        if item is None:  # reported instead
            failure = results[str(pdf_dir / f"{stem}.pdf")]
            assert isinstance(failure, IngestFailure) and failure.reason
        else:
            assert item.provenance["repaired"] and len(item.pages) > 0
            assert sum(len(p.text) for p in item.pages) > 1000


def test_broken_inputs_become_failures_not_exceptions(pdf_dir, tmp_path):
    truncated = (pdf_dir / "judgment_01.pdf").read_bytes()[:2048]
    garbage = random.Random(7).randbytes(4096)
    for name, data in (("truncated.pdf", truncated), ("garbage.pdf", garbage), ("empty.pdf", b"")):
        result = read_pdf(data, name, name[:-4])
        assert isinstance(result, IngestFailure) and result.source_path == name
        assert result.reason


def test_aila_tar_is_read_in_numeric_order(aila_files):
    archive_path = aila_files.dir / "Object_casedocs.tar.gz"  # the ingest stage reads the archive
    docs = list(TextSource(archive_path))
    assert len(docs) == 2914 and all(isinstance(d, Document) for d in docs)
    assert [d.doc_id for d in docs[:3]] == ["C1", "C2", "C3"] and docs[9].doc_id == "C10"
    raw = aila_files.casedocs(["C1"])["C1"]
    assert docs[0].pages[0].text.splitlines()[0] == raw.splitlines()[0]
    assert docs[0].pages[0].index == 0 and docs[0].source == "aila_text"


def _bucket(tmp_path, pdf_dir, raw_dir) -> tuple:
    """A small copy of the open-data layout: real PDFs named after real 2018 records."""
    import gzip

    with gzip.open(raw_dir / "sc_metadata/raw/01-01-2018-31-12-2018.json.gz", "rt") as handle:
        records = json.load(handle)["data"][:3]
    stems = ["judgment_01", "judgment_05", "judgment_07"]
    names = [pdf_name(r["temp_link"]) for r in records]
    year = tmp_path / "data/tar/year=2018/english"
    year.mkdir(parents=True)
    with tarfile.open(year / "english.tar", "w") as archive:
        for stem, name in zip(stems, names):
            data = (pdf_dir / f"{stem}.pdf").read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    meta = tmp_path / "metadata/json/year=2018"
    meta.mkdir(parents=True)
    (meta / "records.json").write_text(json.dumps(records[:2]))  # the third has no record
    return records, names


def test_open_data_tar_joins_pdfs_to_their_records(tmp_path, pdf_dir, raw_dir):
    records, names = _bucket(tmp_path, pdf_dir, raw_dir)
    docs = {d.source_path.split("!")[1]: d for d in ScOpenDataSource(tmp_path)}
    assert set(docs) == set(names)
    first = docs[names[0]]
    assert first.source == "sc_tar" and first.provenance["sc_metadata"] == records[0]
    assert "ANDHRA PRADESH" in first.pages[0].text  # judgment_01's real text
    assert docs[names[2]].provenance["metadata_found"] is False
    assert docs[names[2]].provenance["repaired"]  # judgment_07 is a damaged PDF


def test_open_data_source_reports_a_missing_or_broken_layout(tmp_path):
    assert isinstance(next(iter(ScOpenDataSource(tmp_path))), IngestFailure)
    broken = tmp_path / "data/tar/year=2019/english"
    broken.mkdir(parents=True)
    (broken / "english.tar").write_bytes(b"not a tar at all" * 100)
    failures = list(ScOpenDataSource(tmp_path))
    assert len(failures) == 1 and "tar" in failures[0].reason


def test_run_ingest_writes_sorted_files_that_round_trip(tmp_path, all_pdfs):
    sources = [list(reversed(all_pdfs)), [IngestFailure("x.pdf", "test failure")]]
    stats = run_ingest(sources, tmp_path)
    docs = list(read_documents(tmp_path / "documents.jsonl"))
    assert [d.doc_id for d in docs] == sorted(d.doc_id for d in docs)
    assert stats["n_documents"] == len(docs) and stats["n_failures"] >= 1
    failures = [json.loads(l) for l in (tmp_path / "failures.jsonl").read_text().splitlines()]
    assert {"source_path": "x.pdf", "reason": "test failure"} in failures
    assert docs[0].to_dict() == Document.from_dict(docs[0].to_dict()).to_dict()

"""PDFs read in worker processes: a PDF that overruns its CPU limit, a reader that dies and one
that hangs each cost their own PDF only, in job order; a flipped bit that hides a page is
caught."""

from __future__ import annotations

import os
import random
import time

import pikepdf
import pytest

from countercase.config import IngestParams
from countercase.ingest.document import Document, IngestFailure
from countercase.ingest.pdf import PdfDirectorySource, read_pdf
from countercase.ingest.workers import PdfJob, read_in_workers


def _reader(path, source_path, doc_id):
    """The real reader, with three ways to go wrong keyed by the job's id."""
    if doc_id == "spins":
        while True:  # pure-Python work that never ends: the CPU limit stops it
            pass
    if doc_id == "dies":
        os._exit(3)  # what a segfault in a native library looks like from outside
    if doc_id == "hangs":
        time.sleep(3600)  # no CPU used: only the wall-clock backstop sees it
    return read_pdf(path, source_path, doc_id, max_pages=1)


def _run(names, pdf_dir, **limits):
    jobs = [PdfJob(pdf_dir / "judgment_02.pdf", f"{name}.pdf", name) for name in names]
    pairs = list(read_in_workers(jobs, _reader, workers=2, **limits))
    assert [job for job, _ in pairs] == jobs  # each result with its own job
    results = [result for _, result in pairs]
    assert [r.source_path for r in results] == [f"{name}.pdf" for name in names]  # job order
    for result in results:
        if len(result.source_path) == len("a.pdf"):
            assert isinstance(result, Document) and result.pages[0].text
    return {r.source_path[:-4]: r for r in results}


def test_each_bad_job_costs_only_itself_in_order(pdf_dir):
    # the wall-clock backstop far away: on a loaded machine a second of CPU takes long to come
    found = _run(["a", "spins", "b", "dies", "c"], pdf_dir, cpu_seconds=1, wall_seconds=600)
    assert isinstance(found["spins"], IngestFailure)
    assert "gave up after 1 s of CPU time" in found["spins"].reason
    assert "ingest.pdf_cpu_seconds" in found["spins"].reason
    assert "reader process died" in found["dies"].reason


@pytest.mark.slow  # waits out the 6 s backstop by design
def test_a_reader_that_hangs_without_cpu_is_stopped_by_the_backstop(pdf_dir):
    found = _run(["a", "hangs", "b"], pdf_dir, cpu_seconds=60, wall_seconds=6)
    assert "no answer within 6 s" in found["hangs"].reason


def test_a_flipped_bit_that_hides_a_page_is_repaired(pdf_dir):
    data = bytearray((pdf_dir / "judgment_01.pdf").read_bytes())
    data[115036] ^= 1 << 7  # found by a mutation search: pdfplumber then sees 18 of 19 pages
    with pikepdf.open(pdf_dir / "judgment_01.pdf") as pdf:
        pages = len(pdf.pages)
    doc = read_pdf(bytes(data), "flipped.pdf", "flipped", max_pages=1)
    assert isinstance(doc, Document)
    assert doc.provenance["n_pages"] == pages == 19
    assert doc.provenance["repaired_with"] == "pikepdf"
    assert doc.provenance["damage"] == "pdfplumber: 18 pages where qpdf finds 19"


def test_the_libraries_warnings_go_to_provenance_not_the_console(pdf_dir, tmp_path, capfd):
    data = bytearray((pdf_dir / "judgment_01.pdf").read_bytes())
    rng = random.Random(3)
    for _ in range(20):  # 20 random bytes: the file still opens, with damaged streams
        data[rng.randrange(len(data))] = rng.randrange(256)
    (tmp_path / "mutated.pdf").write_bytes(bytes(data))
    [doc] = PdfDirectorySource(tmp_path, max_pages=2)
    assert isinstance(doc, Document)
    warnings = doc.provenance["reader_warnings"]
    assert warnings["count"] >= 1 and warnings["first"].startswith("pdfminer")
    out, err = capfd.readouterr()
    assert "pdfminer" not in out + err

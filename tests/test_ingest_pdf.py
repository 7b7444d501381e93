"""The PDF reader on the real judgments: page order, headers/footers, columns, cause lists,
damaged and broken files."""

from __future__ import annotations

import gzip
import html
import io
import json
import random
import re
import shutil

import pdfplumber
import pikepdf
import pypdf
import pytest

from countercase.ingest import pdf as pdf_module
from countercase.ingest.document import Document, IngestFailure
from countercase.ingest.pdf import (PdfDirectorySource, drop_cause_list, find_gutter, open_pdf,
                                    read_pdf, text_lines, words_to_text)

SC_PDFS = ["judgment_01", "judgment_02", "judgment_05"]
DAMAGED = ["judgment_03", "judgment_04", "judgment_06", "judgment_07", "judgment_08",
           "judgment_09", "judgment_10"]


@pytest.fixture(scope="module")
def judgment_01(pdf_dir):
    return read_pdf(pdf_dir / "judgment_01.pdf", "judgment_01.pdf", "judgment_01")


@pytest.fixture(scope="module")
def raw_01(pdf_dir):
    """judgment_01 as plain pdfplumber reads it: (text, words, width) per page."""
    with pdfplumber.open(pdf_dir / "judgment_01.pdf") as pdf:
        return [(p.extract_text(), p.extract_words(), float(p.width)) for p in pdf.pages]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]{4,}", text))


# ------------------------------------------------------------------- page order


def test_page_i_is_pdf_page_i(judgment_01, pdf_dir):
    assert isinstance(judgment_01, Document) and judgment_01.source == "pdf"
    reader = pypdf.PdfReader(pdf_dir / "judgment_01.pdf")  # an independent reader
    assert [p.index for p in judgment_01.pages] == list(range(len(reader.pages)))
    assert judgment_01.provenance["n_pages"] == len(reader.pages) == 19
    for page in judgment_01.pages:
        ours = _words(page.text)
        theirs = [_words(reader.pages[i].extract_text()) for i in range(len(reader.pages))]
        overlap = [len(ours & words) / len(ours) for words in theirs]
        assert overlap[page.index] > 0.9
        assert overlap[page.index] == max(overlap)  # no other page fits as well


def test_plain_page_reads_as_extract_text_less_its_footer(judgment_01, raw_01):
    # The last page has no footer: nothing removed, identical to pdfplumber's extract_text.
    assert judgment_01.pages[-1].text == raw_01[-1][0]
    for page, (raw, _, _) in zip(judgment_01.pages[:-1], raw_01):
        assert page.text.splitlines() == raw.splitlines()[:-1]


# --------------------------------------------------------------- header / footer


def test_repeated_footer_is_removed(judgment_01, raw_01):
    assert "Page 2 of 18" in raw_01[1][0]
    assert judgment_01.provenance["header_footer_lines_removed"] == 18
    assert judgment_01.provenance["boilerplate_lines"] == [
        "civil appeal no. # of # & ors. page # of #"]
    assert not any(re.search(r"Page \d+ of 18", page.text) for page in judgment_01.pages)
    assert "CIVIL APPEAL NO(S). 3020 OF 2018" in judgment_01.pages[0].text  # the body stays


def test_footnotes_at_the_foot_of_consecutive_pages_are_kept(judgment_01, raw_01):
    # "2 (2004) 2 SCC 130" and "3 (1999) 2 SCC 37" end two consecutive pages and are equal
    # once digits are masked; they are citations, not a footer.
    found = [i for i, (raw, _, _) in enumerate(raw_01) if "(2004) 2 SCC 130" in raw]
    assert found and "(1999) 2 SCC 37" in raw_01[found[0] + 1][0]
    assert "2 (2004) 2 SCC 130" in judgment_01.pages[found[0]].text
    assert "3 (1999) 2 SCC 37" in judgment_01.pages[found[0] + 1].text


@pytest.mark.parametrize("stem, gone", [("judgment_02", r"Page \d+ of 13"),
                                        ("judgment_05", r"^\d+$")])
def test_page_numbers_of_other_layouts_are_removed(pdf_dir, stem, gone):
    with pdfplumber.open(pdf_dir / f"{stem}.pdf") as pdf:
        raw = [pdf.pages[i].extract_text() for i in range(1, 4)]
    assert all(re.search(gone, text, re.M) for text in raw)
    doc = read_pdf(pdf_dir / f"{stem}.pdf", stem, stem, max_pages=4)
    assert doc.provenance["pages_read"] == 4 and doc.provenance["n_pages"] > 4
    for page, text in zip(doc.pages[1:], raw):
        assert not re.search(gone, page.text, re.M)
        assert len(page.text.splitlines()) == len(text.splitlines()) - 1


# ------------------------------------------------------------------------ columns


def test_real_pages_are_single_column(judgment_01, raw_01):
    assert judgment_01.provenance["columns"] == [1] * 19
    assert all(find_gutter(words, width) is None for _, words, width in raw_01)


def test_two_columns_of_real_words_read_left_then_right(raw_01):
    # Pages 4 and 5 set side by side at half width: the right column's lines share their
    # heights with the left column's, so reading line by line would interleave them.
    _, left_words, width = raw_01[3]
    _, right_words, _ = raw_01[4]

    def placed(words, shift):
        return [dict(w, x0=w["x0"] / 2 + shift, x1=w["x1"] / 2 + shift) for w in words]

    both = placed(left_words, 0) + placed(right_words, width / 2)
    gutter = find_gutter(both, width)
    assert gutter is not None
    assert max(w["x1"] for w in placed(left_words, 0)) < gutter < width / 2 + 50
    text, columns = words_to_text(both, width)
    left, _ = words_to_text(left_words, width)
    right, _ = words_to_text(right_words, width)
    assert columns == 2 and text == left + "\n" + right
    naive = "\n".join(" ".join(w["text"] for w in line) for line in text_lines(both))
    assert naive != text and left.splitlines()[0] not in naive.splitlines()


@pytest.fixture(scope="module")
def two_up(pdf_dir):
    """judgment_01 printed two pages to a sheet (pages 4|5 and 6|7): a real two-column PDF."""
    source = pikepdf.open(pdf_dir / "judgment_01.pdf")
    sheets = pikepdf.new()
    for left, right in ((3, 4), (5, 6)):
        sheet = sheets.add_blank_page(page_size=(1190, 842))
        sheet.add_overlay(source.pages[left], pikepdf.Rectangle(0, 0, 595, 842))
        sheet.add_overlay(source.pages[right], pikepdf.Rectangle(595, 0, 1190, 842))
    out = io.BytesIO()
    sheets.save(out)
    return out.getvalue()


def test_two_column_pdf_pages_are_read_in_reading_order(two_up, judgment_01):
    with pdfplumber.open(io.BytesIO(two_up)) as pdf:
        naive = pdf.pages[0].extract_text()
    first_left = judgment_01.pages[3].text.splitlines()[0]
    assert first_left not in naive.splitlines()  # plain extraction mixes the two columns
    doc = read_pdf(two_up, "two_up.pdf", "two_up")
    assert doc.provenance["columns"] == [2, 2]
    assert doc.provenance["header_footer_lines_removed"] == 2  # the footer pair of each sheet
    assert doc.pages[0].text == judgment_01.pages[3].text + "\n" + judgment_01.pages[4].text
    assert doc.pages[1].text == judgment_01.pages[5].text + "\n" + judgment_01.pages[6].text


# --------------------------------------------------------------------- cause list


@pytest.fixture(scope="module")
def sc_record(raw_dir):
    with gzip.open(raw_dir / "sc_metadata/raw/01-01-2018-31-12-2018.json.gz", "rt") as handle:
        return json.load(handle)["data"][1]  # a real record with a diary number and a bench


def test_cause_list_before_the_title_is_dropped(judgment_01, sc_record):
    bench = html.unescape(sc_record["bench"])  # "HON&#39;BLE ..." as the court prints it
    assert "JUSTICE" in bench and sc_record["diary_no"]
    body = judgment_01.pages[0].text
    for noise in (f"Diary No. {sc_record['diary_no']}\nBefore: {bench}\n",
                  f"Before:\n{bench.replace(', ', chr(10))}\n",
                  f"Diary No(s). {sc_record['diary_no']}\n{bench}\n\n"):
        assert drop_cause_list(noise + body) == (body, True)


def test_cause_list_removal_is_conservative(judgment_01, sc_record, pdf_dir):
    body = judgment_01.pages[0].text
    assert drop_cause_list(body) == (body, False)
    assert judgment_01.provenance["cause_list_removed"] is False
    # A diary number without judges is not a cause list.
    text = f"Diary No. {sc_record['diary_no']}\n{body}"
    assert drop_cause_list(text) == (text, False)
    # No title within the first lines: nothing is dropped.
    text = f"Before: {html.unescape(sc_record['bench'])}\n" + "\n".join(["text"] * 50) + body
    assert drop_cause_list(text) == (text, False)
    # judgment_02 cites diary numbers inside its title block: they stay.
    doc = read_pdf(pdf_dir / "judgment_02.pdf", "judgment_02", "judgment_02", max_pages=1)
    assert "(Diary No. 15692/2025)" in doc.pages[0].text
    assert doc.provenance["cause_list_removed"] is False


# ------------------------------------------------------------ damaged and broken


@pytest.mark.parametrize("stem", DAMAGED)
def test_damaged_pdf_is_repaired_with_real_text(pdf_dir, stem):
    path = pdf_dir / f"{stem}.pdf"
    with pdfplumber.open(path) as pdf:
        assert len(pdf.pages) == 0  # really damaged for pdfplumber alone
    doc = read_pdf(path, str(path), stem, max_pages=1)
    assert isinstance(doc, Document)
    assert doc.provenance["repaired"] and doc.provenance["repaired_with"] == "pikepdf"
    assert doc.provenance["damage"] == "pdfplumber: 0 pages"
    with pikepdf.open(path) as repaired:
        assert doc.provenance["n_pages"] == len(repaired.pages) > 1
    reader = pypdf.PdfReader(path)  # pypdf recovers the same file on its own
    ours = _words(doc.pages[0].text)
    assert len(doc.pages[0].text) > 1000
    assert len(ours & _words(reader.pages[0].extract_text())) > 0.9 * len(ours)


def test_pypdf_repairs_when_pikepdf_cannot(pdf_dir, monkeypatch):
    def failing(data):
        raise RuntimeError("pikepdf unavailable")

    monkeypatch.setattr(pdf_module, "REPAIRS", (("pikepdf", failing),
                                                ("pypdf", pdf_module._repair_pypdf)))
    pdf, repaired_with, damage = open_pdf((pdf_dir / "judgment_07.pdf").read_bytes())
    with pdf:
        assert repaired_with == "pypdf" and len(pdf.pages) == 7
        assert "pikepdf unavailable" in damage
        assert "Article 12" in pdf.pages[1].extract_text()


def test_broken_inputs_become_failures_not_exceptions(pdf_dir, tmp_path):
    truncated = (pdf_dir / "judgment_01.pdf").read_bytes()[:2048]
    garbage = random.Random(7).randbytes(4096)
    for name, data in (("truncated.pdf", truncated), ("garbage.pdf", garbage),
                       ("empty.pdf", b""), ("missing.pdf", tmp_path / "missing.pdf")):
        result = read_pdf(data, name, name[:-4])
        assert isinstance(result, IngestFailure) and result.source_path == name
        assert result.reason
    assert "no page" in read_pdf(truncated, "t.pdf", "t").reason


def test_pdf_without_text_is_a_failure(pdf_dir):
    # judgment_05 with every content stream emptied: 16 pages, not one character.
    with pikepdf.open(pdf_dir / "judgment_05.pdf") as pdf:
        for page in pdf.pages:
            page.obj.Contents = pdf.make_stream(b"")
        out = io.BytesIO()
        pdf.save(out)
    result = read_pdf(out.getvalue(), "blank.pdf", "blank")
    assert isinstance(result, IngestFailure)
    assert result.reason.startswith("no text layer: 16 page(s)")


def test_directory_source_in_name_order_with_failures(pdf_dir, tmp_path):
    shutil.copy(pdf_dir / "judgment_02.pdf", tmp_path / "b.pdf")
    shutil.copy(pdf_dir / "judgment_07.pdf", tmp_path / "c.PDF")
    (tmp_path / "a.pdf").write_bytes(random.Random(1).randbytes(1000))
    (tmp_path / "notes.txt").write_text("not a pdf")
    items = list(PdfDirectorySource(tmp_path, max_pages=1))
    assert [type(i).__name__ for i in items] == ["IngestFailure", "Document", "Document"]
    assert items[0].source_path == str(tmp_path / "a.pdf")
    assert [d.doc_id for d in items[1:]] == ["b", "c"]
    assert items[2].provenance["repaired"]
    # Several processes give the same result, in the same order.
    parallel = list(PdfDirectorySource(tmp_path, max_pages=1, workers=2))
    assert [i.to_dict() for i in parallel] == [i.to_dict() for i in items]

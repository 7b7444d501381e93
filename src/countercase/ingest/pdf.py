"""PDF judgments read with pdfplumber, page by page, in reading order.

- Page indices come from the PDF's own page tree (0-based; users see index + 1), never from a
  page number printed in the text.
- Two-column pages: a vertical gutter near the middle that almost no word crosses splits the
  page; each column is cropped and read, left then right (plain ``extract_text`` interleaves
  the two columns line by line).
- Headers and footers: a line in the top or bottom band of the page (``header_footer_band``)
  whose text, digits masked, repeats on consecutive pages is boilerplate and is cropped away.
- Cause-list noise ("Diary No.", "Before:" + judges) before the case title is dropped.
- Damaged PDFs (pdfplumber sees no page, or raises) are rebuilt with pikepdf (qpdf
  reconstructs the cross-reference table and page tree), then with pypdf; what no library
  can read becomes an :class:`IngestFailure` with the reason. Nothing raises out of here.
"""

from __future__ import annotations

import io
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Iterator

import numpy as np
import pdfplumber

from countercase.config import IngestParams
from countercase.ingest.document import Document, IngestFailure, Page

log = logging.getLogger(__name__)

_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_CAUSE_LIST = re.compile(r"\A\s*(?:diary\s+no\b|before\s*:)", re.I)
_CASE_TITLE = re.compile(
    r"^.*(?:\bIN THE (?:SUPREME|HIGH) COURT\b|\bvs?\.?\s|\bversus\b|APPEAL\s+NO|PETITION\s+NO).*$",
    re.I | re.M)
GUTTER_MIN_WIDTH = 8.0  # points; narrower white bands are word spacing, not a gutter
GUTTER_MAX_CROSSING = 0.02  # share of words allowed to straddle the gutter (titles, rules)


def _line_key(text: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("#", text)).strip().lower()


def _lines(words: list[dict]) -> list[dict]:
    """Words grouped into text lines by their top edge (within 3 points), left to right."""
    lines: list[dict] = []
    for word in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(word["top"] - lines[-1]["top"]) <= 3:
            line = lines[-1]
            line["words"].append(word)
            line["top"] = min(line["top"], word["top"])
            line["bottom"] = max(line["bottom"], word["bottom"])
        else:
            lines.append({"top": word["top"], "bottom": word["bottom"], "words": [word]})
    for line in lines:
        line["text"] = " ".join(w["text"] for w in sorted(line["words"], key=lambda w: w["x0"]))
    return lines


def _band_lines(lines: list[dict], height: float, band: float) -> tuple[list[dict], list[dict]]:
    """Lines reaching into the top or the bottom band of the page."""
    top = [l for l in lines if l["top"] < height * band]
    bottom = [l for l in lines if l["bottom"] > height * (1 - band)]
    return top, bottom


def _boilerplate_keys(bands: list[tuple[list[dict], list[dict]]], min_pages: int) -> set[str]:
    """Keys of band lines that repeat on at least ``min_pages`` consecutive pages."""
    keys: set[str] = set()
    page_keys = [{_line_key(l["text"]) for l in top + bottom} for top, bottom in bands]
    for key in set().union(*page_keys) if page_keys else ():
        run = best = 0
        for present in (key in k for k in page_keys):
            run = run + 1 if present else 0
            best = max(best, run)
        if best >= min_pages and key:
            keys.add(key)
    return keys


def find_gutter(words: list[dict], width: float) -> float | None:
    """x of the column gutter if the page has two columns, else None."""
    if len(words) < 40:
        return None
    lo, hi = int(width * 0.3), int(width * 0.7)
    x0 = np.clip(np.array([w["x0"] for w in words], dtype=int), lo, hi)
    x1 = np.clip(np.array([w["x1"] for w in words], dtype=int) + 1, lo, hi)
    # crossing[x] = number of words whose horizontal extent covers x (a difference array).
    delta = np.zeros(hi - lo + 1, dtype=int)
    np.add.at(delta, x0 - lo, 1)
    np.add.at(delta, x1 - lo, -1)
    crossing = np.cumsum(delta)[:-1]
    free = np.concatenate(([False], crossing <= GUTTER_MAX_CROSSING * len(words), [False]))
    edges = np.flatnonzero(np.diff(free.astype(int)))
    if len(edges) < 2:
        return None
    starts, ends = edges[0::2], edges[1::2]
    widest = int(np.argmax(ends - starts))
    if ends[widest] - starts[widest] < GUTTER_MIN_WIDTH:
        return None
    gutter = lo + (starts[widest] + ends[widest]) / 2
    left = sum(1 for w in words if w["x1"] <= gutter)
    right = sum(1 for w in words if w["x0"] >= gutter)
    # Both sides must hold real text, or it is a ragged single column.
    return gutter if min(left, right) >= 0.25 * len(words) else None


def _page_text(page, words: list[dict], top: float, bottom: float) -> tuple[str, int]:
    body_words = [w for w in words if w["top"] >= top and w["bottom"] <= bottom]
    gutter = find_gutter(body_words, float(page.width))
    if gutter is None:
        return page.within_bbox((0, top, page.width, bottom)).extract_text() or "", 1
    # within_bbox, not crop: a character straddling the edge belongs to neither side's cut.
    left = page.within_bbox((0, top, gutter, bottom)).extract_text() or ""
    right = page.within_bbox((gutter, top, page.width, bottom)).extract_text() or ""
    return f"{left}\n{right}", 2


def _open(data: bytes) -> tuple[pdfplumber.PDF | None, str | None, str]:
    """Open with pdfplumber; repair first when it sees no pages. Returns (pdf, repair, error)."""
    errors = []
    for repair in (None, "pikepdf", "pypdf"):
        try:
            payload = data if repair is None else _REPAIRS[repair](data)
            pdf = pdfplumber.open(io.BytesIO(payload))
            if len(pdf.pages) > 0:
                return pdf, repair, ""
            pdf.close()
            errors.append(f"{repair or 'pdfplumber'}: no pages")
        except Exception as error:  # every library signals damage differently
            errors.append(f"{repair or 'pdfplumber'}: {type(error).__name__}: {error}"[:200])
    return None, None, "; ".join(errors)


def _repair_pikepdf(data: bytes) -> bytes:
    import pikepdf

    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(data)) as pdf:
        pdf.save(out)
    return out.getvalue()


def _repair_pypdf(data: bytes) -> bytes:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    writer = pypdf.PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


_REPAIRS = {"pikepdf": _repair_pikepdf, "pypdf": _repair_pypdf}


def drop_cause_list(text: str) -> tuple[str, bool]:
    """Drop a cause-list preamble up to the first case-title line, only when one is present."""
    if not _CAUSE_LIST.match(text):
        return text, False
    title = _CASE_TITLE.search(text)
    if not title or title.start() == 0:
        return text, False
    return text[title.start():], True


def read_pdf(data: bytes | Path, source_path: str, doc_id: str,
             params: IngestParams = IngestParams(), source: str = "pdf") -> Document | IngestFailure:
    try:
        if isinstance(data, Path):
            data = data.read_bytes()
        pdf, repair, error = _open(data)
        if pdf is None:
            return IngestFailure(source_path, f"unreadable PDF ({error})")
        with pdf:
            words = [page.extract_words() for page in pdf.pages]
            bands = [_band_lines(_lines(w), float(page.height), params.header_footer_band)
                     for page, w in zip(pdf.pages, words)]
            boilerplate = _boilerplate_keys(bands, params.header_footer_min_pages)
            pages, columns, removed = [], [], 0
            for page, page_words, (top_lines, bottom_lines) in zip(pdf.pages, words, bands):
                cut_top = [l for l in top_lines if _line_key(l["text"]) in boilerplate]
                cut_bottom = [l for l in bottom_lines if _line_key(l["text"]) in boilerplate]
                removed += len(cut_top) + len(cut_bottom)
                top = max((l["bottom"] for l in cut_top), default=0.0) + 0.01
                bottom = min((l["top"] for l in cut_bottom), default=float(page.height)) - 0.01
                text, n_columns = _page_text(page, page_words, top, bottom)
                pages.append(Page(page.page_number - 1, text))
                columns.append(n_columns)
    except Exception as error:  # a malformed page must not stop the batch
        return IngestFailure(source_path, f"cannot read PDF: {type(error).__name__}: {error}"[:300])
    if not any(page.text.strip() for page in pages):
        return IngestFailure(source_path, "no text layer (scanned image PDF?); OCR is not done")
    pages[0].text, cause_list = drop_cause_list(pages[0].text)
    return Document(doc_id, source, source_path, pages, {
        "reader": "pdfplumber", "n_pages": len(pages), "columns": columns,
        "header_footer_lines_removed": removed, "boilerplate_lines": sorted(boilerplate),
        "repaired": repair is not None, "repaired_with": repair, "cause_list_removed": cause_list,
    })


class PdfDirectorySource:
    """Every ``*.pdf`` of a folder, in file-name order; doc_id is the file stem."""

    def __init__(self, directory: str | Path, params: IngestParams = IngestParams()) -> None:
        self.directory = Path(directory)
        self.params = params

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        for path in sorted(self.directory.glob("*.pdf")):
            yield read_pdf(path, str(path), path.stem, self.params)

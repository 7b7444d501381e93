"""PDF judgments read with pdfplumber, page by page, in reading order.

- Page indices come from the PDF's own page tree (0-based; users see index + 1), never from a
  page number printed in the text.
- The text of a page is built from ``page.extract_words()`` alone: the words are grouped into
  lines exactly as ``page.extract_text()`` does, so a plain page reads the same, but every word
  is assigned to one region by its position (a crop edge can neither cut nor duplicate it).
- Two-column pages: a vertical gutter that almost no text line crosses splits the page; the
  left column is read before the right one (``extract_text`` would interleave them line by
  line). Lines that do cross the gutter (a title over both columns) are read in place.
- Headers and footers: a line within ``header_footer_band`` of the page height from the top or
  the bottom of the page's text whose text, digits masked ("Page 3" = "Page 4"), repeats on
  consecutive pages is boilerplate and is dropped. The band is measured from the outermost
  text line rather than the paper edge: on the real judgments the footer sits 6-7 % above
  the paper edge.
- Cause-list noise ("Diary No.", "Before:" + judges) before the case title is dropped.
- Damaged PDFs (pdfplumber sees no page, or raises) are rebuilt with pikepdf (qpdf
  reconstructs the cross-reference table and page tree), then with pypdf; what no library
  can read becomes an :class:`IngestFailure` with the reason. Nothing raises out of here.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pdfplumber
from pdfplumber.utils import cluster_objects

from countercase.config import IngestParams
from countercase.errors import CountercaseError
from countercase.ingest.document import Document, IngestFailure, Page
from countercase.ingest.workers import PdfJob, read_in_workers

log = logging.getLogger(__name__)

READER = f"pdfplumber {pdfplumber.__version__}"
LINE_TOLERANCE = 3  # points; pdfplumber's default y_tolerance, so lines match extract_text
GUTTER_MIN_WIDTH = 8.0  # points; narrower white bands are word spacing, not a gutter
GUTTER_MAX_CROSSING = 0.15  # share of lines allowed across the gutter (titles over both columns)
GUTTER_MIN_LINES = 10  # fewer lines cannot show a gutter "across most of the page height"
COLUMN_MIN_SHARE = 0.25  # each column holds at least this share of the words

_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_CAUSE_LIST_START = re.compile(r"\A\s*(?:diary\s+no|before\s*:)", re.I)
# "HON'BLE MR. JUSTICE X", "X, CJI", "X and Y, JJ." (but not the "J." of "J.K. Industries")
_JUDGE = re.compile(r"\b(?:HON.?BLE|JUSTICE|CJI|JJ?\.(?=[\s,;]|$))", re.I)
_CASE_TITLE = re.compile(
    r"\b(?:IN\s+THE\s+(?:SUPREME|HIGH)\s+COURT|(?:NON[- ]?)?REPORTABLE\b|VERSUS\b|VS?\.?\s"
    r"|APPEAL\s*(?:\(.{1,12}\)\s*)?NO|PETITION\s*(?:\(.{1,12}\)\s*)?NO)", re.I)
CAUSE_LIST_MAX_LINES = 40  # the title must come this early, or nothing is dropped


# ---------------------------------------------------------------- words -> text


def text_lines(words: list[dict]) -> list[list[dict]]:
    """Words grouped into lines, top to bottom, as ``pdfplumber``'s ``extract_text`` groups them."""
    return cluster_objects(words, "top", LINE_TOLERANCE) if words else []


def _join(lines: list[list[dict]]) -> str:
    return "\n".join(" ".join(word["text"] for word in line) for line in lines)


def find_gutter(words: list[dict], width: float) -> float | None:
    """x of the gutter between two text columns, or None for a single-column page.

    A gutter is a vertical band, at least ``GUTTER_MIN_WIDTH`` wide in the middle half of the
    page, that at most ``GUTTER_MAX_CROSSING`` of the text lines cross, with at least
    ``COLUMN_MIN_SHARE`` of the words on each side of it.
    """
    lines = text_lines(words)
    if len(lines) < GUTTER_MIN_LINES:
        return None
    lo, hi = int(width * 0.25), int(np.ceil(width * 0.75))
    crossing = np.zeros(hi - lo, dtype=int)
    for line in lines:
        covered = np.zeros(hi - lo, dtype=bool)
        for word in line:
            covered[max(int(word["x0"]) - lo, 0):max(int(np.ceil(word["x1"])) - lo, 0)] = True
        crossing += covered
    free = np.concatenate(([0], crossing <= GUTTER_MAX_CROSSING * len(lines), [0]))
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
    # Text on one side only is a ragged or indented single column, not two columns.
    return gutter if min(left, right) >= COLUMN_MIN_SHARE * len(words) else None


def words_to_text(words: list[dict], width: float) -> tuple[str, int]:
    """The page's text in reading order and its number of columns (1 or 2)."""
    gutter = find_gutter(words, width)
    lines = text_lines(words)
    if gutter is None:
        return _join(lines), 1
    blocks: list[str] = []
    band: list[list[dict]] = []  # consecutive lines that stay on their side of the gutter

    def flush() -> None:
        left = [w for line in band for w in line if w["x0"] < gutter]
        right = [w for line in band for w in line if w["x0"] >= gutter]
        blocks.extend(text for text in (_join(text_lines(left)), _join(text_lines(right))) if text)
        band.clear()

    for line in lines:
        if any(w["x0"] < gutter < w["x1"] for w in line):
            flush()
            blocks.append(_join([line]))
        else:
            band.append(line)
    flush()
    return "\n".join(blocks), 2


# ------------------------------------------------------------ headers and footers


def _line_key(line: list[dict]) -> str:
    text = " ".join(word["text"] for word in line)
    return _SPACES.sub(" ", _DIGITS.sub("#", text)).strip().lower()


def _bands(lines: list[list[dict]], height: float, band: float) -> tuple[list, list]:
    """Lines near the top and near the bottom of the page's text (see the module docstring)."""
    if not lines:
        return [], []
    first = min(w["top"] for line in lines for w in line)
    last = max(w["bottom"] for line in lines for w in line)
    top = [line for line in lines if min(w["top"] for w in line) <= first + band * height]
    bottom = [line for line in lines if max(w["bottom"] for w in line) >= last - band * height]
    return top, bottom


def _numbers(line: list[dict]) -> tuple[int, ...]:
    return tuple(int(n) for w in line for n in _DIGITS.findall(w["text"]))


def _counter_step(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """True if ``after`` is ``before`` with its page counter(s) moved on by one common step."""
    steps = {b - a for a, b in zip(before, after) if b != a}
    return len(before) == len(after) and len(steps) <= 1 and all(0 < s <= 4 for s in steps)


def _repeated(lines_per_page: list[list[list[dict]]], min_pages: int) -> set[str]:
    """Keys of lines repeated on at least ``min_pages`` consecutive pages.

    From one page to the next the numbers of the line may only stay or move on by one common
    step of 1 to 4 (page counters; 2 for two pages printed on one sheet): masked digits alone
    would also match footnotes such as "2 (2004) 2 SCC 130" and "3 (1999) 2 SCC 37" at the
    foot of two pages.
    """
    repeated: set[str] = set()
    run: dict[str, tuple[int, tuple[int, ...]]] = {}  # key -> (pages in the run, numbers)
    for lines in lines_per_page:
        numbers: dict[str, tuple[int, ...]] = {}
        for line in lines:
            numbers.setdefault(_line_key(line), _numbers(line))
        numbers.pop("", None)
        current = {}
        for key, these in numbers.items():
            length, before = run.get(key, (0, None))
            continues = before is not None and _counter_step(before, these)
            current[key] = (length + 1 if continues else 1, these)
        run = current
        repeated |= {key for key, (length, _) in run.items() if length >= min_pages}
    return repeated


def strip_boilerplate(pages_words: list[list[dict]], heights: list[float], band: float,
                      min_pages: int) -> tuple[list[list[dict]], int, list[str]]:
    """Words of each page without repeated header/footer lines; count and text of those lines."""
    lines = [text_lines(words) for words in pages_words]
    bands = [_bands(page_lines, h, band) for page_lines, h in zip(lines, heights)]
    boiler = [_repeated([b[zone] for b in bands], min_pages) for zone in (0, 1)]
    kept_pages, removed, keys = [], 0, set()
    for page_lines, page_bands in zip(lines, bands):
        drop = {id(line) for zone in (0, 1) for line in page_bands[zone]
                if _line_key(line) in boiler[zone]}
        removed += len(drop)
        keys |= {_line_key(line) for line in page_lines if id(line) in drop}
        kept_pages.append([w for line in page_lines if id(line) not in drop for w in line])
    return kept_pages, removed, sorted(keys)


# --------------------------------------------------------------------- cause list


def drop_cause_list(text: str) -> tuple[str, bool]:
    """Drop a cause-list preamble ("Diary No." / "Before:" and judges) up to the case title.

    Conservative: only when the text starts with such a marker, judges are named before the
    title, and a title line comes within the first ``CAUSE_LIST_MAX_LINES`` lines.
    """
    if not _CAUSE_LIST_START.match(text):
        return text, False
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if number >= CAUSE_LIST_MAX_LINES:
            break
        title = _CASE_TITLE.search(line) and not _JUDGE.search(line)
        if number > 0 and title and not _CAUSE_LIST_START.match(line):
            if _JUDGE.search(text[:offset]):
                return text[offset:], True
            break
        offset += len(line)
    return text, False


# ------------------------------------------------------------------ open / repair


def _repair_pikepdf(data: bytes) -> bytes:
    import pikepdf

    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(data)) as pdf:  # qpdf rebuilds a broken xref on open
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


REPAIRS: tuple[tuple[str, Callable[[bytes], bytes]], ...] = (
    ("pikepdf", _repair_pikepdf), ("pypdf", _repair_pypdf))


class UnreadablePdf(CountercaseError):
    """No reader, with or without repair, sees a page."""


_ADDRESS = re.compile(r"\s+at 0x[0-9a-fA-F]+")


def describe(error: BaseException, limit: int = 200) -> str:
    """``Type: message``, without object addresses ("<BytesIO object at 0x7f..>"), so that a
    failures file is the same from run to run."""
    return _ADDRESS.sub("", f"{type(error).__name__}: {error}")[:limit]


def _pikepdf_pages(data: bytes) -> int | None:
    """The page count qpdf finds (it rebuilds a damaged cross-reference table), None if none."""
    import pikepdf

    try:
        with pikepdf.open(io.BytesIO(data)) as pdf:
            return len(pdf.pages)
    except Exception:  # a file qpdf cannot open is judged by pdfplumber alone
        return None


def open_pdf(data: bytes) -> tuple[pdfplumber.PDF, str | None, str | None]:
    """(pdf, library that repaired it or None, why a repair was needed or None).

    A file that opens but shows fewer pages than qpdf finds in it (one flipped bit in a page
    object: 14 pages where three libraries count 15) is damaged too, and is repaired.
    """
    tries: list[str] = []
    expected = _pikepdf_pages(data)
    for name, repair in ((None, None), *REPAIRS):
        try:
            pdf = pdfplumber.open(io.BytesIO(repair(data) if repair else data))
            found = len(pdf.pages)
            if found > 0 and (expected is None or found >= expected or name is not None):
                return pdf, name, "; ".join(tries) or None
            pdf.close()
            tries.append(f"{name or 'pdfplumber'}: {found} pages"
                         + (f" where qpdf finds {expected}" if found else ""))
        except Exception as error:  # every library signals damage with its own exceptions
            tries.append(f"{name or 'pdfplumber'}: {describe(error)}")
    raise UnreadablePdf("; ".join(tries))


# ------------------------------------------------------------------------ reader


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}"[:200])


@contextmanager
def _library_warnings() -> Iterator[list[str]]:
    """The PDF libraries' warnings during one read, collected rather than logged: a damaged file
    makes hundreds ("Data-loss while decompressing corrupted data"), and what they say belongs
    to that document's provenance, not to the console."""
    collect = _Collect()
    loggers = [logging.getLogger(name) for name in ("pdfminer", "pypdf")]
    saved = [(logger.propagate, logger.level) for logger in loggers]
    for logger in loggers:
        logger.addHandler(collect)
        logger.propagate = False
        logger.setLevel(logging.WARNING)
    try:
        yield collect.messages
    finally:
        for logger, (propagate, level) in zip(loggers, saved):
            logger.removeHandler(collect)
            logger.propagate, logger.level = propagate, level


def read_pdf(data: bytes | Path, source_path: str, doc_id: str,
             params: IngestParams = IngestParams(), source: str = "pdf",
             max_pages: int | None = None) -> Document | IngestFailure:
    """One PDF as a :class:`Document`, or an :class:`IngestFailure`; never raises.

    ``max_pages`` reads only the first pages (a quick look at a large collection).
    """
    if max_pages is not None and max_pages < 1:
        raise ValueError(f"max_pages must be at least 1, not {max_pages}")
    with _library_warnings() as warnings:
        result = _read_pdf(data, source_path, doc_id, params, source, max_pages)
    if warnings and isinstance(result, Document):
        result.provenance["reader_warnings"] = {"count": len(warnings), "first": warnings[0]}
    return result


def _read_pdf(data: bytes | Path, source_path: str, doc_id: str, params: IngestParams,
              source: str, max_pages: int | None) -> Document | IngestFailure:
    try:
        if isinstance(data, Path):
            data = data.read_bytes()
        pdf, repaired_with, damage = open_pdf(data)
    except UnreadablePdf as error:
        return IngestFailure(source_path, f"unreadable PDF, no page found ({error})")
    except Exception as error:
        return IngestFailure(source_path, f"cannot read: {describe(error, 300)}")
    try:
        with pdf:
            pages = pdf.pages[:max_pages]
            words, errors = [], {}
            for page in pages:
                try:
                    words.append(page.extract_words())
                except Exception as error:  # one broken content stream must not lose the rest
                    words.append([])
                    errors[page.page_number - 1] = describe(error)
                page.close()  # frees the parsed objects; words are all we keep
            kept, removed, boilerplate = strip_boilerplate(
                words, [float(p.height) for p in pages], params.header_footer_band,
                params.header_footer_min_pages)
            texts, columns = zip(*(words_to_text(w, float(p.width)) for w, p in zip(kept, pages)))
            n_pages = len(pdf.pages)
            indices = [page.page_number - 1 for page in pages]
    except Exception as error:
        return IngestFailure(source_path, f"cannot read PDF: {describe(error, 300)}")
    if not any(text.strip() for text in texts):
        return IngestFailure(source_path, f"no text layer: {len(texts)} page(s) without any "
                             "extractable text (scanned image?); OCR is not done")
    first, cause_list = drop_cause_list(texts[0])
    texts = (first, *texts[1:])
    provenance: dict[str, Any] = {
        "reader": READER, "n_pages": n_pages, "pages_read": len(texts), "columns": list(columns),
        "header_footer_lines_removed": removed, "boilerplate_lines": boilerplate,
        "cause_list_removed": cause_list, "repaired": repaired_with is not None,
        "repaired_with": repaired_with, "damage": damage,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if errors:
        provenance["page_errors"] = errors
    return Document(doc_id, source, source_path,
                    [Page(index, text) for index, text in zip(indices, texts)], provenance)


# -------------------------------------------------------------- many PDFs at once


def read_pdfs(jobs: Iterable[PdfJob], params: IngestParams = IngestParams(), source: str = "pdf",
              workers: int = 1, max_pages: int | None = None
              ) -> Iterator[tuple[PdfJob, Document | IngestFailure]]:
    """Read PDFs in order, each in a worker process under ``params.pdf_cpu_seconds`` of CPU
    (:mod:`countercase.ingest.workers`; pdfminer is pure Python: one core per PDF).

    A PDF that overruns its limit, or whose reader dies, becomes a failure; the rest are read.
    """
    read = partial(read_pdf, params=params, source=source, max_pages=max_pages)
    yield from read_in_workers(jobs, read, workers, params.pdf_cpu_seconds)


class PdfDirectorySource:
    """Every ``*.pdf`` of a folder, in file-name order; doc_id is the file stem."""

    name = "pdf"

    def __init__(self, directory: str | Path, params: IngestParams = IngestParams(),
                 workers: int = 1, max_pages: int | None = None) -> None:
        self.directory = Path(directory)
        self.params = params
        self.workers = workers
        self.max_pages = max_pages

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        paths = sorted(p for p in self.directory.glob("*") if p.suffix.lower() == ".pdf")
        jobs = (PdfJob(path, str(path), path.stem) for path in paths)
        for _, item in read_pdfs(jobs, self.params, "pdf", self.workers, self.max_pages):
            yield item

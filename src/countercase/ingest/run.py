"""The ``ingest`` stage: every source into ``documents.jsonl``, unreadable inputs into
``failures.jsonl``.

- ``documents.jsonl``: one :meth:`Document.to_dict` per line (doc_id, source, source_path,
  pages [{index, text}], provenance), sorted by doc_id, UTF-8 (``ensure_ascii=False``).
- ``failures.jsonl``: one ``{"source_path", "reason"}`` per line, sorted by source_path.

Both files are written whole to a temporary name and then renamed, so a run that dies leaves
no half-written output behind.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

from tqdm import tqdm

from countercase.errors import CountercaseError
from countercase.ingest.document import Document, IngestFailure, Source

log = logging.getLogger(__name__)

PDF_SOURCES = ("pdf", "sc_tar")


def _write_jsonl(path: Path, records: Iterable[dict]) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(partial, path)


def run_ingest(sources: Iterable[Source], out_dir: str | Path) -> dict[str, Any]:
    """Read every source; write the two files; return counts and PDF reading speed.

    A doc_id seen twice keeps its first document; the second is recorded as a failure.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    documents: dict[str, Document] = {}
    failures: list[IngestFailure] = []
    per_source: Counter[str] = Counter()
    failures_per_source: Counter[str] = Counter()
    pdf_pages, pdf_seconds, repaired = 0, 0.0, 0
    for source in sources:
        label = getattr(source, "name", type(source).__name__)
        iterator = iter(source)
        with tqdm(desc=f"ingest {label}", unit="doc") as progress:
            while True:
                started = time.perf_counter()
                item = next(iterator, None)
                elapsed = time.perf_counter() - started
                if item is None:
                    break
                progress.update()
                if isinstance(item, IngestFailure):
                    log.warning("cannot ingest %s: %s", item.source_path, item.reason)
                    failures.append(item)
                    failures_per_source[label] += 1
                elif item.doc_id in documents:
                    failures.append(IngestFailure(
                        item.source_path, f"duplicate doc_id {item.doc_id!r}: "
                        f"{documents[item.doc_id].source_path} was kept"))
                    failures_per_source[label] += 1
                else:
                    documents[item.doc_id] = item
                    per_source[item.source] += 1
                    if item.source in PDF_SOURCES:
                        pdf_pages += len(item.pages)
                        pdf_seconds += elapsed
                        repaired += bool(item.provenance.get("repaired"))

    _write_jsonl(out_dir / "documents.jsonl",
                 (documents[doc_id].to_dict() for doc_id in sorted(documents)))
    _write_jsonl(out_dir / "failures.jsonl",
                 (f.to_dict() for f in sorted(failures, key=lambda f: (f.source_path, f.reason))))
    stats = {
        "n_documents": len(documents),
        "n_pages": sum(len(d.pages) for d in documents.values()),
        "n_failures": len(failures),
        "documents_per_source": dict(sorted(per_source.items())),
        "failures_per_source": dict(sorted(failures_per_source.items())),
        "n_pdf_repaired": repaired,
        "pdf_pages": pdf_pages,
        "pdf_seconds": round(pdf_seconds, 3),
        "pdf_pages_per_second": round(pdf_pages / pdf_seconds, 2) if pdf_seconds else None,
    }
    log.info("ingest: %d documents, %d pages, %d failures -> %s", stats["n_documents"],
             stats["n_pages"], stats["n_failures"], out_dir)
    return stats


class DocumentsError(CountercaseError, ValueError):
    """A documents file that is not the ingest stage's: the message names the file and line."""


def read_documents(path: str | Path, span: tuple[int, int, int] | None = None
                   ) -> Iterator[Document]:
    """The documents of a ``documents.jsonl``, in file order; a line that is not one of the
    ingest stage's documents stops the reading with its file and line named. ``span``
    (first line number, start byte, stop byte; see :func:`line_spans`) reads one shard."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise DocumentsError(f"cannot read documents file {path}: {error.strerror}") from None
    first, start, stop = span if span is not None else (1, 0, None)
    with handle:
        handle.seek(start)
        lines = iter(handle.readline, b"")
        if stop is not None:
            lines = _until(handle, lines, stop)
        for number, raw in enumerate(lines, start=first):
            if not raw.strip():
                continue
            try:
                document = Document.from_dict(json.loads(raw.decode("utf-8")))
            except (UnicodeDecodeError, RecursionError, KeyError, TypeError, ValueError,
                    AttributeError) as error:
                what = f"missing {error}" if isinstance(error, KeyError) else \
                    f"{type(error).__name__}: {error}"[:160]
                raise DocumentsError(f"{path}:{number}: not a document of the ingest stage "
                                     f"({what}); give the ingest stage's documents.jsonl") from None
            yield document


def _until(handle, lines: Iterator[bytes], stop: int) -> Iterator[bytes]:
    for raw in lines:
        yield raw
        if handle.tell() >= stop:
            return


def line_spans(path: str | Path, lines_per_span: int) -> list[tuple[int, int, int]]:
    """``documents.jsonl`` cut into spans of ``lines_per_span`` lines: (first line number,
    start byte, stop byte) each, for :func:`read_documents` to read one span."""
    if lines_per_span < 1:
        raise ValueError(f"lines_per_span must be at least 1, not {lines_per_span}")
    spans, offset, first = [], 0, 1
    start, count = 0, 0
    try:
        with Path(path).open("rb") as handle:
            for raw in handle:
                offset += len(raw)
                count += 1
                if count == lines_per_span:
                    spans.append((first, start, offset))
                    first, start, count = first + count, offset, 0
    except OSError as error:
        raise DocumentsError(f"cannot read documents file {path}: {error.strerror}") from None
    if count:
        spans.append((first, start, offset))
    return spans

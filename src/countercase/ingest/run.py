"""The ``ingest`` stage: every source into ``documents.jsonl``, unreadable inputs into ``failures.jsonl``."""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

from tqdm import tqdm

from countercase.ingest.document import Document, IngestFailure, Source

log = logging.getLogger(__name__)


def run_ingest(sources: Iterable[Source], out_dir: Path) -> dict[str, Any]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    documents: dict[str, Document] = {}
    failures: list[IngestFailure] = []
    per_source: Counter[str] = Counter()
    pdf_pages, pdf_seconds, repaired = 0, 0.0, 0
    for source in sources:
        iterator = iter(source)
        progress = tqdm(desc=f"ingest {type(source).__name__}", unit="doc")
        while True:
            started = time.perf_counter()
            try:
                item = next(iterator)
            except StopIteration:
                break
            elapsed = time.perf_counter() - started
            progress.update()
            if isinstance(item, IngestFailure):
                log.warning("cannot ingest %s: %s", item.source_path, item.reason)
                failures.append(item)
                continue
            if item.doc_id in documents:
                failures.append(IngestFailure(item.source_path,
                                              f"duplicate doc_id {item.doc_id}; first kept"))
                continue
            documents[item.doc_id] = item
            per_source[item.source] += 1
            if item.source in ("pdf", "sc_tar"):
                pdf_pages += len(item.pages)
                pdf_seconds += elapsed
                repaired += bool(item.provenance.get("repaired"))
        progress.close()

    with (out_dir / "documents.jsonl").open("w", encoding="utf-8") as handle:
        for doc_id in sorted(documents):
            handle.write(json.dumps(documents[doc_id].to_dict(), ensure_ascii=False) + "\n")
    with (out_dir / "failures.jsonl").open("w", encoding="utf-8") as handle:
        for failure in sorted(failures, key=lambda f: f.source_path):
            handle.write(json.dumps(failure.to_dict(), ensure_ascii=False) + "\n")
    return {
        "n_documents": len(documents),
        "n_pages": sum(len(d.pages) for d in documents.values()),
        "n_failures": len(failures),
        "documents_per_source": dict(sorted(per_source.items())),
        "n_pdf_repaired": repaired,
        "pdf_pages": pdf_pages,
        "pdf_seconds": round(pdf_seconds, 3),
        "pdf_pages_per_second": round(pdf_pages / pdf_seconds, 2) if pdf_seconds else None,
    }


def read_documents(path: str | Path) -> Iterator[Document]:
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield Document.from_dict(json.loads(line))

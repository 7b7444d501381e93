"""Any collection in TREC form through the same pipeline: documents as JSONL (``id``,
``contents``), indexed here like the AILA corpus (BM25 over chunks and whole documents, dense
over chunks). Documents are searched as the ``precedents`` task; they carry no judgment metadata,
so metadata filters do not apply to them. A line that is not a JSON object with a non-empty
``id`` and ``contents`` is written to ``failures.jsonl`` with its line number and skipped.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from countercase.config import ExtractParams, IndexParams
from countercase.index.bm25 import build_bm25_index
from countercase.index.dense import build_embeddings
from countercase.index.run import plain_chunk_records, plain_chunk_table, plain_doc_records
from countercase.ingest.document import Document, Page
from countercase.retrieve.load import IndexPaths

log = logging.getLogger(__name__)


class CollectionError(ValueError):
    """A collection that cannot be evaluated: unknown, or no usable document."""


def read_jsonl_documents(path: Path) -> tuple[list[Document], list[dict]]:
    documents, failures, seen = [], [], set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id, text = str(record["id"]).strip(), record["contents"]
                if not doc_id or not isinstance(text, str) or not text.strip():
                    raise ValueError("empty id or contents")
                if doc_id in seen:
                    raise ValueError(f"duplicate id {doc_id!r}")
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                failures.append({"source_path": f"{path}:{number}",
                                 "reason": f"{type(error).__name__}: {error}"[:200]})
                continue
            seen.add(doc_id)
            documents.append(Document(doc_id, "jsonl", f"{path}:{number}", [Page(0, text)]))
    if not documents:
        raise CollectionError(f"{path}: no document with an 'id' and 'contents'")
    return documents, failures


def index_collection(docs: Path, out: Path, index: IndexParams = IndexParams(),
                     extract: ExtractParams = ExtractParams()) -> tuple[IndexPaths, set[str]]:
    documents, failures = read_jsonl_documents(docs)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "failures.jsonl").open("w", encoding="utf-8") as handle:
        for failure in failures:
            log.warning("skipped %s: %s", failure["source_path"], failure["reason"])
            handle.write(json.dumps(failure) + "\n")
    paths = IndexPaths(out / "index", out / "dense", out / "chunks.parquet", out / "none.parquet")
    table = plain_chunk_table(documents, extract, "Unknown")
    table.to_parquet(paths.chunks, index=False)
    build_bm25_index(plain_chunk_records(table), paths.index_dir / "precedents_chunks",
                     threads=index.threads)
    build_bm25_index(plain_doc_records(documents), paths.index_dir / "precedents_docs",
                     threads=index.threads)
    build_embeddings(table["chunk_id"].tolist(), table["text"].tolist(), index.encoder,
                     paths.dense_dir / "precedents", batch_size=index.batch_size,
                     precision=index.precision)
    return paths, {d.doc_id for d in documents}

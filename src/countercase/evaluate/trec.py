"""Any collection in TREC form through the same pipeline (:func:`countercase.datasets.trec_dataset`):
its documents indexed here like the AILA corpus (BM25 over chunks and whole documents, dense over
chunks) and searched as the ``precedents`` task; they carry no judgment metadata, so metadata
filters do not apply to them. A line of the documents file that is not a JSON object with a
non-empty ``id`` and ``contents`` is written to ``failures.jsonl`` with its line number and
skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

from countercase import layout
from countercase.config import ExtractParams, IndexParams
from countercase.datasets.trec import read_jsonl_documents
from countercase.index.bm25 import build_bm25_index
from countercase.index.dense import build_embeddings
from countercase.index.encoders import INT8, find_int8_model
from countercase.index.run import (plain_chunk_records, plain_chunk_table, plain_doc_records,
                                   task_precision)
from countercase.ingest.document import Document, Page
from countercase.layout import IndexPaths

log = logging.getLogger(__name__)


def index_collection(docs: Path, out: Path, index: IndexParams, extract: ExtractParams,
                     embed: bool = True) -> tuple[IndexPaths, set[str]]:
    """The collection's indexes under ``out``: BM25 always, the dense index only when ``embed``
    (a condition reads vectors: embedding is most of the cost)."""
    found, failures = read_jsonl_documents(docs)
    documents = [Document(doc_id, "jsonl", f"{docs}:{doc_id}", [Page(0, text)])
                 for doc_id, text in found]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "failures.jsonl").open("w", encoding="utf-8") as handle:
        for failure in failures:
            log.warning("skipped %s: %s", failure["source_path"], failure["reason"])
            handle.write(json.dumps(failure) + "\n")
    paths = folder_paths(out)
    table = plain_chunk_table(documents, extract, "Unknown")
    table.to_parquet(paths.chunks, index=False)
    build_bm25_index(plain_chunk_records(table), paths.index_dir / "precedents_chunks",
                     threads=index.threads)
    build_bm25_index(plain_doc_records(documents), paths.index_dir / "precedents_docs",
                     threads=index.threads)
    if embed:
        # a user's collection has no tuning half: it is read as the precedents are, with the
        # int8 model the project's own calibration made (stage embed)
        precision = task_precision(index, "precedents")
        int8_model = find_int8_model(layout.DENSE) if precision == INT8 else None
        if precision == INT8 and int8_model is None:
            log.warning("index.precision is onnx-int8 but %s holds no int8 model (stage "
                        "embed): this collection is embedded in float32", layout.DENSE / "int8")
            precision = "float32"
        build_embeddings(table["chunk_id"].tolist(), table["text"].tolist(), index.encoder,
                         paths.dense_dir / "precedents", batch_size=index.batch_size,
                         precision=precision, max_seq_length=index.max_seq_length,
                         int8_model=int8_model)
    else:
        log.info("no chosen condition reads a vector: %d chunks left unembedded", len(table))
    return paths, {d.doc_id for d in documents}


def cached_collection(docs: Path, root: Path, index: IndexParams, extract: ExtractParams,
                      embed: bool) -> IndexPaths:
    """The indexes of ``docs`` (:func:`index_collection`), built once under ``root`` in a
    folder named for the file (its path, size and modification time) and the settings that
    shape them, and read back by every later search of the same file."""
    stat = Path(docs).stat()
    key = json.dumps([str(Path(docs).resolve()), stat.st_size, stat.st_mtime_ns,
                      index.model_dump_json(), extract.model_dump_json(), embed])
    out = Path(root) / hashlib.sha256(key.encode()).hexdigest()[:16]
    done = out / "built.json"
    if not done.is_file():
        shutil.rmtree(out, ignore_errors=True)  # a build that stopped part of the way
        log.info("indexing %s once, into %s", docs, out)
        _, doc_ids = index_collection(docs, out, index, extract, embed)
        done.write_text(json.dumps({"documents": str(docs), "judgments": len(doc_ids),
                                    "embedded": embed}) + "\n")
    return folder_paths(out)


def folder_paths(out: Path) -> IndexPaths:
    """Where a collection's indexes lie under ``out`` (``none``: a TREC folder has no
    metadata, fact sheets or holding profiles)."""
    return IndexPaths(out / "index", out / "dense", out / "chunks.parquet", out / "none.parquet",
                      out / "fact_index", out / "none.jsonl")

"""Chunking variants for the ablation: the judgments cut again at another chunk size, with a BM25
index of their own (BM25 only: another chunking would need another 25-minute embedding). Stage
``chunkings`` builds every variant a system of ``configs/systems.yaml`` names
(:func:`build_all`) into :data:`countercase.layout.CHUNKINGS`, which evaluate, regress and search
read.

The extract stage's sections and metadata are reused, so a variant differs from the main chunk
table in chunk size and overlap only. Built once under ``out/<size>_<overlap>/``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from countercase.config import ExtractParams
from countercase.extract.chunking import chunk_document, load_tokenizer
from countercase.extract.run import CHUNK_CASE_FIELDS, read_sections
from countercase.index.bm25 import build_bm25_index
from countercase.index.run import chunk_records
from countercase.ingest.run import read_documents
from countercase.layout import IndexPaths
from countercase.retrieve.registry import SYSTEMS

log = logging.getLogger(__name__)


def chunk_variant(documents: Path, extract_dir: Path, size: int, overlap: int, out: Path,
                  extract: ExtractParams = ExtractParams()) -> IndexPaths:
    """The chunk table and BM25 index of one chunking; reused when already built."""
    folder = out / f"{size}_{overlap}"
    paths = IndexPaths(index_dir=folder, dense_dir=folder / "no-dense",
                       chunks=folder / "chunks.parquet", metadata=extract_dir / "metadata.parquet")
    if (folder / "precedents_chunks").is_dir() and paths.chunks.exists():
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    metadata = pd.read_parquet(paths.metadata).set_index("doc_id")
    sections = read_sections(extract_dir / "sections.parquet")
    tokenizer = load_tokenizer(extract.encoder)
    rows = []
    for doc in tqdm(read_documents(documents), desc=f"chunk {size}/{overlap}", unit="doc"):
        if doc.doc_id not in metadata.index:  # a judgment the extract stage could not read
            continue
        case = {name: metadata.at[doc.doc_id, name] for name in CHUNK_CASE_FIELDS}
        rows += [{**chunk.to_dict(), **case} for chunk in
                 chunk_document(doc, sections.get(doc.doc_id, []), tokenizer, size, overlap)]
    table = pd.DataFrame(rows)
    table.to_parquet(paths.chunks, index=False)
    build_bm25_index(chunk_records(table), folder / "precedents_chunks")
    log.info("chunking %d/%d: %d chunks", size, overlap, len(table))
    return paths


def build_all(documents: Path, extract_dir: Path, out: Path,
              extract: ExtractParams = ExtractParams()) -> list[tuple[int, int]]:
    """Every chunking a registered system names, built under ``out``; the chunkings, sorted."""
    chunkings = sorted({spec.chunking for spec in SYSTEMS if spec.chunking is not None})
    for size, overlap in chunkings:
        chunk_variant(documents, extract_dir, size, overlap, out, extract)
    return chunkings

"""The ``extract`` stage: metadata, sections and chunks per judgment, and the statute table.

Reads ``documents.jsonl`` from ``ingest`` and writes, under the output folder:

- ``metadata.parquet``: one row per judgment (:class:`~countercase.extract.metadata.JudgmentMetadata`)
- ``sections.parquet``: ``doc_id, section_type, start, end`` (character offsets into the text)
- ``chunks.parquet``: one row per chunk (:class:`~countercase.extract.chunking.Chunk`) with the
  case metadata the retrieval filters need (``case_id, year, bench_type, act_sections, outcome_label``)
- ``statutes.parquet``: every section/article of the shipped acts; ``constitution_crossrefs.parquet``
- ``failures.jsonl``: ``doc_id, source_path, reason`` for judgments that could not be processed
- ``summary.json``: counts (a DVC metric)

A judgment that fails is recorded and skipped; the batch goes on.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from countercase.config import ExtractParams
from countercase.extract.chunking import chunk_document, load_tokenizer, truncation
from countercase.extract.metadata import extract_metadata
from countercase.extract.sc_records import load_sc_index
from countercase.extract.segment import Segment, segment
from countercase.extract.statutes import build_constitution_crossrefs, build_statute_table
from countercase.ingest.document import Document
from countercase.ingest.run import read_documents

log = logging.getLogger(__name__)

# Case metadata copied onto every chunk, so an index can filter chunks without a join.
CHUNK_CASE_FIELDS = ("case_id", "year", "bench_type", "act_sections", "outcome_label")


@dataclass
class Extracted:
    """One judgment's rows of ``metadata.parquet``, ``sections.parquet`` and ``chunks.parquet``."""

    metadata: dict[str, Any]
    sections: list[dict[str, Any]]
    chunks: list[dict[str, Any]]


def extract_document(doc: Document, sc_index, tokenizer,
                     params: ExtractParams) -> Extracted | dict[str, str]:
    """A judgment's rows, or (when it cannot be processed) its row of ``failures.jsonl``: the
    unit of work of this stage and of the distributed dataflow alike."""
    try:
        meta = extract_metadata(doc, sc_index).to_dict()
        segments = segment(doc.text, facts_fraction=params.facts_fallback_fraction)
        chunks = chunk_document(doc, segments, tokenizer, params.chunk_size, params.chunk_overlap)
    except Exception as error:  # one bad judgment must not stop the corpus
        log.warning("extract failed for %s: %s", doc.doc_id, error)
        return {"doc_id": doc.doc_id, "source_path": doc.source_path,
                "reason": f"{type(error).__name__}: {error}"}
    case_fields = {k: meta[k] for k in CHUNK_CASE_FIELDS}
    return Extracted(meta,
                     [{"doc_id": doc.doc_id, "section_type": s.section_type, "start": s.start,
                       "end": s.end} for s in segments],
                     [{**chunk.to_dict(), **case_fields} for chunk in chunks])


def run_extract(documents: Path, statutes_dir: Path, sc_metadata_dir: Path | None, out: Path,
                params: ExtractParams) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    timing: dict[str, float] = {}
    started = time.perf_counter()

    sc_index = load_sc_index(sc_metadata_dir) if sc_metadata_dir else None
    tokenizer = load_tokenizer(params.encoder)
    timing["setup_seconds"] = time.perf_counter() - started

    metadata_rows, section_rows, chunk_rows, failures = [], [], [], []
    t0 = time.perf_counter()
    n_documents = 0
    for doc in tqdm(read_documents(documents), desc="extract", unit="doc"):
        n_documents += 1
        found = extract_document(doc, sc_index, tokenizer, params)
        if isinstance(found, dict):
            failures.append(found)
            continue
        metadata_rows.append(found.metadata)
        section_rows += found.sections
        chunk_rows += found.chunks
    timing["judgments_seconds"] = time.perf_counter() - t0
    summary = write_extract(out, statutes_dir, params, n_documents, metadata_rows, section_rows,
                            chunk_rows, failures, timing)
    timing["total_seconds"] = time.perf_counter() - started
    timing["judgments_per_second"] = n_documents / timing["judgments_seconds"] if n_documents else 0.0
    log.info("extracted %d judgments, %d chunks, %d statute sections (%d failures) in %.1f s",
             summary["n_judgments"], summary["n_chunks"], summary["n_statute_sections"],
             summary["n_failures"], timing["total_seconds"])
    return {**summary, "timing": {k: round(v, 3) for k, v in timing.items()}}


def write_extract(out: Path, statutes_dir: Path, params: ExtractParams, n_documents: int,
                  metadata_rows: list[dict], section_rows: list[dict], chunk_rows: list[dict],
                  failures: list[dict], timing: dict[str, float]) -> dict[str, Any]:
    """The stage's files from every judgment's rows (in ``documents.jsonl``'s order) and the
    statute table; returns the summary (``timing`` gains the statutes' seconds)."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    statutes = pd.DataFrame([row.to_dict() for row in build_statute_table(statutes_dir)])
    crossrefs = pd.DataFrame(build_constitution_crossrefs(statutes_dir))
    timing["statutes_seconds"] = time.perf_counter() - t0

    metadata = pd.DataFrame(metadata_rows)
    chunks_df = pd.DataFrame(chunk_rows)
    metadata.to_parquet(out / "metadata.parquet", index=False)
    pd.DataFrame(section_rows).to_parquet(out / "sections.parquet", index=False)
    chunks_df.to_parquet(out / "chunks.parquet", index=False)
    statutes.to_parquet(out / "statutes.parquet", index=False)
    crossrefs.to_parquet(out / "constitution_crossrefs.parquet", index=False)
    with (out / "failures.jsonl").open("w", encoding="utf-8") as handle:
        for failure in failures:
            handle.write(json.dumps(failure, ensure_ascii=False) + "\n")

    summary = {
        "n_documents": n_documents,
        "n_judgments": len(metadata),
        "n_failures": len(failures),
        "n_chunks": len(chunks_df),
        "n_statute_sections": len(statutes),
        "n_constitution_crossrefs": len(crossrefs),
        "statute_sections_per_act": statutes.groupby("act").size().to_dict() if len(statutes) else {},
        "chunk_tokens_mean": round(float(chunks_df["n_tokens"].mean()), 2) if len(chunks_df) else 0,
        "encoder_truncation": truncation(chunks_df["n_tokens"].tolist(), params.encoder_max_tokens)
        if len(chunks_df) else {},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def read_sections(path: Path) -> dict[str, list[Segment]]:
    """``sections.parquet`` back as each judgment's segments, in text order."""
    return {doc_id: [Segment(r.section_type, int(r.start), int(r.end)) for r in group.itertuples()]
            for doc_id, group in pd.read_parquet(path).groupby("doc_id")}

"""The corpus side of the pipeline as a sharded dataflow: ingest (PDFs), extract, rule fact
sheets and chunking per shard of judgments, then embedding per shard of chunks, each shard
written to its own files and merged in a fixed order.

Two phases, each a list of independent tasks (:class:`~countercase.scaleout.engine.Engine`):

1. **Judgments.** A shard is a span of lines of an ingested ``documents.jsonl`` or a list of
   PDFs (read by the ingest stage's reader, each under its CPU limit). Each judgment goes
   through the extract stage's own unit of work (:func:`countercase.extract.run.extract_document`)
   and the rule fact sheet (:func:`countercase.factsheet.rules.extract_rules`, with the
   metadata and sections just found, as the factsheets stage reads them back). The shard
   writes ``documents.jsonl`` (PDFs only), ``metadata.parquet``, ``sections.parquet``,
   ``chunks.parquet``, ``judgments.jsonl`` and ``failures.jsonl``.
2. **Embeddings.** The merged chunk table is cut into row ranges whose bounds are multiples of
   the embedding batch size, so every batch holds the same chunks as in the single-process
   ``embed`` stage; each range writes a ``.npy``.

The merge orders judgments as the single-process stages do (the ingest stage writes them by
doc_id; a given ``documents.jsonl`` keeps its own order), writes the extract stage's files
through :func:`countercase.extract.run.write_extract`, the fact sheets by case id, and the
embeddings in the dense index's storage. BM25 stays Anserini's own multi-threaded indexer,
run over the merged chunk table. The single-process and distributed paths give the same
chunk table, fact sheets and BM25 results (``tests/test_scaleout.py``).
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from countercase.config import ExtractParams, IndexParams, IngestParams, ScaleoutParams
from countercase.extract.chunking import load_tokenizer
from countercase.extract.run import Extracted, extract_document, write_extract
from countercase.extract.sc_records import load_sc_index
from countercase.extract.segment import Segment
from countercase.factsheet.rules import extract_rules
from countercase.index.bm25 import build_bm25_index
from countercase.index.dense import store_embeddings
from countercase.index.encoders import embed, load_encoder
from countercase.index.run import chunk_records, task_precision
from countercase.ingest.document import Document
from countercase.ingest.pdf import read_pdfs
from countercase.ingest.run import line_spans, read_documents
from countercase.ingest.workers import PdfJob
from countercase.scaleout.engine import Engine

log = logging.getLogger(__name__)

PHASE_FILES = ("metadata", "sections", "chunks")


@dataclass(frozen=True)
class JudgmentShard:
    number: int
    out: str
    documents: str | None = None
    span: tuple[int, int, int] | None = None
    pdfs: tuple[str, ...] = ()
    sc_metadata: str | None = None
    ingest: IngestParams = IngestParams()
    extract: ExtractParams = ExtractParams()
    threads: int = 1


@dataclass(frozen=True)
class EmbedShard:
    number: int
    out: str
    chunks: str
    start: int
    stop: int
    encoder: str
    precision: str
    batch_size: int
    threads: int = 1
    max_seq_length: int | None = None


@lru_cache(maxsize=4)
def _tokenizer(name: str):
    return load_tokenizer(name)


@lru_cache(maxsize=4)
def _sc_index(directory: str | None):
    return load_sc_index(directory) if directory else None


@lru_cache(maxsize=2)
def _encoder(name: str, precision: str, threads: int, max_seq_length: int | None):
    return load_encoder(name, precision=precision, threads=threads,
                        max_seq_length=max_seq_length)


def _threads(count: int) -> None:
    import torch

    torch.set_num_threads(count)


def _documents(shard: JudgmentShard) -> tuple[list[Document], list[dict], int]:
    """The shard's judgments, the PDFs that could not be read, and the pages read."""
    if shard.documents is not None:
        return list(read_documents(shard.documents, shard.span)), [], 0
    jobs = (PdfJob(Path(p), p, Path(p).stem) for p in shard.pdfs)
    docs, failures = [], []
    for _, item in read_pdfs(jobs, shard.ingest):
        if isinstance(item, Document):
            docs.append(item)
        else:
            failures.append({"stage": "ingest", **item.to_dict()})
    return docs, failures, sum(len(d.pages) for d in docs)


def judgment_task(shard: JudgmentShard) -> dict[str, Any]:
    """Phase 1 on one shard (runs on a worker): its files under ``shard.out``."""
    started = time.perf_counter()
    _threads(shard.threads)
    docs, failures, pages = _documents(shard)
    tokenizer, sc_index = _tokenizer(shard.extract.encoder), _sc_index(shard.sc_metadata)
    rows: dict[str, list[dict]] = {name: [] for name in PHASE_FILES}
    sheets = []
    for doc in docs:
        found = extract_document(doc, sc_index, tokenizer, shard.extract)
        if not isinstance(found, Extracted):
            failures.append({"stage": "extract", **found})
            continue
        rows["metadata"].append(found.metadata)
        rows["sections"] += found.sections
        rows["chunks"] += found.chunks
        segments = [Segment(s["section_type"], s["start"], s["end"]) for s in found.sections]
        meta = found.metadata
        try:
            sheets.append(extract_rules(doc.text, doc.doc_id, "judgment", segments,
                                        meta["petitioner"], meta["respondent"],
                                        meta["outcome_label"],
                                        shard.extract.facts_fallback_fraction))
        except Exception as error:  # one unreadable judgment must not stop the corpus
            failures.append({"stage": "factsheets", "case_id": doc.doc_id,
                             "reason": f"{type(error).__name__}: {error}"})
    out = Path(shard.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, table in rows.items():
        pd.DataFrame(table).to_parquet(out / f"{name}.parquet", index=False)
    _write_lines(out / "judgments.jsonl", (s.model_dump_json() for s in sheets))
    _write_lines(out / "failures.jsonl", (json.dumps(f, ensure_ascii=False) for f in failures))
    if shard.pdfs:
        _write_lines(out / "documents.jsonl",
                     (json.dumps(d.to_dict(), ensure_ascii=False) for d in docs))
    return {"shard": shard.number, "documents": len(docs), "pages": pages,
            "chunks": len(rows["chunks"]), "failures": len(failures),
            "seconds": time.perf_counter() - started}


def embed_task(shard: EmbedShard) -> dict[str, Any]:
    """Phase 2 on one range of chunks (runs on a worker): ``shard.out``, a ``.npy``."""
    started = time.perf_counter()
    _threads(shard.threads)
    texts = pd.read_parquet(shard.chunks, columns=["text"])["text"].iloc[shard.start:shard.stop]
    model = _encoder(shard.encoder, shard.precision, shard.threads, shard.max_seq_length)
    texts = texts.tolist()
    parts = [embed(model, texts[i:i + shard.batch_size], shard.batch_size, False,
                   shard.precision) for i in range(0, len(texts), shard.batch_size)]
    np.save(shard.out, np.concatenate(parts))
    return {"shard": shard.number, "chunks": len(texts), "seconds": time.perf_counter() - started}


def _write_lines(path: Path, lines) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")


def _read_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def judgment_shards(out: Path, params: ScaleoutParams, extract: ExtractParams,
                    ingest: IngestParams, documents: Path | None = None,
                    pdfs: list[Path] | None = None,
                    sc_metadata: Path | None = None) -> list[JudgmentShard]:
    size = params.shard_documents
    common = dict(sc_metadata=str(sc_metadata) if sc_metadata else None, ingest=ingest,
                  extract=extract, threads=params.threads_per_worker)
    shards = []
    if documents is not None:
        for span in line_spans(documents, size):
            shards.append(JudgmentShard(len(shards), str(out / f"judgments-{len(shards):05d}"),
                                        documents=str(documents), span=span, **common))
    names = sorted(str(p) for p in pdfs or [])
    for begin in range(0, len(names), size):
        shards.append(JudgmentShard(len(shards), str(out / f"judgments-{len(shards):05d}"),
                                    pdfs=tuple(names[begin:begin + size]), **common))
    return shards


def merge_judgments(shards: list[JudgmentShard], out: Path, statutes_dir: Path,
                    extract: ExtractParams, n_documents: int) -> dict[str, Any]:
    """The shards' files as the ingest (PDFs), extract and factsheets stages write them."""
    tables = {name: pd.concat([pd.read_parquet(Path(s.out) / f"{name}.parquet")
                               for s in shards], ignore_index=True) for name in PHASE_FILES}
    if any(s.pdfs for s in shards):  # the ingest stage writes its documents by doc_id
        docs = [line for s in shards if s.pdfs for line in _read_lines(Path(s.out) /
                                                                       "documents.jsonl")]
        docs.sort(key=lambda line: json.loads(line)["doc_id"])
        (out / "ingest").mkdir(parents=True, exist_ok=True)
        _write_lines(out / "ingest" / "documents.jsonl", docs)
        tables = {name: table.sort_values("doc_id", kind="stable", ignore_index=True)
                  for name, table in tables.items()}
    failures = [json.loads(line) for s in shards
                for line in _read_lines(Path(s.out) / "failures.jsonl")]
    by_stage = {stage: [{k: v for k, v in f.items() if k != "stage"} for f in failures
                        if f["stage"] == stage] for stage in ("ingest", "extract", "factsheets")}
    if any(s.pdfs for s in shards):
        _write_lines(out / "ingest" / "failures.jsonl", (json.dumps(f) for f in sorted(
            by_stage["ingest"], key=lambda f: (f["source_path"], f["reason"]))))
    summary = write_extract(out / "extract", statutes_dir, extract, n_documents,
                            tables["metadata"], tables["sections"], tables["chunks"],
                            by_stage["extract"], {})
    sheets = [line for s in shards for line in _read_lines(Path(s.out) / "judgments.jsonl")]
    sheets.sort(key=lambda line: json.loads(line)["case_id"])
    (out / "factsheets").mkdir(parents=True, exist_ok=True)
    _write_lines(out / "factsheets" / "judgments.jsonl", sheets)
    _write_lines(out / "factsheets" / "failures.jsonl",
                 (json.dumps(f) for f in by_stage["factsheets"]))
    return summary


def embed_shards(chunks: Path, out: Path, params: ScaleoutParams,
                 index: IndexParams) -> list[EmbedShard]:
    rows = len(pd.read_parquet(chunks, columns=["chunk_id"]))
    size = params.shard_chunks
    if size % index.batch_size:
        raise ValueError(f"scaleout.shard_chunks ({size}) must be a multiple of "
                         f"index.batch_size ({index.batch_size}): a batch must not straddle "
                         "two shards")
    # the int8 model is calibrated by stage embed on the citation tuning half, which a scale-out
    # run has not got: its shards embed in float32 where the precedents use int8
    precision = "float32" if task_precision(index, "precedents") == "onnx-int8" else \
        index.precision
    return [EmbedShard(n, str(out / f"embeddings-{n:05d}.npy"), str(chunks), begin,
                       min(begin + size, rows), index.encoder, precision,
                       index.batch_size, params.threads_per_worker, index.max_seq_length)
            for n, begin in enumerate(range(0, rows, size))]


def merge_embeddings(shards: list[EmbedShard], chunks: Path, out: Path, index: IndexParams,
                     seconds: float) -> None:
    table = pd.read_parquet(chunks, columns=["chunk_id", "text"])
    matrix = np.concatenate([np.load(s.out) for s in shards]) if shards else np.zeros((0, 0))
    store_embeddings(out, table["chunk_id"].tolist(), table["text"].tolist(), matrix,
                     index.encoder, index.batch_size, shards[0].precision if shards else
                     index.precision, seconds, index.max_seq_length)


def run_dataflow(out: Path, params: ScaleoutParams, extract: ExtractParams,
                 ingest: IngestParams, index: IndexParams, statutes_dir: Path,
                 documents: Path | None = None, pdfs: list[Path] | None = None,
                 sc_metadata: Path | None = None, embed: bool = True,
                 bm25: bool = True) -> dict[str, Any]:
    """Both phases on ``params.engine`` into ``out`` (``ingest/``, ``extract/``,
    ``factsheets/``, ``dense/precedents/``, ``index/precedents_chunks``); returns counts and
    the seconds and throughput of each phase."""
    if documents is None and not pdfs:
        raise ValueError("nothing to process: give a documents file or PDFs")
    out.mkdir(parents=True, exist_ok=True)
    work = out / "shards"
    shutil.rmtree(work, ignore_errors=True)
    timing: dict[str, Any] = {"engine": params.engine, "workers": params.workers}
    with Engine(params.engine, params.workers, params.address) as engine:
        started = time.perf_counter()
        shards = judgment_shards(work, params, extract, ingest, documents, pdfs, sc_metadata)
        done = engine.map(judgment_task, shards, "judgments")
        n_documents = sum(d["documents"] for d in done)
        summary = merge_judgments(shards, out, statutes_dir, extract, n_documents)
        seconds = time.perf_counter() - started
        timing.update(judgments_seconds=round(seconds, 2),
                      judgments_per_second=round(n_documents / seconds, 2),
                      pdf_pages=sum(d["pages"] for d in done), judgment_shards=len(shards))
        chunks = out / "extract" / "chunks.parquet"
        if embed:
            started = time.perf_counter()
            pieces = embed_shards(chunks, work, params, index)
            engine.map(embed_task, pieces, "embeddings")
            seconds = time.perf_counter() - started
            merge_embeddings(pieces, chunks, out / "dense" / "precedents", index, seconds)
            timing.update(embed_seconds=round(seconds, 2), embed_shards=len(pieces),
                          passages_per_second=round(summary["n_chunks"] / seconds, 2))
    if bm25:
        started = time.perf_counter()
        build_bm25_index(chunk_records(pd.read_parquet(chunks)), out / "index" /
                         "precedents_chunks", threads=index.threads)
        timing["bm25_seconds"] = round(time.perf_counter() - started, 2)
    shutil.rmtree(work, ignore_errors=True)
    return {**summary, "timing": timing}

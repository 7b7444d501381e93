"""The ``index`` and ``embed`` stages: both tasks, at chunk and at document level.

``index`` (BM25, Lucene through Pyserini), one folder per index under ``out``:

- ``precedents_chunks``: one Lucene document per chunk of ``chunks.parquet``, with the filter
  fields (year, act sections, bench type, section type, outcome, judgment id);
- ``precedents_docs``: one per judgment (its whole text);
- ``statutes_chunks`` and ``statutes_docs``: the AILA 2019 statutes (title + text, the Task 2
  corpus), cut by the judgments' chunker; ``statutes_chunks.parquet`` is their chunk table;
- ``statute_sections.json``: each AILA statute's canonical section ids, for the statute bridge
  (:func:`countercase.index.statute_map.map_statutes`).

``embed`` (dense): the stored embeddings of both chunk tables, one folder per task
(``precedents``, ``statutes``); stored embeddings of the same texts are reused, so a change of a
later parameter never re-embeds.
"""

from __future__ import annotations

import json
import logging
import random
import time
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from countercase import layout
from countercase.config import ExtractParams, IndexParams
from countercase.datasets.aila import read_statutes, statute_text
from countercase.extract.chunking import chunk_document, load_tokenizer
from countercase.index.bm25 import build_bm25_index
from countercase.index.dense import build_embeddings, read_meta
from countercase.index.encoders import INT8, find_int8_model, load_encoder, write_int8_model
from countercase.index.parts import join, join_int8, share
from countercase.index.statute_map import map_statutes
from countercase.ingest.document import Document, Page
from countercase.ingest.run import read_documents

log = logging.getLogger(__name__)

STATUTE_CHUNKS = layout.STATUTE_CHUNKS.name
STATUTE_SECTIONS = layout.STATUTE_SECTIONS.name  # AILA statute id -> canonical section ids


def _plain_list(value: Any) -> list:
    return list(value) if value is not None and not isinstance(value, str) else []


def _year(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def chunk_records(chunks: pd.DataFrame) -> Iterator[dict[str, Any]]:
    for row in chunks.itertuples(index=False):
        yield {"id": row.chunk_id, "contents": row.text, "doc_id": row.doc_id,
               "year": _year(row.year), "act_sections": _plain_list(row.act_sections),
               "bench_type": row.bench_type, "section_type": row.section_type,
               "outcome": row.outcome_label}


def doc_records(documents: Path, metadata: pd.DataFrame) -> Iterator[dict[str, Any]]:
    meta = metadata.set_index("doc_id")
    for doc in read_documents(documents):
        if doc.doc_id not in meta.index or not doc.text.strip():
            continue
        row = meta.loc[doc.doc_id]
        yield {"id": doc.doc_id, "contents": doc.text, "year": _year(row["year"]),
               "act_sections": _plain_list(row["act_sections"]), "bench_type": row["bench_type"],
               "outcome": row["outcome_label"]}


def statute_documents(aila_statutes: Path, loaded: list[dict] | None = None) -> list[Document]:
    """The AILA statutes as documents (title, then text); ``loaded``: the statutes already read."""
    return [Document(s["statute_id"], "aila_statute", f"{aila_statutes}!{s['statute_id']}.txt",
                     [Page(0, statute_text(s))])
            for s in (loaded if loaded is not None else read_statutes(aila_statutes))]


def plain_chunk_table(documents: list[Document], extract: ExtractParams,
                      section_type: str) -> pd.DataFrame:
    """Documents without judgment metadata (statutes, another collection's documents) cut by
    the judgments' chunker, in a chunk table of the same columns: no year, bench or outcome,
    one section type for every chunk."""
    tokenizer = load_tokenizer(extract.encoder)
    rows = []
    for doc in documents:
        for chunk in chunk_document(doc, [], tokenizer, extract.chunk_size, extract.chunk_overlap):
            rows.append({**chunk.to_dict(), "section_type": section_type, "case_id": doc.doc_id,
                         "year": None, "bench_type": "Unknown", "act_sections": [],
                         "outcome_label": "Unknown"})
    frame = pd.DataFrame(rows)
    frame["year"] = frame["year"].astype("Int64")
    return frame


def plain_doc_records(documents: list[Document]) -> Iterator[dict[str, Any]]:
    return ({"id": d.doc_id, "contents": d.text} for d in documents)


def plain_chunk_records(table: pd.DataFrame) -> Iterator[dict[str, Any]]:
    return ({"id": r.chunk_id, "contents": r.text, "doc_id": r.doc_id}
            for r in table.itertuples(index=False))


def run_index(chunks_path: Path, metadata_path: Path, documents_path: Path,
              aila_statutes: Path, statute_table: Path, out: Path,
              params: IndexParams = IndexParams(),
              extract: ExtractParams = ExtractParams()) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    chunks = pd.read_parquet(chunks_path)
    metadata = pd.read_parquet(metadata_path)
    raw = read_statutes(aila_statutes)
    statutes = statute_documents(aila_statutes, raw)
    mapping = map_statutes(((s["statute_id"], s["title"], s["text"]) for s in raw),
                           pd.read_parquet(statute_table))
    (out / STATUTE_SECTIONS).write_text(json.dumps(mapping, indent=1, sort_keys=True) + "\n")
    statutes_table = plain_chunk_table(statutes, extract, "Statute")
    statutes_table.to_parquet(out / STATUTE_CHUNKS, index=False)
    builds = {
        "precedents_chunks": lambda: chunk_records(chunks),
        "precedents_docs": lambda: doc_records(documents_path, metadata),
        "statutes_chunks": lambda: plain_chunk_records(statutes_table),
        "statutes_docs": lambda: plain_doc_records(statutes),
    }
    timing: dict[str, float] = {}
    for name, records in builds.items():
        started = time.perf_counter()
        build_bm25_index(records(), out / name, threads=params.threads)
        timing[f"{name}_seconds"] = round(time.perf_counter() - started, 2)
        log.info("BM25 index %s built in %.1f s", name, timing[f"{name}_seconds"])
    summary = {"n_chunks": len(chunks), "n_judgments": len(metadata),
               "n_statutes": len(statutes), "n_statute_chunks": len(statutes_table),
               "n_statutes_mapped_to_sections": len(mapping)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return {**summary, "timing": timing}


def calibration_texts(chunks: pd.DataFrame, tuning: set[str], n: int,
                      seed: int) -> tuple[list[str], list[str]]:
    """Two disjoint seeded draws of ``n`` chunks of the ``tuning`` judgments (configs/
    int8_rule.yaml): the calibration set, and the set the calibration method is chosen on."""
    texts = chunks[chunks["doc_id"].isin(tuning)].sort_values("chunk_id")["text"].tolist()
    if not texts:
        raise ValueError("no chunk of the tuning judgments to calibrate int8 on")
    if len(texts) < 2 * n:  # a small collection: half of what there is each
        log.warning("%d tuning chunks: the int8 calibration draws %d, not %d", len(texts),
                    len(texts) // 2, n)
        n = max(1, len(texts) // 2)
    drawn = random.Random(seed).sample(texts, 2 * n)
    return drawn[:n], drawn[n:]


def task_precision(params: IndexParams, task: str) -> str:
    """The precision ``task``'s vectors (and its queries) are made in: ``index.precision``,
    except that onnx-int8 holds only for the collections in ``index.int8_tasks`` (the others
    float32; configs/int8_choice.yaml says why)."""
    if params.precision == INT8 and task not in params.int8_tasks:
        return "float32"
    return params.precision


def run_embed(chunks_path: Path, statute_chunks_path: Path, out: Path,
              params: IndexParams = IndexParams(), tuning: set[str] | None = None,
              seed: int = 2019, part: tuple[int, int] | None = None,
              parts: int = 1) -> dict[str, Any]:
    """Dense embeddings of both tasks' chunks (``out/precedents``, ``out/statutes``), each in
    :func:`task_precision`. For onnx-int8 the int8 model is made first (``out/int8``),
    calibrated on chunks of the ``tuning`` judgments (the citation collection's tuning half).

    ``part`` (i, N): only part i's share of the precedents, into ``layout.part(out, i, N)``;
    ``parts`` N: the precedents joined from N such parts (:mod:`countercase.index.parts`)."""
    precisions = {task: task_precision(params, task) for task in layout.TASKS}
    target = layout.part(out, *part) if part else out
    int8_model = None
    if INT8 in precisions.values():
        if parts > 1:
            join_int8(out, parts)
            int8_model = find_int8_model(out)
        else:
            if not tuning:
                raise ValueError("onnx-int8 is calibrated on the tuning half: give its judgments")
            table = pd.read_parquet(chunks_path, columns=["chunk_id", "doc_id", "text"])
            calibration, _ = calibration_texts(table, tuning, params.int8_calibration_texts, seed)
            int8_model = str(write_int8_model(params.encoder, calibration, target / "int8",
                                              params.int8_method, params.max_seq_length))
    loaded: dict[str, Any] = {}
    timing: dict[str, float] = {}
    counts: dict[str, int] = {}
    tasks = zip(layout.TASKS, (chunks_path, statute_chunks_path))
    for task, path in list(tasks)[:1] if part else tasks:
        precision = precisions[task]
        task_int8 = int8_model if precision == INT8 else None
        table = pd.read_parquet(path, columns=["chunk_id", "text"])
        ids, texts = table["chunk_id"].tolist(), table["text"].tolist()
        started = time.perf_counter()
        if parts > 1 and task == layout.TASKS[0]:
            embedded = join(ids, texts, out / task, task, parts, params.encoder,
                            params.batch_size, precision, params.max_seq_length, task_int8)
        else:
            if part:
                begin, end = share(len(ids), params.batch_size, *part)
                ids, texts = ids[begin:end], texts[begin:end]
            if precision not in loaded:
                loaded[precision] = load_encoder(
                    params.encoder, precision=precision, max_seq_length=params.max_seq_length,
                    int8_model=task_int8)
            embedded = build_embeddings(ids, texts, params.encoder, target / task,
                                        batch_size=params.batch_size, encoder=loaded[precision],
                                        precision=precision, max_seq_length=params.max_seq_length,
                                        int8_model=task_int8)
        seconds = time.perf_counter() - started
        if parts > 1 and task == layout.TASKS[0]:  # the parts' encoding, not the join's copy
            seconds = float(read_meta(out / task)["seconds"])
        counts[f"n_{task}_chunks"] = len(ids)
        if not embedded:  # nothing was encoded: no speed to report (the caller keeps the last)
            timing[f"{task}_reused"] = True
            continue
        timing[f"{task}_seconds"] = round(seconds, 2)
        timing[f"{task}_passages_per_second"] = round(len(ids) / seconds, 2)
    return {**counts, "encoder": params.encoder, "precision": params.precision,
            "precisions": precisions, "timing": timing}

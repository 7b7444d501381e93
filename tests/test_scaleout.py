"""The sharded dataflow on Dask against the single-process stages, on real data: 20 AILA
judgments (one of them broken) and five of the real PDFs (two of them damaged and repaired). Same chunk table, fact sheets, BM25
results and embeddings; failures recorded in the same files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from countercase.config import ExtractParams, IndexParams, IngestParams, ScaleoutParams
from countercase.ingest.document import Document, Page
from countercase.ingest.text import text_document

# the first twenty AILA judgments of 4,000 to 10,000 characters (C1..C20 made 845 chunks, two
# minutes of embedding a side, for the same comparison)
NAMES = ["C1", "C9", "C15", "C41", "C44", "C45", "C46", "C49", "C56", "C67", "C76", "C81", "C82",
         "C85", "C87", "C97", "C107", "C110", "C114", "C116"]
# the five quickest to read: the other five (judgment_04 alone takes 30 s) would add minutes to
# each side and nothing to the comparison
PDFS = ["judgment_01", "judgment_02", "judgment_05", "judgment_06", "judgment_07"]
# float32: a vector that does not depend on the thread count of the process that made it (the
# dataflow's workers run one torch thread each, the embed stage two)
INDEX = IndexParams(precision="float32", batch_size=8, threads=1)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, aila_files):
    root = tmp_path_factory.mktemp("scaleout-inputs")
    texts = aila_files.casedocs(NAMES)
    docs = [text_document(n, texts[n].encode(), n) for n in NAMES]
    broken = Document("C0broken", "pdf", "broken.pdf", [Page(0, None)])
    documents = root / "documents.jsonl"
    documents.write_text("".join(json.dumps(d.to_dict()) + "\n" for d in [broken, *docs]))
    return documents


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory, pdf_dir):
    folder = tmp_path_factory.mktemp("scaleout-pdfs")
    for stem in PDFS:
        shutil.copy(pdf_dir / f"{stem}.pdf", folder)
    return folder


@pytest.fixture(scope="module")
def single(tmp_path_factory, inputs, raw_dir, pdfs):
    """The single-process stages: ingest (PDFs), extract, rule fact sheets, index, embed."""
    from countercase.extract.run import run_extract
    from countercase.factsheet.run import run_factsheets
    from countercase.index.bm25 import build_bm25_index
    from countercase.index.dense import build_embeddings
    from countercase.index.run import chunk_records
    from countercase.ingest.pdf import PdfDirectorySource
    from countercase.ingest.run import run_ingest

    out = tmp_path_factory.mktemp("single")
    run_ingest([PdfDirectorySource(pdfs)], out / "pdfs" / "ingest")
    for name, documents in (("aila", inputs), ("pdfs", out / "pdfs" / "ingest" / "documents.jsonl")):
        run_extract(documents, raw_dir / "statutes", None, out / name / "extract", ExtractParams())
        run_factsheets(documents, out / name / "extract", {}, out / name / "factsheets")
    chunks = pd.read_parquet(out / "aila" / "extract" / "chunks.parquet")
    build_bm25_index(chunk_records(chunks), out / "aila" / "index" / "precedents_chunks", 1)
    build_embeddings(chunks["chunk_id"].tolist(), chunks["text"].tolist(), INDEX.encoder,
                     out / "aila" / "dense" / "precedents", INDEX.batch_size,
                     show_progress=False, precision=INDEX.precision,
                     max_seq_length=INDEX.max_seq_length)
    return out


@pytest.fixture(scope="module")
def distributed(tmp_path_factory, inputs, raw_dir, pdfs):
    from countercase.scaleout.dataflow import run_dataflow

    out = tmp_path_factory.mktemp("distributed")
    params = ScaleoutParams(engine="dask", workers=2, shard_documents=7, shard_chunks=24)
    common = dict(params=params, extract=ExtractParams(), ingest=IngestParams(), index=INDEX,
                  statutes_dir=raw_dir / "statutes")
    summaries = {
        "aila": run_dataflow(out / "aila", documents=inputs, **common),
        "pdfs": run_dataflow(out / "pdfs", pdfs=sorted(pdfs.glob("*.pdf")), embed=False,
                             bm25=False, **common)}
    return out, summaries


@pytest.mark.slow
def test_the_dataflow_writes_what_the_single_process_stages_write(single, distributed):
    out, summaries = distributed
    assert summaries["aila"]["timing"]["judgment_shards"] == 3  # 21 lines, 7 a shard
    assert summaries["aila"]["n_judgments"] == 20 and summaries["aila"]["n_failures"] == 1
    for name in ("aila", "pdfs"):
        for table in ("metadata", "sections", "chunks"):
            pd.testing.assert_frame_equal(
                pd.read_parquet(out / name / "extract" / f"{table}.parquet"),
                pd.read_parquet(single / name / "extract" / f"{table}.parquet"))
        for path in ("extract/failures.jsonl", "extract/summary.json",
                     "factsheets/judgments.jsonl", "factsheets/failures.jsonl"):
            assert (out / name / path).read_text() == (single / name / path).read_text(), path
    assert (out / "pdfs" / "ingest" / "documents.jsonl").read_text() == \
        (single / "pdfs" / "ingest" / "documents.jsonl").read_text()
    assert len((out / "aila" / "factsheets" / "judgments.jsonl").read_text().splitlines()) == 20


@pytest.mark.slow
def test_bm25_results_and_embeddings_are_the_same(single, distributed, aila_files):
    from countercase.index.bm25 import Bm25Searcher
    from countercase.index.dense import read_meta

    out, summaries = distributed
    assert summaries["aila"]["timing"]["embed_shards"] > 1
    ours = Bm25Searcher(out / "aila" / "index" / "precedents_chunks")
    theirs = Bm25Searcher(single / "aila" / "index" / "precedents_chunks")
    for query in list(aila_files.queries().values())[:5]:
        assert ours.search(query, 50) == theirs.search(query, 50)
    dense, reference = out / "aila" / "dense" / "precedents", single / "aila" / "dense" / "precedents"
    assert json.loads((dense / "ids.json").read_text()) == json.loads(
        (reference / "ids.json").read_text())
    assert read_meta(dense)["texts_sha256"] == read_meta(reference)["texts_sha256"]
    found, expected = np.load(dense / "embeddings.npy"), np.load(reference / "embeddings.npy")
    assert found.shape == expected.shape and np.abs(found - expected).max() < 1e-5


def test_shards_and_arguments_are_checked(tmp_path, inputs):
    from countercase.scaleout.dataflow import embed_shards, judgment_shards, run_dataflow
    from countercase.scaleout.engine import Engine

    shards = judgment_shards(tmp_path, ScaleoutParams(shard_documents=10), ExtractParams(),
                             IngestParams(), inputs)
    assert [s.span[0] for s in shards] == [1, 11, 21]  # first line of each
    assert shards[-1].span[2] == inputs.stat().st_size
    pd.DataFrame({"chunk_id": ["a"]}).to_parquet(tmp_path / "chunks.parquet")
    with pytest.raises(ValueError, match="multiple of index.batch_size"):
        embed_shards(tmp_path / "chunks.parquet", tmp_path, ScaleoutParams(shard_chunks=30),
                     IndexParams(batch_size=32))
    with pytest.raises(ValueError, match="nothing to process"):
        run_dataflow(tmp_path, ScaleoutParams(), ExtractParams(), IngestParams(), INDEX,
                     tmp_path)
    with pytest.raises(ValueError, match="unknown engine"):
        Engine("ray")
    with Engine("local") as engine:
        assert engine.map(str, [3, 1, 2], "t") == ["3", "1", "2"]



def test_speedups_and_the_capacity_plan_follow_from_the_measurements():
    from countercase.scaleout.bench import CORPUS_JUDGMENTS, capacity, speedups

    one = {"aila_seconds": 40.0, "pdf_seconds": 30.0, "embed_seconds": 130.0,
           "pdf_pages_per_second": 8.0, "passages_per_second": 20.0}
    two = {"aila_seconds": 25.0, "pdf_seconds": 20.0, "embed_seconds": 80.0,
           "pdf_pages_per_second": 12.0, "passages_per_second": 32.5}
    found = speedups(one, two)
    assert found == {"judgments_aila": 1.6, "judgments_pdfs": 1.5, "embedding": 1.62,
                     "dataflow": 1.6}
    plan = capacity(one, two, chunks_per_judgment=25.0, pages_per_judgment=20.0, dim=384)
    assert plan["parallel_efficiency"] == 0.8
    assert plan["bottleneck"] == "pdf_reading_and_extract"  # 87,500 s of pages, 43,750 of chunks
    hours_one = (CORPUS_JUDGMENTS * 20 / 8 + CORPUS_JUDGMENTS * 25 / 20) / 3600
    assert plan["hours_by_workers"]["1"]["total_hours"] == round(hours_one, 1)
    assert plan["hours_by_workers"]["8"]["total_hours"] == round(hours_one / (8 * 0.8), 1)


def test_the_command_names_what_is_wrong(run_cli, tmp_path):
    code, _, err = run_cli("scaleout", "--out", str(tmp_path / "o"))
    assert code == 2 and "--documents" in err
    code, _, err = run_cli("scaleout", "--out", str(tmp_path / "o"), "--pdfs", str(tmp_path))
    assert code == 2 and "no PDF in" in err
    code, _, err = run_cli("scaleout", "--out", str(tmp_path / "o"), "--pdfs", str(tmp_path),
                           "--engine", "ray")
    assert code == 2 and "use local or dask" in err


def test_the_dense_index_rule_keeps_exact_search_while_it_is_fast_enough():
    from countercase.scaleout.bench import dense_choice

    rows = [{"index": "exact", "latency_ms_p50": 8.0, "recall_at_100": 1.0},
            {"index": "ivf-low", "latency_ms_p50": 0.5, "recall_at_100": 0.90},
            {"index": "ivf-high", "latency_ms_p50": 1.5, "recall_at_100": 0.995},
            {"index": "hnsw", "latency_ms_p50": 1.0, "recall_at_100": 0.991}]
    measured = {"vectors": 100_000, "indexes": rows}
    assert dense_choice(measured, 1_000_000)["chosen"] == "exact"  # 80 ms
    found = dense_choice(measured, 2_000_000)  # 160 ms: the fastest with recall >= 0.99
    assert found["chosen"] == "hnsw" and found["projected_exact_ms_p50"] == 160.0

"""The extract stage end to end on a few real judgments: files, joins, and a failure recorded."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from countercase.config import ExtractParams
from countercase.extract.run import CHUNK_CASE_FIELDS, run_extract
from countercase.ingest.document import Document, Page
from countercase.ingest.text import text_document


@pytest.fixture(scope="module")
def extracted(tmp_path_factory, raw_dir, aila_files):
    out = tmp_path_factory.mktemp("extract")
    texts = aila_files.casedocs(("C1", "C2", "C500"))
    docs = [text_document(n, texts[n].encode(), n) for n in ("C1", "C2", "C500")]
    broken = Document("broken", "pdf", "broken.pdf", [Page(0, None)])  # text that is not text
    documents = out / "documents.jsonl"
    documents.write_text("".join(json.dumps(d.to_dict()) + "\n" for d in docs + [broken]))
    summary = run_extract(documents, raw_dir / "statutes", raw_dir / "sc_metadata/raw",
                          out / "extract", ExtractParams())
    return out / "extract", summary, {d.doc_id: d for d in docs}


def test_every_output_is_written(extracted):
    out, summary, _ = extracted
    for name in ("metadata.parquet", "sections.parquet", "chunks.parquet", "statutes.parquet",
                 "constitution_crossrefs.parquet", "failures.jsonl", "summary.json"):
        assert (out / name).exists(), name
    assert summary["n_judgments"] == 3 and summary["n_failures"] == 1


def test_a_broken_document_is_recorded_and_the_batch_goes_on(extracted):
    out, _, _ = extracted
    failures = [json.loads(line) for line in (out / "failures.jsonl").read_text().splitlines()]
    assert [f["doc_id"] for f in failures] == ["broken"] and failures[0]["reason"]


def test_chunks_carry_their_text_position_and_case_metadata(extracted):
    out, _, docs = extracted
    chunks = pd.read_parquet(out / "chunks.parquet")
    metadata = pd.read_parquet(out / "metadata.parquet").set_index("doc_id")
    params = ExtractParams()
    assert chunks["n_tokens"].max() <= params.chunk_size
    for row in chunks.sample(10, random_state=0).itertuples():
        assert docs[row.doc_id].text[row.char_start:row.char_end] == row.text
        assert row.chunk_id == f"{row.doc_id}_{row.index:04d}"
        for name in CHUNK_CASE_FIELDS:
            expected, got = metadata.loc[row.doc_id, name], getattr(row, name)
            assert list(expected) == list(got) if name == "act_sections" else expected == got


def test_sections_cover_each_text(extracted):
    out, _, docs = extracted
    sections = pd.read_parquet(out / "sections.parquet")
    for doc_id, group in sections.groupby("doc_id"):
        group = group.sort_values("start")
        assert group["start"].iloc[0] == 0 and group["end"].iloc[-1] == len(docs[doc_id].text)
        assert (group["start"].iloc[1:].values == group["end"].iloc[:-1].values).all()


def test_missing_values_read_back_as_none_for_the_scorer(extracted):
    from countercase.extract.evaluation import _records

    out, _, _ = extracted
    records = _records(pd.read_parquet(out / "metadata.parquet"))
    assert records["C1"]["citation_string"] is None  # pandas reads a missing string as NaN
    assert records["C1"]["bench_size"] is None
    assert isinstance(records["C500"]["act_sections"], list)

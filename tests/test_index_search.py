"""The ``index`` and ``embed`` stages and ``countercase search`` on a small real corpus: twelve
AILA judgments, one Supreme Court PDF and twenty AILA statutes, through ingest and extract."""

from __future__ import annotations

import json
import re

import pandas as pd
import pypdf
import pytest
import yaml

from countercase.config import ExtractParams, IndexParams, RetrieveParams
from countercase.index.dense import read_meta
from countercase.index.run import STATUTE_CHUNKS, STATUTE_SECTIONS, run_embed
from countercase.layout import IndexPaths
from countercase.retrieve.load import open_retriever

from conftest import INDEXED_JUDGMENTS as JUDGMENTS, INDEXED_PDF as PDF, ROOT
from conftest import INDEXED_STATUTES as STATUTES

# what the indexes find, whichever trained reranker this machine holds
FIRST_STAGE = RetrieveParams().without("rerank")
FIXTURE_PRECISION = "float32"  # conftest.indexed_corpus embeds in float32
SOME = 24  # passages embedded again under a folder's name


@pytest.fixture(scope="module")
def built(indexed_corpus):
    return indexed_corpus


def test_every_index_holds_every_record(built):
    from countercase.index.bm25 import Bm25Searcher

    paths, indexed, embedded = built
    chunks = pd.read_parquet(paths.chunks)
    statute_chunks = pd.read_parquet(paths.index_dir / STATUTE_CHUNKS)
    assert indexed["n_judgments"] == len(JUDGMENTS) + 1 and indexed["n_statutes"] == len(STATUTES)
    expected = {"precedents_chunks": len(chunks), "precedents_docs": len(JUDGMENTS) + 1,
                "statutes_chunks": len(statute_chunks), "statutes_docs": len(STATUTES)}
    for name, count in expected.items():
        with Bm25Searcher(paths.index_dir / name) as searcher:
            assert searcher.num_docs == count, name
    assert sorted(statute_chunks["doc_id"].unique()) == sorted(STATUTES)
    assert (statute_chunks["n_tokens"] <= ExtractParams().chunk_size).all()
    for task, table in (("precedents", chunks), ("statutes", statute_chunks)):
        meta = read_meta(paths.dense_dir / task)
        assert meta["count"] == len(table) and meta["precision"] == FIXTURE_PRECISION
        assert json.loads((paths.dense_dir / task / "ids.json").read_text()) == list(table["chunk_id"])
    assert embedded["n_precedents_chunks"] == len(chunks)


def test_embedding_again_reuses_the_stored_vectors(built, run_cli, tmp_path):
    paths, _, embedded = built
    assert "precedents_passages_per_second" in embedded["timing"]
    before = (paths.dense_dir / "precedents/embeddings.npy").stat().st_mtime_ns
    again = run_embed(paths.chunks, paths.index_dir / STATUTE_CHUNKS, paths.dense_dir,
                      IndexParams(precision=FIXTURE_PRECISION))
    assert (paths.dense_dir / "precedents/embeddings.npy").stat().st_mtime_ns == before
    assert again["timing"] == {"precedents_reused": True, "statutes_reused": True}
    # the stage's timing file (which DVC deletes before the stage runs) gets the speed measured
    # when the vectors were encoded, from their meta.json
    timing = tmp_path / "embed.json"
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["index"]["precision"] = FIXTURE_PRECISION
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    code, _, _ = run_cli("embed", "--chunks", str(paths.chunks), "--statute-chunks",
                         str(paths.index_dir / STATUTE_CHUNKS), "--out", str(paths.dense_dir),
                         "--timing", str(timing), "--params", str(tmp_path / "params.yaml"))
    kept = json.loads(timing.read_text())
    encoded = read_meta(paths.dense_dir / "precedents")
    assert code in (0, None) and kept["precedents_reused"] is True
    assert kept["precedents_passages_per_second"] == encoded["passages_per_second"]
    assert kept["statutes_seconds"] == read_meta(paths.dense_dir / "statutes")["seconds"]


def test_an_encoder_folder_embeds_and_is_never_reused(built, run_cli, tmp_path):
    """``embed --encoder FOLDER`` (stage embed_ft): the folder's weights can change behind its
    name, so its embeddings are redone on every run; a retriever reads the folder back."""
    from dataclasses import replace

    import numpy as np

    from countercase.runtime.models import MINILM, encoder_dir

    paths, _, _ = built
    # the first passages of each table: embedding the whole corpus twice took two minutes
    chunks, statutes = tmp_path / "chunks.parquet", tmp_path / "statute_chunks.parquet"
    pd.read_parquet(paths.chunks).head(SOME).to_parquet(chunks)
    pd.read_parquet(paths.index_dir / STATUTE_CHUNKS).head(SOME).to_parquet(statutes)
    out, folder = tmp_path / "dense_ft", encoder_dir(MINILM)
    args = ("embed", "--encoder", str(folder), "--chunks", str(chunks),
            "--statute-chunks", str(statutes), "--out", str(out))
    code, _, _ = run_cli(*args)
    assert code in (0, None) and read_meta(out / "precedents")["encoder"] == str(folder)
    first = (out / "precedents/embeddings.npy").stat().st_mtime_ns
    code, _, _ = run_cli(*args)
    assert code in (0, None) and (out / "precedents/embeddings.npy").stat().st_mtime_ns != first
    # the packaged weights behind a folder name: the packaged encoder's vectors
    assert np.allclose(np.load(out / "precedents/embeddings.npy"),
                       np.load(paths.dense_dir / "precedents/embeddings.npy")[:SOME], atol=1e-5)
    chunks = pd.read_parquet(chunks)
    retriever = open_retriever("precedents", RetrieveParams().without("bm25"),
                               replace(paths, dense_dir=out, chunks=tmp_path / "chunks.parquet"))
    assert retriever.search(chunks.iloc[3]["text"]).chunks[0].chunk_id == chunks.iloc[3]["chunk_id"]
    code, _, err = run_cli(*args[:2], str(tmp_path / "nowhere"), *args[3:])
    assert code == 2 and "nowhere" in err


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{4,}", text)


def test_a_pdf_hit_points_at_the_pdf_page_that_holds_its_text(built, pdf_dir):
    paths, _, _ = built
    chunks = pd.read_parquet(paths.chunks)
    retriever = open_retriever("precedents", FIRST_STAGE, paths)
    pages = [page.extract_text() for page in pypdf.PdfReader(pdf_dir / f"{PDF}.pdf").pages]
    pdf_chunks = chunks[chunks["doc_id"] == PDF]
    checked = 0
    for row in pdf_chunks.iloc[1::5].itertuples():  # a passage from every few pages
        top = retriever.search(row.text).chunks[0]
        assert top.doc_id == PDF and top.source_path.endswith(f"{PDF}.pdf")
        page_words = set(_words(pages[top.page_number - 1]))
        hit_words = _words(top.text)
        # an independent reader's text of that page holds most of the passage
        assert sum(w in page_words for w in hit_words) >= 0.6 * len(hit_words), top.chunk_id
        checked += 1
    assert checked >= 3


def test_a_statute_query_finds_its_statute_with_the_title(built):
    paths, _, _ = built
    table = pd.read_parquet(paths.index_dir / STATUTE_CHUNKS)
    row = table[table["doc_id"] == "S7"].iloc[0]
    result = open_retriever("statutes", FIRST_STAGE, paths).search(row["text"][:400])
    assert result.documents[0].doc_id == "S7"
    assert {"bm25", "dense", "rrf"} <= set(result.documents[0].scores)


def _paths_args(paths: IndexPaths) -> list[str]:
    """The built indexes, searched by the pipeline (the served system may be a learned one)."""
    return ["--system", "full", "--index-dir", str(paths.index_dir), "--dense-dir",
            str(paths.dense_dir), "--chunks", str(paths.chunks), "--metadata", str(paths.metadata)]


def test_search_prints_json_with_attribution(built, run_cli):
    paths, _, _ = built
    chunks = pd.read_parquet(paths.chunks)
    text = chunks[chunks["doc_id"] == "C3"].iloc[2]["text"][:500]
    code, out, _ = run_cli("search", text, "--json", "--k", "5",
                        *_paths_args(paths))
    rows = json.loads(out)
    assert code == 0 and rows[0]["judgment"] == "C3" and len(rows) == 5
    assert {"rank", "chunk_id", "page", "section_type", "source_path", "bm25", "rrf"} <= set(rows[0])


def test_search_statutes_through_the_bridge(built, run_cli):
    paths, _, _ = built
    mapping = json.loads((paths.index_dir / STATUTE_SECTIONS).read_text())
    assert mapping["S2"] == ["IPC-302"]
    code, out, _ = run_cli("search", "The accused stabbed the deceased who died; "
                        "charged with murder", "--task", "statutes", "--json", *_paths_args(paths))
    rows = json.loads(out)
    assert code == 0 and rows and all(row["statute"] in STATUTES for row in rows)
    assert all("statute_rrf" in row for row in rows)


def test_search_year_filter_keeps_only_those_years(built, run_cli):
    paths, _, _ = built
    years = pd.read_parquet(paths.metadata)["year"].dropna().astype(int)
    low, high = int(years.quantile(0.25)), int(years.quantile(0.75))
    code, out, _ = run_cli("search", "murder conviction appeal evidence",
                        "--json", "--year-from", str(low), "--year-to", str(high),
                        *_paths_args(paths))
    rows = json.loads(out)
    assert code == 0 and rows and all(low <= row["year"] <= high for row in rows)


@pytest.mark.parametrize("args, message", [
    (["   "], "empty query"),
    (["the of and", ], "query"),
    (["murder", "--section", "IPC-99999x"], "IPC-99999x"),
    (["murder", "--section", "XYZ-302"], "XYZ-302"),
    (["murder", "--year-from", "2005", "--year-to", "1990"], "inverted year range"),
    (["murder", "--year-from", "2100"], "matches no judgment"),
    (["murder", "--bench", "Grand"], "Grand"),
    (["murder", "--task", "patents"], "patents"),
])
def test_search_errors_are_one_line_with_status_2(built, run_cli, args, message):
    paths, _, _ = built
    code, out, err = run_cli("search", *args, *_paths_args(paths))
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in err


def test_search_without_an_index_says_what_is_missing(built, tmp_path, run_cli):
    paths, _, _ = built
    code, _, err = run_cli("search", "murder", "--system", "full", "--index-dir", str(tmp_path),
                        "--chunks", str(paths.chunks))
    assert code == 2 and "BM25 index (stage `index`) not found" in err and "Traceback" not in err


def test_a_chunking_variant_cuts_the_same_judgments_smaller(built):
    from countercase.evaluate.variants import chunk_variant
    from countercase.index.bm25 import Bm25Searcher

    paths, _, _ = built
    extract_dir = paths.chunks.parent
    variant = chunk_variant(extract_dir.parent / "ingest/documents.jsonl", extract_dir, 128, 16,
                            extract_dir.parent / "variants")
    small, main = pd.read_parquet(variant.chunks), pd.read_parquet(paths.chunks)
    assert small["n_tokens"].max() <= 128 and len(small) > 1.8 * len(main)
    assert set(small["doc_id"]) == set(main["doc_id"])
    first = main.drop_duplicates("doc_id").set_index("doc_id")
    for row in small.sample(10, random_state=1).itertuples():  # same judgment metadata
        assert first.at[row.doc_id, "year"] == row.year
        assert first.at[row.doc_id, "case_id"] == row.case_id
    with Bm25Searcher(variant.index_dir / "precedents_chunks") as searcher:
        assert searcher.num_docs == len(small)


def test_every_system_applies_the_topics_limits_inside_its_search(built):
    """A query that is one of the corpus judgments, searched leave-one-out by each kind of
    system: its own judgment and later ones never appear, and the lists stay full."""
    from countercase.datasets.limits import Limit, Topics
    from countercase.retrieve.pooling import passage_system
    from countercase.retrieve.steps import bm25_docs_system, pipeline_system
    from countercase.retrieve.searchers import Searchers

    paths, _, _ = built
    chunks = pd.read_parquet(paths.chunks)
    meta = pd.read_parquet(paths.metadata).set_index("doc_id")
    query = " ".join(chunks[chunks["doc_id"] == "C3"]["text"])[:2000]
    year = int(meta.loc["C3", "year"])
    limit = Limit(year, frozenset({"C3"}))
    admitted = {d for d, y in meta["year"].items() if d != "C3" and y == y and y <= year}
    assert admitted and len(admitted) < len(meta) - 1  # the year bound removes some
    open_ = Topics({"C3": query})
    limited = Topics({"C3": query}, {"C3": limit})
    # the first stage: the limits are applied in the searches, before any reranker
    params = RetrieveParams(bm25_depth=200, dense_depth=200, fusion_weights={
        "precedents": {"bm25": 1.0, "dense": 1.0}}).without("rerank")
    systems = {
        "pipeline": pipeline_system(Searchers("precedents", params, paths), params, 20),
        "docs": bm25_docs_system(paths.index_dir / "precedents_docs", 20),
        "passages": passage_system(paths.index_dir / "precedents_chunks",
                                   chunks[["chunk_id", "doc_id", "index"]], 200, 20, "sum2")}
    for name, system in systems.items():
        assert system(open_)["C3"][0][0] == "C3", name  # unlimited, it finds itself first
        found = [d for d, _ in system(limited)["C3"]]
        assert set(found) == admitted, name  # every admitted judgment, nothing else


def test_an_untrained_reranker_leaves_the_first_stage_answering(built, tmp_path, caplog):
    """The reranker is a refinement: switched on without its training, every way of opening a
    retriever warns, naming the missing model, and searches with the first stage."""
    from countercase.retrieve.load import open_retriever
    from countercase.retrieve.searchers import Searchers

    paths, _, _ = built
    missing = RetrieveParams(rerank_model=str(tmp_path / "no-reranker" / "onnx"))
    first = RetrieveParams().without("rerank")
    query = "murder of the deceased by the accused with a knife"
    expected = [h.doc_id for h in open_retriever("precedents", first, paths).search(query, k=5).documents]
    with caplog.at_level("WARNING"):
        searchers = Searchers("precedents", missing, paths)
        found = searchers.search(missing)(query, 5)
        opened = open_retriever("precedents", missing, paths).search(query, k=5)
    assert [h.doc_id for h in found.documents] == expected == [h.doc_id for h in opened.documents]
    warned = [r.getMessage() for r in caplog.records if "not reranked" in r.getMessage()]
    assert len(warned) == 2 and all("no-reranker" in w for w in warned)


def test_the_pooling_grid_searches_the_chunks_once(built, monkeypatch):
    """Every pooling of one ``k1``/``b`` reads the same kept search, and gives the run a fresh
    search gives; another ``k1``/``b`` searches again."""
    from countercase.datasets.limits import Limit, Topics
    from countercase.retrieve.pooling import POOLS, ChunkSearches, passage_system
    from countercase.index import bm25

    paths, _, _ = built
    chunks = pd.read_parquet(paths.chunks)[["chunk_id", "doc_id", "index"]]
    index = paths.index_dir / "precedents_chunks"
    topics = Topics({"q1": "murder of the deceased by the accused with a knife",
                     "q2": "eviction of the tenant for arrears of rent"},
                    {"q2": Limit(None, frozenset({"C3"}))})
    searches, calls = ChunkSearches(index, 200), []
    search = bm25.Bm25Searcher.search
    monkeypatch.setattr(bm25.Bm25Searcher, "search",
                        lambda self, *a, **kw: calls.append(a[0]) or search(self, *a, **kw))
    for pool in POOLS:
        kept = passage_system(searches, chunks, 200, 20, pool)(topics)
        assert kept == passage_system(index, chunks, 200, 20, pool)(topics), pool
    assert len(calls) == 2 * len(topics) * len(POOLS) - (len(POOLS) - 1) * len(topics)
    passage_system(searches, chunks, 200, 20, "max", k1=1.2)(topics)
    assert len(calls) == 2 * len(topics) * len(POOLS) - (len(POOLS) - 2) * len(topics)


def test_a_warm_service_answers_each_query_and_names_a_bad_one(built):
    """Issue 58: `countercase serve` keeps a system open and answers over HTTP as `search
    --json` does; a bad request is a 400 naming what was wrong, and the service goes on."""
    import threading
    import urllib.error
    import urllib.request
    from pathlib import Path

    from countercase.explore.search import OpenedSystem
    from countercase.config import load_params
    from countercase.datasets.limits import KINDS
    from countercase.explore.serve import server
    from countercase.retrieve.registry import system

    paths, _, _ = built
    opened = OpenedSystem(system("bm25_docs"), "precedents", paths, load_params(),
                          Path("no-citations"), Path("no-choice.yaml"))
    httpd = server(lambda q, kind, k: opened.rows(q, k, kind), "bm25_docs", KINDS, 10,
                   port=0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % httpd.server_address[1]

    def get(path: str) -> tuple[int, object]:
        try:
            with urllib.request.urlopen(base + path, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    try:
        assert get("/health") == (200, {"system": "bm25_docs", "kinds": list(KINDS)})
        status, rows = get("/search?q=murder+conviction+dying+declaration&k=3")
        assert status == 200 and [r["rank"] for r in rows] == [1, 2, 3]
        assert {r["judgment"] for r in rows} <= set(JUDGMENTS) | {PDF}
        assert get("/search?q=murder&k=3") != get("/search?q=theft+of+a+bicycle&k=3")
        for path, words in (("/search?q=", "empty query"), ("/search?q=x&kind=brief", "kind"),
                            ("/search?q=x&k=0", "k '0'"), ("/elsewhere", "no such path")):
            status, body = get(path)
            assert status in (400, 404) and words in body["error"], (path, body)
        assert get("/search?q=murder&k=1")[0] == 200  # still serving
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_embedding_in_parts_joins_the_vectors_of_one_pass(built, run_cli, tmp_path):
    """``embed --part i/N`` then ``embed --parts N`` (the stage's part stages): the joined
    vectors are byte for byte those of one pass with the same batches; a missing or stale part
    is named, with the command that makes it."""
    import numpy as np

    paths, _, _ = built
    chunks, statutes = tmp_path / "chunks.parquet", tmp_path / "statute_chunks.parquet"
    pd.read_parquet(paths.chunks).head(3 * SOME + 5).to_parquet(chunks)
    pd.read_parquet(paths.index_dir / STATUTE_CHUNKS).head(SOME).to_parquet(statutes)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["index"].update(precision=FIXTURE_PRECISION, batch_size=8)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    common = ("--chunks", str(chunks), "--statute-chunks", str(statutes),
              "--params", str(tmp_path / "params.yaml"))
    whole, out = tmp_path / "whole", tmp_path / "dense"
    assert run_cli("embed", *common, "--out", str(whole))[0] in (0, None)
    for i in (1, 3):
        assert run_cli("embed", *common, "--out", str(out), "--part", f"{i}/3")[0] in (0, None)
    assert not (out / "precedents").exists() and not (tmp_path / "dense_parts/1of3/statutes").exists()
    code, _, err = run_cli("embed", *common, "--out", str(out), "--parts", "3")
    assert code == 2 and "part 2 of 3" in err and "--part 2/3" in err
    assert run_cli("embed", *common, "--out", str(out), "--part", "2/3")[0] in (0, None)
    shares = [len(json.loads((tmp_path / f"dense_parts/{i}of3/precedents/ids.json").read_text()))
              for i in (1, 2, 3)]
    assert sum(shares) == 3 * SOME + 5 and all(n % 8 == 0 for n in shares[:2]), shares
    timing = tmp_path / "embed.json"
    code, _, _ = run_cli("embed", *common, "--out", str(out), "--parts", "3",
                         "--timing", str(timing))
    assert code in (0, None) and json.loads(timing.read_text())["parts"] == 3
    for task in ("precedents", "statutes"):
        assert (np.load(out / task / "embeddings.npy").tobytes()
                == np.load(whole / task / "embeddings.npy").tobytes()), task
        assert read_meta(out / task)["texts_sha256"] == read_meta(whole / task)["texts_sha256"]
    assert run_cli("embed", *common, "--out", str(out), "--part", "4/3")[0] == 2

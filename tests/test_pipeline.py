"""The retrieval pipeline on a small real index: filters, switches, attribution, pooling, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from countercase.config import RetrieveParams
from countercase.extract.chunking import chunk_document, load_tokenizer
from countercase.extract.metadata import extract_metadata
from countercase.extract.run import CHUNK_CASE_FIELDS
from countercase.extract.segment import segment
from countercase.index.query_terms import EmptyQueryError
from countercase.ingest.text import text_document
from countercase.retrieve.filters import FilterError, SearchFilter
from countercase.retrieve.pipeline import NoMatchError, Retriever

DOCS = [f"C{i}" for i in range(1, 41)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, aila_files):
    from countercase.index.bm25 import Bm25Searcher, build_bm25_index
    from countercase.index.dense import DenseIndex, build_embeddings
    from countercase.index.encoders import load_encoder

    out = tmp_path_factory.mktemp("pipeline")
    tokenizer = load_tokenizer("all-MiniLM-L6-v2")
    rows, docs = [], {}
    texts = aila_files.casedocs(DOCS)
    for name in DOCS:
        doc = text_document(name, texts[name].encode(), name)
        docs[name] = doc
        meta = extract_metadata(doc).to_dict()
        # The first three chunks keep the test fast; enough for every judgment to be found.
        for chunk in chunk_document(doc, segment(doc.text), tokenizer, 254, 32)[:3]:
            rows.append({**chunk.to_dict(), **{f: meta[f] for f in CHUNK_CASE_FIELDS},
                         "judge_names": meta["judge_names"]})
    chunks = pd.DataFrame(rows)
    build_bm25_index(({"id": r["chunk_id"], "contents": r["text"], "year": r["year"],
                       "act_sections": r["act_sections"], "bench_type": r["bench_type"],
                       "section_type": r["section_type"], "outcome": r["outcome_label"],
                       "doc_id": r["doc_id"]} for r in rows), out / "bm25")
    encoder = load_encoder("all-MiniLM-L6-v2")
    build_embeddings(list(chunks["chunk_id"]), list(chunks["text"]), "all-MiniLM-L6-v2",
                     out / "dense", encoder=encoder)
    return chunks, Bm25Searcher(out / "bm25"), DenseIndex.load(out / "dense"), encoder, docs


EQUAL = {"precedents": {"bm25": 1.0, "dense": 1.0}}  # both retrievers run, whatever is tuned


def retriever(corpus, **settings) -> Retriever:
    chunks, bm25, dense, encoder, _ = corpus
    params = RetrieveParams(**{"fusion_weights": EQUAL, **settings})
    return Retriever(chunks, params, bm25=bm25, dense=dense, encoder=encoder)


def test_a_retriever_with_fusion_weight_0_is_not_run(corpus):
    chunks = corpus[0]
    query = chunks[chunks["doc_id"] == "C9"].iloc[0]["text"][:400]
    weights = {"precedents": {"bm25": 1.0, "dense": 0.0}}
    result = retriever(corpus, fusion_weights=weights).search(query)
    assert "dense" not in result.timings_ms and "bm25" in result.timings_ms
    assert all("dense" not in hit.scores for hit in result.chunks)
    alone = retriever(corpus, fusion_weights=weights, steps=("dense",)).search(query)
    assert "dense" in alone.timings_ms and alone.documents[0].doc_id == "C9"


def test_a_passage_finds_its_judgment_with_full_attribution(corpus):
    chunks, *_, docs = corpus
    target = chunks[chunks["doc_id"] == "C7"].iloc[1]
    result = retriever(corpus, mmr_tasks=["precedents"]).search(target["text"][:600])
    top = result.documents[0]
    assert top.doc_id == "C7"
    assert top.page_number == 1 and top.source_path == "C7"
    assert top.text == docs["C7"].text[int(chunks.set_index("chunk_id").loc[top.chunk_id, "char_start"]):][:len(top.text)]
    assert set(top.metadata) == {"case_id", "year", "bench_type", "act_sections", "outcome_label"}
    assert {"bm25", "dense", "rrf", "mmr"} <= set(top.scores)
    assert [h.rank for h in result.chunks] == list(range(1, len(result.chunks) + 1))
    assert len({h.doc_id for h in result.documents}) == len(result.documents)  # pooled


def test_year_filter_excludes_and_pre_and_post_filter_agree(corpus):
    chunks = corpus[0]
    years = sorted(chunks["year"].dropna().unique())
    mid = int(years[len(years) // 2])
    query = "appeal against conviction for murder, the evidence of eye witnesses"
    flt = SearchFilter.build(year_from=mid)
    pre = retriever(corpus, prefilter_threshold=0.0, k=15).search(query, flt)
    post = retriever(corpus, prefilter_threshold=1.0, k=15).search(query, flt)
    assert pre.prefiltered and not post.prefiltered
    assert all(h.metadata["year"] >= mid for h in pre.chunks + post.chunks)
    assert [h.chunk_id for h in pre.chunks] == [h.chunk_id for h in post.chunks]


def test_an_excluded_judgment_is_cut_inside_the_search_whatever_its_share(corpus):
    chunks = corpus[0]
    query = " ".join(chunks[chunks["doc_id"] == "C7"]["text"])[:1500]
    # k 2: cut after the search, C7's own chunks would be two of the candidates kept
    plain = retriever(corpus, prefilter_threshold=1.0, bm25_depth=3, dense_depth=3, k=3)
    assert plain.search(query).documents[0].doc_id == "C7"
    flt = SearchFilter.build(exclude=["C7"])
    found = plain.search(query, flt)
    assert found.prefiltered  # one judgment of 40: below the share rule, still inside
    assert "C7" not in {h.doc_id for h in found.chunks}
    assert len(found.chunks) == 3  # the candidates are filled by other judgments
    assert SearchFilter.of_limit(None) is None


def test_each_step_runs_only_when_named(corpus):
    query = "tenant eviction under the rent control act"
    bm25_only = retriever(corpus, steps=("bm25",)).search(query)
    assert {"bm25", "rrf"} == set(bm25_only.chunks[0].scores)
    dense_only = retriever(corpus, steps=("dense", "rerank")).search(query)
    assert {"dense", "rrf"} == set(dense_only.chunks[0].scores)  # no reranker was given
    with pytest.raises(ValueError, match="bm25, dense or both"):
        retriever(corpus, steps=("mmr",))
    with pytest.raises(ValueError, match="unknown step"):
        retriever(corpus, steps=("bm25", "colbert"))


def test_bad_input_is_named(corpus):
    r = retriever(corpus)
    with pytest.raises(EmptyQueryError):
        r.search("   ")
    with pytest.raises(FilterError, match="inverted year range"):
        SearchFilter.build(year_from=2005, year_to=1990)
    with pytest.raises(FilterError, match="XYZ 999"):
        SearchFilter.build(sections=["XYZ 999"])
    with pytest.raises(FilterError, match="bench type"):
        SearchFilter.build(benches=["Gigantic"])
    with pytest.raises(NoMatchError):
        r.search("murder", SearchFilter.build(year_from=2090))


def test_query_reduction_keeps_the_fact_bearing_sentences(aila_files, corpus):
    from countercase.retrieve.fact_sentences import bears_a_fact, reduce_query, sentences

    query = aila_files.queries()["AILA_Q2"]
    facts = reduce_query(query, "facts")
    kept = sentences(facts)
    assert 0 < len(kept) < len(sentences(query))
    assert all(bears_a_fact(s) and s in query for s in kept)
    assert reduce_query(query, "facts_boost") == query + " " + facts
    plain = "The appeal was heard. Counsel argued at length."
    assert reduce_query(plain, "facts") == plain  # nothing to reduce to: as written
    with pytest.raises(ValueError, match="unknown query reduction"):
        reduce_query(query, "verbs")
    # the pipeline searches with the reduced text
    reduced = retriever(corpus, query_reduction="facts").search(query)
    assert [h.doc_id for h in reduced.documents] != [
        h.doc_id for h in retriever(corpus).search(query).documents]


def test_an_experiments_caches_give_the_same_results_and_are_off_by_default(corpus):
    """Conditions of an experiment share BM25 hits and query vectors (``cache``); a plain
    retriever (a latency benchmark's) keeps nothing."""
    from countercase.index.bm25 import Bm25Searcher

    chunks, bm25, dense, encoder, _ = corpus
    cached_bm25 = Bm25Searcher(bm25.index_dir, cache=8)
    queries = ["appeal against conviction for murder, the evidence of eye witnesses",
               "tenant eviction under the rent control act"]
    first = RetrieveParams(fusion_weights=EQUAL, mmr_tasks=["precedents"], k=20)
    other = first.model_copy(update={"fusion_weights": {"precedents": {"bm25": 1.0,
                                                                       "dense": 0.25}}})
    cached = Retriever(chunks, first, bm25=cached_bm25, dense=dense, encoder=encoder,
                       cache_queries=True)
    plain = Retriever(chunks, first, bm25=bm25, dense=dense, encoder=encoder)
    for params in (first, other, first):
        for query in queries:
            got = cached.with_params(params).search(query)
            want = plain.with_params(params).search(query)
            assert [(h.chunk_id, h.scores) for h in got.chunks] == \
                   [(h.chunk_id, h.scores) for h in want.chunks]
            assert [h.doc_id for h in got.documents] == [h.doc_id for h in want.documents]
    # two queries, one depth each: two searches and two vectors kept, whatever the conditions
    assert len(cached_bm25._cache) == 2 and len(cached._table.vectors) == 2
    assert bm25._cache_size == 0 and plain._table.vectors is None
    # a hit list handed out is the caller's: changing it leaves the cache as it was
    hits = cached_bm25.search(queries[0], 50)
    hits.clear()
    assert cached_bm25.search(queries[0], 50)

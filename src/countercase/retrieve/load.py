"""A :class:`~countercase.retrieve.pipeline.Retriever` opened from the stage outputs, for either
task: the one place that knows where the ``index`` and ``embed`` stages put their files.

- precedents: chunks of ``extract`` (with the judges of ``metadata.parquet``, for the judge
  post-filter), BM25 ``index/precedents_chunks``, dense ``dense/precedents``;
- statutes: ``index/statutes_chunks.parquet``, BM25 ``index/statutes_chunks``, dense
  ``dense/statutes``.

Without stored embeddings the dense stage (and MMR, which needs the vectors) is switched off
with a warning, so BM25 alone still answers.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from countercase import layout
from countercase.config import RetrieveParams
from countercase.errors import CountercaseError
from countercase.layout import IndexPaths
from countercase.index.bm25 import Bm25Searcher
from countercase.index.dense import DenseIndex, read_meta
from countercase.index.encoders import load_encoder
from countercase.index.facts import FactSearcher
from countercase.retrieve.pipeline import Retriever
from countercase.retrieve.rerank import load_reranker
from countercase.retrieve.statute_bridge import StatuteBridge, StatuteSearch

log = logging.getLogger(__name__)


CACHED_SEARCHES = 2048  # BM25 searches an experiment's retriever keeps (about 70 KB each at depth 500)


class MissingIndexError(CountercaseError, FileNotFoundError):
    """A stage output the retriever needs is not there (run the stage first)."""


def _need(path: Path, what: str) -> None:
    if not path.exists():
        raise MissingIndexError(f"{what} not found: {path} (run `dvc repro` or the stage named)")


def load_chunk_table(task: str, paths: IndexPaths) -> pd.DataFrame:
    table_path = paths.chunk_table(task)
    _need(table_path, f"{task} chunk table")
    table = pd.read_parquet(table_path)
    if task == "precedents" and paths.metadata.exists():
        judges = pd.read_parquet(paths.metadata, columns=["doc_id", "judge_names"])
        table = table.merge(judges, on="doc_id", how="left")
    return table


def configured_reranker(params: RetrieveParams, wanted: bool | None = None):
    """The domain reranker ``params`` name when ``wanted`` (default: step rerank runs), else
    None; None with a warning when it is not trained: the reranker is a refinement, and
    without it the first stage still answers."""
    if not (params.running("rerank") if wanted is None else wanted):
        return None
    try:
        return load_reranker(params.rerank_model, params.rerank_backend)
    except FileNotFoundError as error:
        log.warning("the reranker is on but %s: results are not reranked", error)
        return None


def open_retriever(task: str, params: RetrieveParams, paths: IndexPaths = IndexPaths(),
                   reranker=None, facts: bool = False, cache: bool = False) -> Retriever:
    """The ``task``'s retriever under ``params``; the fact index is opened when ``fact_weight``
    is above 0 or ``facts`` asks for it (for configurations switched on later). ``cache``: keep
    BM25 hits and query vectors for the same queries searched again under other parameters (an
    experiment's conditions; never a latency benchmark)."""
    if task not in layout.TASKS:
        raise ValueError(f"unknown task {task!r}: use one of {', '.join(layout.TASKS)}")
    chunks = load_chunk_table(task, paths)
    if reranker is None:
        reranker = configured_reranker(params)
    bm25 = None
    if params.running("bm25"):
        _need(paths.index_dir / f"{task}_chunks", f"{task} BM25 index (stage `index`)")
        bm25 = Bm25Searcher(paths.index_dir / f"{task}_chunks",
                            cache=CACHED_SEARCHES if cache else 0)
    dense = encoder = None
    precision = "float32"
    dense_dir = paths.dense_dir / task
    if params.running("dense"):
        meta = read_meta(dense_dir)
        if meta is None:
            if not params.running("bm25"):
                _need(dense_dir / "meta.json", f"{task} embeddings (stage `embed`)")
            log.warning("no embeddings in %s (stage `embed`): searching with BM25 only", dense_dir)
            params = params.without("dense", "mmr")
        else:
            dense = DenseIndex.load(dense_dir)
            precision = meta.get("precision", "float32")
            encoder = load_encoder(meta["encoder"], precision=precision,
                                   max_seq_length=meta.get("max_seq_length"),
                                   int8_model=meta.get("int8_model"))
    fact_searcher = None
    if task == "precedents" and (params.fact_weight > 0 or facts):
        _need(paths.fact_index, "fact index (stage `index_facts`)")
        fact_searcher = FactSearcher(paths.fact_index)
    return Retriever(chunks, params, bm25=bm25, dense=dense, encoder=encoder, reranker=reranker,
                     task=task, precision=precision, facts=fact_searcher, cache_queries=cache)


def open_statute_search(params: RetrieveParams, paths: IndexPaths = IndexPaths()):
    """The statute task's search: the statutes' pipeline, and (step bridge) the
    precedents that cite them (:mod:`countercase.retrieve.statute_bridge`)."""
    precedents = open_retriever("precedents", params, paths) if params.running("bridge") else None
    return statute_search(open_retriever("statutes", params, paths), precedents, params, paths)


def bridge_inputs(paths: IndexPaths) -> tuple[dict[str, list[str]], dict[str, frozenset[str]]]:
    """What the statute bridge reads: statute -> section ids, judgment -> the sections it cites."""
    mapping_path = paths.index_dir / layout.STATUTE_SECTIONS.name
    _need(mapping_path, "statute-to-section map (stage `index`)")
    _need(paths.metadata, "judgment metadata (stage `extract`)")
    metadata = pd.read_parquet(paths.metadata, columns=["doc_id", "act_sections"])
    doc_sections = {d: frozenset(s) for d, s in zip(metadata["doc_id"], metadata["act_sections"])
                    if s is not None}
    return json.loads(mapping_path.read_text()), doc_sections


def statute_search(statutes: Retriever, precedents: Retriever | None, params: RetrieveParams,
                   paths: IndexPaths):
    if not params.running("bridge") or precedents is None:
        return StatuteSearch(statutes)
    bridge = StatuteBridge(*bridge_inputs(paths), params.bridge_depth, params.bridge_rank_offset)
    return StatuteSearch(statutes, precedents, bridge, params.bridge_weights, params.rrf_k)

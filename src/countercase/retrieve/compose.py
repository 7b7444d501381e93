"""Any system of the registry on one collection: its ranking function ``topics -> run``
(:meth:`Composer.system`), or the one shape every caller asks for by name, a
:class:`~countercase.retrieve.ranker.Ranker` that also searches one query (:meth:`Composer.ranker`).

:class:`Composer` builds a system from its step (:mod:`countercase.retrieve.steps`) and its
settings, the chosen ones read from their files (:mod:`countercase.retrieve.choices`); a
composed system (fusion, prior, rebased) from its components, built the same way. A component's
run is ranked once: ``full_docs`` fuses the very run the ``full`` system is scored on.
:func:`why_not` names each system that cannot run here, and why, before anything is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from countercase import layout
from countercase.config import ConfigError, EvaluateParams, RetrieveParams
from countercase.datasets.citations import read_citations
from countercase.datasets.limits import limit_of
from countercase.layout import IndexPaths
from countercase.retrieve.choices import ChoiceError, Choices
from countercase.retrieve.features import FeatureSource
from countercase.retrieve.learned_search import LearnedRetriever
from countercase.retrieve.load import bridge_inputs, open_retriever, open_statute_search
from countercase.retrieve.ltr import LearnedRanker, ltr_system
from countercase.retrieve.pipeline import Retriever
from countercase.retrieve.pooling import passage_system
from countercase.retrieve.prior import citation_counts, with_prior
from countercase.retrieve.ranker import Ranker, Search, ranked_search
from countercase.retrieve.registry import BY_NAME, COMPOSED, CORPUS_SUPPLIES, SystemSpec
from countercase.retrieve.runs import Run, System
from countercase.retrieve.searchers import Searchers
from countercase.retrieve.statute_bridge import StatuteBridge, bridge_system
from countercase.retrieve.steps import bm25_docs_system, fact_system, fused, pipeline_system


def _topics_key(topics: Mapping[str, str]) -> tuple:
    # the kind too: the served system ranks the same text by another route for another kind
    return (getattr(topics, "kind", None),
            *((qid, text, limit_of(topics, qid)) for qid, text in topics.items()))


@dataclass
class Composer:
    """The systems of one task's collection: ``depth`` judgments per topic, ``chunk_depth``
    chunk candidates per retriever; ``searchers``: the built indexes opened once (opened here
    when first needed); ``exclude``: per query, judgments the statute bridge and the prior must
    not read; ``admits``: the collection's rule of what a search may return (what the prior may
    count); ``links``: the corpus's citation links, read when a prior first ranks;
    ``chunkings``: the indexes of a chunking variant ``(size, overlap)``, built on demand;
    ``unmasked``: qids -> the unmasked text of each citation query among them (the learned
    rankers that read it); ``sheets``, ``ltr_dir``, ``ltr_rule``: what they read. A bridge
    system's component ranks the precedents, built by this composer's precedent twin."""

    task: str
    paths: IndexPaths
    base: RetrieveParams
    depth: int
    chunk_depth: int
    choices: Choices = field(default_factory=Choices)
    searchers: Searchers | None = None
    exclude: Mapping[str, list[str]] = field(default_factory=dict)
    admits: Callable[[str, str], bool] | None = None
    links: Callable[[], Iterable[tuple[str, str]]] | None = None
    chunkings: Callable[[int, int], IndexPaths] | None = None
    encoders: dict[Path, Searchers] = field(default_factory=dict)  # another encoder's, by dir
    unmasked: Callable[[list[str]], Mapping[str, str]] | None = None
    sheets: Path = layout.JUDGMENT_SHEETS
    ltr_dir: Path = layout.LTR
    ltr_rule: Path = layout.LTR_RULE
    supplied: frozenset[str] = CORPUS_SUPPLIES  # what the collection supplies (a route's)
    # the systems by name: configs/systems.yaml's, or another file's (read_systems), so that a
    # system declared in one entry is built and scored as a registered one is
    registry: Mapping[str, SystemSpec] = field(default_factory=lambda: BY_NAME)
    # the reranker of the pipeline systems' search (None: the trained one ``base`` names); the
    # latency stage hands its own in, to read its score cache
    reranker: Any = None
    _runs: dict = field(default_factory=dict, init=False, repr=False)
    _opened: dict = field(default_factory=dict, init=False, repr=False)  # by (dense, rerank)
    _links: tuple | None = field(default=None, init=False, repr=False)
    _features: FeatureSource | None = field(default=None, init=False, repr=False)
    _precedents: "Composer | None" = field(default=None, init=False, repr=False)
    _chunks: Retriever | None = field(default=None, init=False, repr=False)

    def system(self, name: str, replacing: Mapping[str, str] | None = None) -> System:
        """The ranking function of system ``name``, its components named in ``replacing``
        replaced (a rebased system's); its runs kept, so that a system ranked alone and as a
        component ranks once."""
        replacing = dict(replacing or {})
        if name in replacing:
            return self.system(replacing[name], replacing)
        if name not in self.registry:
            raise ConfigError(f"no system {name!r} in the registry: use one of "
                              f"{', '.join(self.registry)}")
        build = self._build(self.registry[name], replacing)
        key = (name, tuple(sorted(replacing.items())))

        def rank(topics: Mapping[str, str]) -> Run:
            kept = (key, _topics_key(topics))
            if kept not in self._runs:
                self._runs[kept] = build(topics)
            return self._runs[kept]
        return rank

    def ranker(self, name: str, table: Retriever | None = None) -> Ranker:
        """System ``name`` as a :class:`~countercase.retrieve.ranker.Ranker`: its ranking
        function and its search of one query (``table``: the chunk table its hits are read
        from, opened when first searched if not given)."""
        if name not in self.registry:
            raise ConfigError(f"no system {name!r} in the registry: use one of "
                              f"{', '.join(self.registry)}")
        spec = self.registry[name]
        rank = self.system(name)
        if spec.pipeline:
            return Ranker(name, rank, self._pipeline_search(spec))

        def chunks() -> Retriever:
            return table if table is not None else self._table()
        if spec.level == "ltr":
            learned = cache(lambda: self._learned(spec, chunks()))
            return Ranker(name, rank,
                          lambda query, filters, k, sheet, kind: learned().search(
                              query, filters, k, sheet),
                          lambda *a: learned().ranking(*a))
        return Ranker(name, rank, ranked_search(name, rank, chunks))

    def _pipeline_search(self, spec: SystemSpec) -> Search:
        """The pipeline's own search under the system's settings at the served depths
        (``base``'s, not an experiment's ``chunk_depth``), opened when first searched."""
        served = spec.served(self.base, self.choices)
        if self.task == "precedents":
            opened = cache(lambda: open_retriever(self.task, served, self.paths,
                                                  reranker=self.reranker))
            return lambda query, filters, k, sheet, kind: opened().search(query, filters, k,
                                                                          sheet)
        opened = cache(lambda: open_statute_search(served, self.paths))
        return lambda query, filters, k, sheet, kind: opened().search(query, filters, k)

    def _table(self) -> Retriever:
        """The chunk table and BM25 index of this task, read once: where a system that ranks
        whole judgments finds each one's passage."""
        if self._chunks is None:
            self._chunks = open_retriever(self.task, self.base.model_copy(update={
                "steps": ("bm25", "bridge"), "fact_weight": 0.0}), self.paths)
        return self._chunks

    def _learned(self, spec: SystemSpec, table: Retriever) -> LearnedRetriever:
        """A learned system's search over ``table``'s chunks: its model over its features'
        pools, the prior counted from this composer's citation links."""
        ranker = LearnedRanker.load(self.ltr_dir / f"{spec.step['model']}.txt")
        return LearnedRetriever(table, self._feature_source(), ranker, self._link_pairs(),
                                spec.name)

    def _searchers(self, spec: SystemSpec) -> Searchers:
        if spec.dense_dir is not None:
            if spec.dense_dir not in self.encoders:
                self.encoders[spec.dense_dir] = Searchers(
                    self.task, self.base, replace(self.paths, dense_dir=spec.dense_dir))
            return self.encoders[spec.dense_dir]
        if self.searchers is not None:  # opened for every system of an experiment
            return self.searchers
        # opened for what this system reads: a search by chunk BM25 loads no encoder and no
        # reranker (a command's start-up)
        params = spec.params(self.base, self.chunk_depth, self.choices)
        # the pipeline opens its dense ranking whenever it is on, at any weight
        need = (params.running("dense") or spec.reads_vectors(self.base, self.chunk_depth,
                                                              self.task),
                params.running("rerank"))
        if need not in self._opened:
            self._opened[need] = Searchers(self.task, self.base, self.paths, dense=need[0],
                                           rerank=need[1])
        return self._opened[need]

    def _build(self, spec: SystemSpec, replacing: dict[str, str]) -> System:
        step = self.choices.resolve(spec.step)
        if spec.level == "docs":
            return bm25_docs_system(self.paths.index_dir / f"{self.task}_docs", self.depth,
                                    spec.name, step["k1"], step["b"])
        if spec.level == "facts":
            return fact_system(self.paths.fact_index, self.depth, spec.name)
        if spec.level == "passages":
            chunks = pd.read_parquet(self.paths.chunk_table(self.task),
                                     columns=["chunk_id", "doc_id", "index"])
            return passage_system(self.paths.index_dir / f"{self.task}_chunks", chunks,
                                  self.chunk_depth, self.depth, step["pool"], step["k1"],
                                  step["b"], label=spec.name)
        if spec.level == "fusion":
            return fused({name: (self.system(name, replacing), float(weight))
                          for name, weight in step["fuse"].items()}, self.base.rrf_k, self.depth)
        if spec.level == "prior":
            return self._prior(self.system(step["of"], replacing), float(step["weight"]))
        if spec.level == "rebased":
            return self.system(step["of"], {**replacing, **step["replacing"]})
        if spec.level == "bridge":
            return self._bridge(step["of"], replacing)
        if spec.level == "route":
            return self._route(spec, replacing)
        if spec.level == "ltr":
            ranker = LearnedRanker.load(self.ltr_dir / f"{step['model']}.txt")
            texts = (self.unmasked if step["query"] == "unmasked" and self.unmasked is not None
                     else None)
            return ltr_system(self._feature_source, ranker, self.depth, self._counts, texts,
                              spec.name)
        params = spec.params(self.base, self.chunk_depth, self.choices)
        if spec.chunking:  # built when it runs (its time counts), BM25 only, no exclusions
            def rank(topics):
                variant = self.chunkings(*spec.chunking)
                return pipeline_system(Searchers(self.task, self.base, variant, dense=False),
                                       params, self.depth, None, spec.name)(topics)
            return rank
        return pipeline_system(self._searchers(spec), params, self.depth, self.exclude,
                               spec.name)

    def _bridge(self, of: str, replacing: dict[str, str]) -> System:
        """The statute bridge (the base's depth and rank offset) over the run system ``of``
        ranks on the precedents, by a composer of the precedents with this one's settings."""
        if self._precedents is None:
            self._precedents = replace(self, task="precedents", searchers=None, encoders={})
        bridge = StatuteBridge(*bridge_inputs(self.paths), self.base.bridge_depth,
                               self.base.bridge_rank_offset)
        return bridge_system(self._precedents.system(of, replacing), bridge, self.exclude,
                             self.depth)

    def _route(self, spec: SystemSpec, replacing: dict[str, str]) -> System:
        """Each query to the system of its kind (``topics.kind``), as the serving choice
        routes it on this collection."""
        routes = routed(spec, self.task, self.base, self.choices, self.supplied,
                        self.paths.fact_index, self.chunkings is not None, replacing,
                        self.registry)
        built = {kind: self.system(name, replacing) for kind, name in routes.items()}

        def rank(topics):
            return built[getattr(topics, "kind", "description")](topics)
        return rank

    def _counts(self, topics: Mapping[str, str]) -> dict:
        """qid -> how often each judgment is cited by those a search for it may see."""
        return citation_counts(self._link_pairs(), list(topics), self.admits, self.exclude)

    def _link_pairs(self) -> tuple:
        """The corpus's (citing, cited) judgments, read once (none without ``links``)."""
        if self._links is None:
            self._links = tuple(self.links()) if self.links is not None else ()
        return self._links

    def _prior(self, system: System, weight: float) -> System:
        def rank(topics):
            return with_prior(system, self._counts(topics), weight, self.base.rrf_k,
                              self.depth)(topics)
        return rank

    def _feature_source(self) -> FeatureSource:
        """The learned rankers' features, opened once (the index searchers stay open)."""
        if self._features is None:
            # a collection without fact sheets: the sheets' groups are unknown (NaN)
            sheets = self.sheets if "fact_sheets" in self.supplied else None
            self._features = FeatureSource.chosen(self.paths, sheets, self.choices,
                                                  self.ltr_rule)
        return self._features


def open_composer(task: str, paths: IndexPaths, base: RetrieveParams, evaluate: EvaluateParams,
                  choices: Choices, searchers: Searchers | None = None,
                  exclude: Mapping[str, list[str]] | None = None, admits=None,
                  citations: Path | None = None, unmasked=None,
                  supplied: frozenset[str] = CORPUS_SUPPLIES,
                  registry: Mapping[str, SystemSpec] | None = None,
                  chunkings: Callable[[int, int], IndexPaths] | None = None,
                  reranker: Any = None) -> Composer:
    """The composer of one collection's systems: ``evaluate.depth`` documents per topic,
    ``evaluate.chunk_depth`` chunk candidates; ``citations``: the citation collection's folder
    whose links the prior and the learned rankers read (None: none); ``supplied``: what the
    collection supplies beyond documents, topics and qrels (the served system's route);
    ``registry``: the systems by name (default: configs/systems.yaml's); ``reranker``: the
    pipeline systems' reranker (default: the trained one)."""
    links = None if citations is None else lambda: read_citations(citations).links
    return Composer(task, paths, base, evaluate.depth, evaluate.chunk_depth, choices,
                    searchers, exclude or {}, admits, links, chunkings, unmasked=unmasked,
                    supplied=supplied, registry=BY_NAME if registry is None else registry,
                    reranker=reranker)


@dataclass(frozen=True)
class _Here:
    """What a system's runnability is judged against: the task, the settings and choices, what
    the collection supplies, its fact index, whether chunking variants can be cut, and the
    registry its components are named in."""

    task: str
    base: RetrieveParams
    choices: Choices
    supplied: frozenset[str]
    fact_index: Path | None
    chunkings: bool
    registry: Mapping[str, SystemSpec]

    def why(self, name: str, replacing: dict[str, str], task: str | None = None) -> str | None:
        here = self if task in (None, self.task) else replace(self, task=task)
        return _why(self.registry[name], here, replacing)


def _why(spec: SystemSpec, here: _Here, replacing: dict[str, str]) -> str | None:
    """Why ``spec`` cannot rank ``here.task`` (None: it can), its components' reasons named."""
    task, base, choices, supplied = here.task, here.base, here.choices, here.supplied
    if spec.name in replacing:
        spec = here.registry[replacing[spec.name]]
    if task not in spec.tasks:
        return f"ranks {', '.join(spec.tasks)} only"
    missing = spec.missing(set(supplied))
    facts = spec.level == "facts" or (spec.level == "chunks" and not choices.why_not(
        spec.settings) and spec.params(base, 1, choices).fact_weight > 0)
    if facts and "fact_sheets" not in supplied:
        missing = sorted({*missing, "fact_sheets"})
    if missing:
        has = ", ".join(sorted(supplied)) or "documents, topics and qrels only"
        return (f"needs {', '.join(missing)}, which the collection does not supply "
                f"(it has {has})")
    if facts and here.fact_index is not None and not here.fact_index.is_dir():
        return f"no fact index at {here.fact_index} (stage index_facts)"
    if spec.chunking is not None and not here.chunkings:
        return ("a chunking variant is cut from the corpus's documents and sections and "
                "searched by the evaluate stage only")
    why = choices.why_not({**spec.step, **spec.settings})
    if why:
        return why
    if spec.dense_dir is not None and not (spec.dense_dir / task / "meta.json").is_file():
        return (f"no embeddings of the fine-tuned encoder in {spec.dense_dir} (stages "
                "train_biencoder, embed_ft; the opt-in pipeline)")
    model = layout.LTR / f"{spec.step.get('model')}.txt"
    if spec.level == "ltr" and not model.is_file():
        return f"no learned ranker at {model} (stage train_ltr)"
    if "rerank" in spec.steps and "rerank" not in spec.when \
            and not Path(base.rerank_model).is_dir():
        return f"no trained reranker in {base.rerank_model} (stage train_reranker)"
    if spec.level == "route":  # the systems it sends this collection's queries to
        for name in dict.fromkeys(_routed(spec, here, replacing).values()):
            inner = here.why(name, replacing)
            if inner:
                return f"its route to {name} cannot run: {inner}"
    elif spec.level in COMPOSED:
        step = choices.resolve(spec.step)
        named = ([*step["fuse"]] if spec.level == "fusion" else [step["of"]])
        if spec.level == "rebased":
            replacing = {**replacing, **step["replacing"]}
        for name in named:
            if name not in here.registry:
                return f"{name!r}, a chosen component, is no system of the registry"
            inner = here.why(name, replacing, "precedents" if spec.level == "bridge" else None)
            if inner:  # named as it runs (a rebased system's replaced component)
                return f"its component {replacing.get(name, name)} cannot run: {inner}"
    return None


def _routed(spec: SystemSpec, here: _Here, replacing: Mapping[str, str] | None = None
            ) -> dict[str, str]:
    return spec.route(here.supplied, here.choices,
                      lambda name: here.why(name, dict(replacing or {})) is None, here.registry)


def routed(spec: SystemSpec, task: str, base: RetrieveParams, choices: Choices,
           supplied: frozenset[str], fact_index: Path | None = None, chunkings: bool = False,
           replacing: Mapping[str, str] | None = None,
           registry: Mapping[str, SystemSpec] = BY_NAME) -> dict[str, str]:
    """A route system's kind -> the system that ranks that kind here: the first of the
    serving choice's order that this collection can run (its needs supplied, its model and
    indexes built), else the fallback."""
    return _routed(spec, _Here(task, base, choices, frozenset(supplied), fact_index, chunkings,
                               registry), replacing)


def why_not(systems: Iterable[SystemSpec], task: str, base: RetrieveParams,
            choices: Choices | None = None, supplied: frozenset[str] = frozenset(),
            fact_index: Path | None = None, chunkings: bool = False,
            registry: Mapping[str, SystemSpec] = BY_NAME) -> dict[str, str]:
    """Why each of ``systems`` that ranks ``task`` cannot run here (the others are left out of
    the answer): what its collection (``supplied``) lacks, a choice or an input no stage has
    made yet, or a component's reason; ``chunkings``: whether chunking variants can be cut;
    ``registry``: the systems their components are named in."""
    here = _Here(task, base, choices or Choices(), frozenset(supplied), fact_index, chunkings,
                 registry)
    found = {}
    for spec in systems:
        if task not in spec.tasks:
            continue
        try:
            why = _why(spec, here, {})
        except ChoiceError as error:
            why = str(error)
        if why:
            found[spec.name] = why
    return found

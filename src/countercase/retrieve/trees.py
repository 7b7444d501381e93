"""What every node of a perturbation tree searches: a :class:`~countercase.retrieve.ranker.Ranker`
of the registry, asked for by name.

The learned system's rule (``configs/ltr_rule.yaml`` ``serving.trees``) sends the trees to
``ltr_unmasked`` when ``ltr`` is served (``perturb.learned``); otherwise they search the
pipeline ``perturb.system`` with the fact channel at the trees' weight (``perturb.fact_weight``,
chosen by the perturb stage on its tuning cases), which the validity rows search too.
"""

from __future__ import annotations

from pathlib import Path

from countercase import layout
from countercase.config import ConfigError, Params
from countercase.datasets.citations import read_citations
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.compose import Composer
from countercase.retrieve.pipeline import Retriever
from countercase.retrieve.ranker import Ranker, retriever_ranker
from countercase.retrieve.registry import system, trees_searching


def searching(params: Params, name: str | None) -> Params:
    """``params`` with the trees searching the system ``name`` (None: as they are): a learned
    system as ``perturb.learned``, a pipeline as ``perturb.system`` (no learned one)."""
    if name is not None and system(name).level == "ltr":
        if "precedents" not in system(name).tasks:
            raise ConfigError(f"the learned system {name!r} ranks no precedents")
        return trees_searching(params, None).model_copy(update={
            "perturb": params.perturb.model_copy(update={"learned": name})})
    if name is not None:
        params = params.model_copy(update={"perturb": params.perturb.model_copy(
            update={"learned": None})})
    return trees_searching(params, name)


def tree_ranker(params: Params, paths: IndexPaths, pipeline: Retriever,
                root: Path = Path(".")) -> Ranker:
    """The trees' system: the learned system ``perturb.learned`` over ``pipeline``'s chunks
    (composed as every system is), or ``pipeline``, the trees' pipeline, when none is;
    ``root``: the project its model, rule, choices and citation links are read from."""
    name = params.perturb.learned
    if name is None:
        return retriever_ranker(params.perturb.system, pipeline, params.evaluate.depth)
    if system(name).level != "ltr":
        raise ConfigError(f"perturb.learned {name!r} is no learned system "
                          f"(level {system(name).level})")
    choices = Choices({file: root / path for file, path in Choices().files.items()})
    composer = Composer("precedents", paths, params.retrieve, params.evaluate.depth,
                        params.evaluate.chunk_depth, choices,
                        links=lambda: read_citations(root / layout.CITATIONS).links,
                        sheets=root / layout.JUDGMENT_SHEETS, ltr_dir=root / layout.LTR,
                        ltr_rule=root / layout.LTR_RULE)
    return composer.ranker(name, table=pipeline)

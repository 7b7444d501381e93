"""Search outside the stages: a system opened once and asked query by query (``countercase
search`` and ``serve``), a user's own judgments indexed once and ranked (``search --docs``), and
each hit as a reader wants it (parties, case, passage, the one-line explanation).

A system that is a pipeline over the built indexes searches through its retriever
(:func:`pipeline_rows`); any other (whole judgments, the fact channel, a learned ranker, the
served route, another encoder) is opened once as the evaluate stage composes it
(:class:`OpenedSystem`), so a hit here is the hit that stage scores.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from countercase import layout
from countercase.datasets.limits import Limit, Topics
from countercase.errors import CountercaseError
from countercase.evaluate.trec import cached_collection, folder_paths
from countercase.explain.hits import readable
from countercase.retrieve.choices import Choices
from countercase.retrieve.compose import open_composer, routed, why_not
from countercase.retrieve.registry import system as registered

if TYPE_CHECKING:
    from countercase.layout import IndexPaths

log = logging.getLogger(__name__)


class SearchRefused(CountercaseError, ValueError):
    """A system that cannot run on what is here; the message names the system and what is
    missing."""


class OpenedSystem:
    """A system that is no pipeline over the built indexes (whole judgments, the fact channel,
    a learned ranker, the served route, another encoder or chunking), opened once and ranking
    any query as the evaluate stage ranks it (its depth, cut to ``k``); one that cannot run
    here is refused with its reason."""

    def __init__(self, spec, task: str, paths, params, citations: Path, choice: Path) -> None:
        import pandas as pd

        choices = Choices({"tuning": choice})
        supplied = {"fact_sheets"} if paths.fact_index.is_dir() else set()
        supplied |= {"citations", "dates"} if citations.is_dir() else set()
        where = {"citations": f"the citation collection {citations} (stage citations)",
                 "dates": f"the citation collection {citations} (stage citations)",
                 "fact_sheets": f"the fact index {paths.fact_index} (stage index_facts)"}
        missing = dict.fromkeys(where[need] for need in spec.missing(supplied))
        if missing:
            raise SearchRefused(f"system {spec.name} cannot run here: it reads "
                                f"{' and '.join(missing)}, which "
                                f"{'is' if len(missing) == 1 else 'are'} not there")
        why = why_not([spec], task, params.retrieve, choices, frozenset(supplied),
                      paths.fact_index)
        if why:
            raise SearchRefused(f"system {spec.name} cannot run here: {why[spec.name]}")
        self.ranker = open_composer(task, paths, params.retrieve, params.evaluate, choices,
                                    citations=citations if citations.is_dir() else None,
                                    supplied=frozenset(supplied)).ranker(spec.name)
        self.years = {}
        if paths.metadata.is_file():
            table = pd.read_parquet(paths.metadata, columns=["doc_id", "year"])
            self.years = dict(zip(table["doc_id"], table["year"]))

    def rows(self, query: str, k: int, kind: str = "description",
             year_to: int | None = None) -> list[dict]:
        """The top ``k`` judgments for ``query`` (a ``kind`` of query, decided no later than
        ``year_to``)."""
        topics = Topics({"query": query}, {"query": Limit(year_to=year_to)} if year_to else None,
                        kind)
        run = self.ranker.rank(topics)["query"][:k]
        return [{"rank": i, "judgment": doc, "year": self.years.get(doc),
                 "score": round(score, 4)} for i, (doc, score) in enumerate(run, start=1)]


def folder_rows(query: str, docs: Path, name: str, kind: str, k: int, params,
                root: Path) -> tuple[list[dict], IndexPaths]:
    """The top ``k`` of system ``name`` over the judgments of ``docs`` (a collection of
    documents only: what needs citations, dates or sheets does not run, and the served
    system's route takes the first system it can run), its indexes built once under
    ``root``; the rows (each says which system ranked it) and the indexes."""
    spec, choices, supplied = registered(name), Choices(), frozenset()
    # decided before anything is built: the route's system, and whether it reads a vector
    probe = folder_paths(root / "none")
    ran = (routed(spec, "precedents", params.retrieve, choices, supplied, probe.fact_index)[kind]
           if spec.level == "route" else spec.name)
    why = why_not([registered(ran)], "precedents", params.retrieve, choices, supplied,
                  probe.fact_index)
    if why:
        raise SearchRefused(f"system {ran} cannot run on {docs}: {why[ran]}")
    embed = registered(ran).reads_vectors(params.retrieve, params.evaluate.chunk_depth,
                                          "precedents")
    paths = cached_collection(docs, root, params.index, params.extract, embed)
    # a collection of documents only: no citation collection or fact index beside it
    opened = OpenedSystem(registered(ran), "precedents", paths, params, root / "none",
                          layout.TUNING_CHOICE)
    rows = [{**row, "system": ran} for row in opened.rows(query, k, kind)]
    if ran != spec.name:
        log.info("%s ranked your judgments (%s's route for a %s on a collection of documents "
                 "only)", ran, spec.name, kind)
    return rows, paths


def pipeline_rows(query: str, task: str, spec, paths, params, filters, k: int | None
                  ) -> list[dict]:
    """The top hits of a pipeline system over the built indexes, each with its passage."""
    ranker = open_composer(task, paths, params.retrieve, params.evaluate,
                           Choices()).ranker(spec.name)
    return [hit_row(hit, task) for hit in ranker.search(query, filters, k).documents]


def hit_row(hit, task: str) -> dict:
    """A pipeline hit as a row: the judgment (or statute), its passage and each stage's score."""
    who = ({"statute": hit.doc_id} if task == "statutes" else
           {"judgment": hit.doc_id, "case_id": hit.metadata.get("case_id"),
            "year": hit.metadata.get("year")})
    return {"rank": hit.rank, **who, "chunk_id": hit.chunk_id, "page": hit.page_number,
            "section_type": hit.section_type, "source_path": hit.source_path,
            **{name: round(v, 4) for name, v in hit.scores.items()},
            "text": hit.text[:160].replace("\n", " ")}


def readable_rows(query: str, rows: list[dict], paths, sheets: Path, profiles: Path) -> list[dict]:
    """The hits with their parties, case number, date, best passage and one-line explanation
    (:mod:`countercase.explain.hits`)."""
    return readable(query, rows, paths.chunks, paths.metadata, sheets, profiles)


"""The citation collection: corpus judgments that cite other corpus judgments, as queries.

Each query is the facts of a citing judgment, masked as AILA masks its queries (no party names,
no statute references: :mod:`countercase.extract.masking`); its relevant documents are the
corpus judgments it cites (the links the citation miner resolves). A search for it may return
only other judgments decided no later than it (:func:`decided_by`), never itself nor its
near-copies: :meth:`Citations.limit` is that rule as a :class:`~countercase.datasets.limits.Limit`,
applied inside every search of every system (and :meth:`Citations.admits` checks a run against
the same rule).

The folder (``countercase.layout.CITATIONS``, written by the ``citations`` stage) holds
``topics.tsv`` (qid = the citing judgment's id), ``qrels.txt``, ``cases.tsv`` (qid, year, part:
``tuning`` or ``heldout``), ``judgments.tsv`` (every corpus judgment's year and ISO date, each
empty when unknown), ``copies.tsv`` (qid, a judgment holding the query's facts or sharing its
near-copy group: never a candidate for it) and ``links.tsv`` (every resolved citation link:
citing, cited). Judgments that hold an AILA query's text (its source and near-copies) are never
queries, and of a group of near-copies only one is.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from countercase.datasets.limits import Limit
from countercase.datasets.trec import CollectionError, read_qrels, read_topics

PARTS = ("tuning", "heldout")
FILES = ("topics.tsv", "qrels.txt", "cases.tsv", "judgments.tsv", "copies.tsv", "links.tsv")


def decided_by(year: int | None, date: str | None, query_year: int,
               query_date: str | None) -> bool:
    """Was a judgment of ``year``/``date`` decided no later than the query? An earlier year
    is; within the query's year only a judgment dated no later than a dated query is (an
    undated one might be later); an unknown year never is."""
    if year is None or year > query_year:
        return False
    if year < query_year:
        return True
    return date is not None and query_date is not None and date <= query_date


def _rows(path: Path, width: int) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.reader(handle, delimiter="\t") if row]
    bad = next((i for i, row in enumerate(rows, start=1) if len(row) != width), None)
    if bad is not None:
        raise CollectionError(f"{path}:{bad}: expected {width} tab-separated fields")
    return rows


def _year(value: str, path: Path) -> int | None:
    if not value:
        return None
    if not value.isdigit():
        raise CollectionError(f"{path}: year {value!r} is not a number")
    return int(value)


@dataclass(frozen=True, eq=False)
class Citations:
    """The collection's files, read once."""

    topics: dict[str, str]
    qrels: dict[str, dict[str, int]]
    part: dict[str, str]  # qid -> tuning | heldout
    years: dict[str, int | None]  # every corpus judgment (the queries among them)
    dates: dict[str, str | None]  # ISO dates, idem
    copies: dict[str, frozenset[str]]  # qid -> judgments never returned for it
    links: tuple[tuple[str, str], ...]  # (citing, cited), every resolved link of the corpus

    @cached_property
    def limits(self) -> dict[str, Limit]:
        """qid -> what a search for it may return: judgments of its year or before, never
        itself, its copies, nor a judgment of its year not known to be decided before it."""
        of_year: dict[int, list[str]] = defaultdict(list)
        for doc, year in self.years.items():
            if year is not None:
                of_year[year].append(doc)
        out = {}
        for qid in self.topics:
            year, date = self.years[qid], self.dates[qid]
            later = {d for d in of_year[year]
                     if not decided_by(year, self.dates.get(d), year, date)}
            out[qid] = Limit(year, frozenset({qid} | self.copies.get(qid, frozenset()) | later))
        return out

    def admits(self, qid: str, doc_id: str) -> bool:
        return self.limits[qid].admits(doc_id, self.years.get(doc_id))

    def qids(self, part: str | None = None) -> list[str]:
        return [q for q in self.topics if part is None or self.part[q] == part]


def read_citations(folder: Path) -> Citations:
    """The collection in ``folder``; a missing or malformed file is a :class:`CollectionError`
    naming it."""
    folder = Path(folder)
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise CollectionError(f"no citation collection in {folder} (missing "
                              f"{', '.join(missing)}): run `dvc repro citations`")
    cases = _rows(folder / "cases.tsv", 3)
    unknown = sorted({part for _, _, part in cases} - set(PARTS))
    if unknown:
        raise CollectionError(f"{folder / 'cases.tsv'}: unknown part(s) {', '.join(unknown)}")
    topics = read_topics(folder / "topics.tsv", "\t")
    query_year = {q: _year(y, folder / "cases.tsv") for q, y, _ in cases}
    if set(topics) != set(query_year) or None in query_year.values():
        raise CollectionError(f"{folder}: topics.tsv and cases.tsv must list the same queries, "
                              "each with its year")
    judgments = _rows(folder / "judgments.tsv", 3)
    years = {d: _year(y, folder / "judgments.tsv") for d, y, _ in judgments}
    if any(years.get(q) != y for q, y in query_year.items()):
        raise CollectionError(f"{folder}: cases.tsv and judgments.tsv disagree on a query's year")
    copies: dict[str, set[str]] = defaultdict(set)
    for qid, doc in _rows(folder / "copies.tsv", 2):
        copies[qid].add(doc)
    return Citations(topics, read_qrels(folder / "qrels.txt"), {q: p for q, _, p in cases},
                     years, {d: date or None for d, _, date in judgments},
                     {q: frozenset(docs) for q, docs in copies.items()},
                     tuple((a, b) for a, b in _rows(folder / "links.tsv", 2)))

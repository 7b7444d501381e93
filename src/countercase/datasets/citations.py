"""The citation collection: corpus judgments that cite other corpus judgments, as queries.

Each query is the facts of a citing judgment, masked as AILA masks its queries (no party names,
no statute references: :mod:`countercase.extract.masking`); its relevant documents are the
corpus judgments it cites (the links the citation miner resolves). A search for it may return
only judgments decided no later than it, and never itself: :meth:`Citations.admits` is that
rule, and :func:`~countercase.experiment.Experiment` applies it to every run, so every system
is searched leave-one-out without knowing it.

The folder (``countercase.layout.CITATIONS``, written by the ``citations`` stage) holds
``topics.tsv`` (qid = the citing judgment's id), ``qrels.txt``, ``cases.tsv`` (qid, year, part:
``tuning`` or ``heldout``), ``years.tsv`` (every corpus judgment's year, empty when unknown) and
``links.tsv`` (every resolved citation link: citing, cited). Judgments that hold an AILA query's
text (its source and near-copies) are never queries.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from countercase.datasets.trec import CollectionError, read_qrels, read_topics

PARTS = ("tuning", "heldout")
FILES = ("topics.tsv", "qrels.txt", "cases.tsv", "years.tsv", "links.tsv")


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


@dataclass(frozen=True)
class Citations:
    """The collection's files, read once."""

    topics: dict[str, str]
    qrels: dict[str, dict[str, int]]
    part: dict[str, str]  # qid -> tuning | heldout
    query_year: dict[str, int]
    years: dict[str, int | None]  # every corpus judgment
    links: tuple[tuple[str, str], ...]  # (citing, cited), every resolved link of the corpus

    def admits(self, qid: str, doc_id: str) -> bool:
        """A judgment a search for ``qid`` may return: another judgment decided no later
        than the query (an unknown year is never admitted)."""
        year = self.years.get(doc_id)
        return doc_id != qid and year is not None and year <= self.query_year[qid]

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
    return Citations(topics, read_qrels(folder / "qrels.txt"), {q: p for q, _, p in cases},
                     query_year,
                     {d: _year(y, folder / "years.tsv") for d, y in _rows(folder / "years.tsv", 2)},
                     tuple((a, b) for a, b in _rows(folder / "links.tsv", 2)))

"""Test collections by id, each giving its queries, qrels and documents through one interface
(the ir_datasets idea). At the bottom of the package: it reads files, never another stage.

=============================  ==========================================================
id                             what
=============================  ==========================================================
``aila2019/task1``             AILA 2019 Task 1 (precedents): 50 queries, 2,914 judgments
``aila2019/task1/tuning``      its AILA_Q1..Q10, for choosing parameters
``aila2019/task1/test``        its AILA_Q11..Q50, for every reported number
``aila2019/task2[/...]``       Task 2 (statutes): the same queries, 197 statutes
``citations[/tuning|/heldout]`` corpus judgments that cite others as queries (facts masked),
                               the judgments they cite as relevant, searched leave-one-out
                               (:mod:`countercase.datasets.citations`); its two seeded halves
``trec:<dir>``                 any collection in TREC form: ``<dir>/docs.jsonl`` (``id``,
                               ``contents``), ``<dir>/topics.tsv`` (``qid<TAB>text``),
                               ``<dir>/qrels.txt``
=============================  ==========================================================

Every AILA file is checked against its checksum and counts on load. A dataset may restrict
what a search may return for each query (``limits``, :mod:`countercase.datasets.limits`): the
citation collection admits only judgments decided no later than the query, never the query
itself nor its near-copies. ``dataset.topics`` carries them to every system, which applies them
inside its search; ``dataset.admits`` checks a run against the same rule.

``dataset.collection`` names the task's outputs (run folders, metric keys, regression folders):
``aila2019-task1`` for every AILA Task 1 id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from countercase import layout
from countercase.datasets import aila
from countercase.datasets.citations import PARTS, read_citations
from countercase.datasets.limits import Limit, Topics
from countercase.datasets.trec import (CollectionError, Qrels, QrelsError, TopicsError,
                                       iter_jsonl_documents, read_qrels, read_topics,
                                       unretrievable)

__all__ = ["CollectionError", "Dataset", "Limit", "QrelsError", "Topics", "TopicsError",
           "citation_dataset", "load", "trec_dataset", "unretrievable", "AILA_COLLECTIONS",
           "DATASET_IDS"]

Docs = Callable[[], Iterator[tuple[str, str]]]


@dataclass(frozen=True)
class Dataset:
    id: str
    collection: str  # the task's name in outputs: aila2019-task1, or a TREC folder's name
    task: str  # the index that answers it: "precedents" or "statutes"
    queries: dict[str, str]
    qrels: Qrels
    docs: Docs | None = field(default=None, repr=False, compare=False)
    limits: Mapping[str, Limit] = field(default_factory=dict, repr=False, compare=False)
    years: Mapping[str, int | None] = field(default_factory=dict, repr=False, compare=False)
    kind: str = "description"  # what its queries are (datasets.limits.KINDS)

    @property
    def qids(self) -> tuple[str, ...]:
        return tuple(self.queries)

    @property
    def topics(self) -> Topics:
        """The queries as every system receives them: with their limits."""
        return Topics(self.queries, self.limits, self.kind)

    def admits(self, qid: str, doc_id: str) -> bool:
        """May a search for ``qid`` return ``doc_id`` (``years``: the judgments' years)?"""
        limit = self.limits.get(qid)
        return limit is None or limit.admits(doc_id, self.years.get(doc_id))

    def docs_iter(self) -> Iterator[tuple[str, str]]:
        """(doc id, text) of every document, in id order."""
        if self.docs is None:
            raise CollectionError(f"{self.id} has no documents")
        return self.docs()

    def subset(self, qids, suffix: str) -> "Dataset":
        """The same collection with only ``qids`` (in their order here) as queries."""
        keep = [q for q in self.queries if q in set(qids)]
        return Dataset(f"{self.id}/{suffix}", self.collection, self.task,
                       {q: self.queries[q] for q in keep},
                       {q: self.qrels[q] for q in keep if q in self.qrels}, self.docs,
                       {q: self.limits[q] for q in keep if q in self.limits}, self.years,
                       self.kind)


AILA_COLLECTIONS = {"aila2019-task1": "precedents", "aila2019-task2": "statutes"}
DATASET_IDS = (*(f"aila2019/{task}{part}" for task in ("task1", "task2")
                  for part in ("", "/tuning", "/test")),
               "citations", *(f"citations/{part}" for part in PARTS))


def load(dataset_id: str, root: Path | None = None) -> Dataset:
    """The dataset named ``dataset_id``; ``root``: the AILA 2019 folder (default:
    :data:`countercase.layout.AILA`), for ``citations``, the collection's folder (default:
    :data:`countercase.layout.CITATIONS`) or, for ``trec:``, nothing (the folder is in the id)."""
    if dataset_id.startswith("trec:"):
        folder = Path(dataset_id.removeprefix("trec:"))
        return trec_dataset(folder / "docs.jsonl", folder / "topics.tsv", folder / "qrels.txt",
                            name=folder.name)
    parts = dataset_id.split("/")
    if dataset_id not in DATASET_IDS:
        raise CollectionError(f"unknown dataset {dataset_id!r}: use one of "
                              f"{', '.join(DATASET_IDS)} or trec:<folder>")
    if parts[0] == "citations":
        return citation_dataset(Path(root or layout.CITATIONS), parts[1] if len(parts) > 1 else None)
    root = Path(root or layout.AILA)
    collection = f"aila2019-{parts[1]}"
    task = AILA_COLLECTIONS[collection]
    if task == "precedents":
        docs: Docs = lambda: aila.casedocs(root)  # noqa: E731
    else:
        docs = lambda: ((s["statute_id"], aila.statute_text(s))  # noqa: E731
                        for s in aila.statutes(root))
    whole = Dataset(f"aila2019/{parts[1]}", collection, task, aila.queries(root),
                    aila.qrels(root, task), docs)
    if len(parts) == 2:
        return whole
    return whole.subset(aila.TUNING if parts[2] == "tuning" else aila.TEST, parts[2])


def trec_dataset(docs: Path, topics: Path, qrels: Path, name: str | None = None,
                 kind: str = "description") -> Dataset:
    """A collection in TREC form (see the module docstring), searched as precedents; ``kind``:
    what its topics are (case descriptions unless its user says they are judgments' texts)."""
    for path, what in ((docs, "documents"), (topics, "topics"), (qrels, "qrels")):
        if not Path(path).is_file():
            raise CollectionError(f"{what} file not found: {path}")
    name = name or Path(topics).stem
    return Dataset(f"trec:{name}", name, "precedents", read_topics(topics, "\t"),
                   read_qrels(qrels), lambda: iter_jsonl_documents(Path(docs)), kind=kind)


def citation_dataset(folder: Path, part: str | None = None) -> Dataset:
    """The citation collection in ``folder`` (one of :data:`PARTS`, or both when None),
    searched over the AILA case documents."""
    found = read_citations(folder)
    qids = found.qids(part)
    return Dataset("citations" + (f"/{part}" if part else ""), "citations", "precedents",
                   {q: found.topics[q] for q in qids},
                   {q: found.qrels[q] for q in qids if q in found.qrels},
                   lambda: aila.casedocs(Path(layout.AILA)),
                   {q: found.limits[q] for q in qids}, found.years, "judgment")

"""Test collections in TREC form: topics, qrels, and the ids of the documents that exist.

- AILA 2019: ``Query_doc.txt`` (``qid||text``) and the two qrels files; every query judges every
  document. Statute S58 is judged (relevant to four queries) but has no text in the track's
  data, so no system can retrieve it: it stays in the qrels, as in the track's own scores, and
  :func:`unretrievable` reports it.
- Any other collection: topics as TSV ``qid<TAB>text``, qrels as ``qid iter docid rel``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from countercase.aila import TEST, TUNING, read_queries, read_topics
from countercase.ingest.text import natural_key

Qrels = dict[str, dict[str, int]]

AILA_TASKS = {"aila2019-task1": ("precedents", "relevance_judgments_priorcases.txt"),
              "aila2019-task2": ("statutes", "relevance_judgments_statutes.txt")}


class QrelsError(ValueError):
    """A qrels file that is not ``qid iter docid rel`` lines."""


@dataclass(frozen=True)
class Collection:
    name: str
    task: str  # which index answers it: "precedents" or "statutes"
    topics: dict[str, str]
    qrels: Qrels
    tuning: tuple[str, ...] = ()  # qids for choosing parameters
    test: tuple[str, ...] = ()  # qids of every reported number (all topics when empty)

    def test_qids(self) -> tuple[str, ...]:
        return self.test or tuple(self.topics)


def read_qrels(path: str | Path) -> Qrels:
    qrels: Qrels = defaultdict(dict)
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
            raise QrelsError(f"{path}:{number}: expected 'qid iter docid rel', got {line[:60]!r}")
        qrels[parts[0]][parts[2]] = int(parts[3])
    return dict(qrels)


def read_tsv_topics(path: str | Path) -> dict[str, str]:
    return read_topics(path, "\t")


def aila_collection(name: str, aila_dir: str | Path) -> Collection:
    task, qrels_file = AILA_TASKS[name]
    aila_dir = Path(aila_dir)
    return Collection(name, task, read_queries(aila_dir / "Query_doc.txt"),
                      read_qrels(aila_dir / qrels_file), TUNING, TEST)


def unretrievable(qrels: Qrels, doc_ids: set[str]) -> dict[str, list[str]]:
    """Relevant documents that are not in the corpus -> the queries they are relevant to."""
    missing: dict[str, list[str]] = defaultdict(list)
    for qid, judged in qrels.items():
        for doc_id, rel in judged.items():
            if rel > 0 and doc_id not in doc_ids:
                missing[doc_id].append(qid)
    return {d: sorted(q, key=natural_key) for d, q in sorted(missing.items(),
                                                            key=lambda i: natural_key(i[0]))}

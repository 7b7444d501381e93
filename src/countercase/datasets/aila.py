"""The AILA 2019 files (FIRE 2019, Artificial Intelligence for Legal Assistance).

- ``Query_doc.txt``: 50 queries, ``AILA_Qn||text``; the track's split: Q1..Q10 to tune
  (:data:`TUNING`), Q11..Q50 for every reported number (:data:`TEST`).
- ``Object_casedocs.tar.gz``: 2,914 judgments ``C1``..``C2914`` (Task 1, precedents);
  ``Object_statutes.tar.gz``: 197 statutes ``S1``..``S200`` as ``Title:``/``Desc:`` (Task 2).
- the two qrels files: every query judges every document of its task. Statute S58 is judged
  (relevant to four queries) but has no text in the track's data, so no system can retrieve it:
  it stays in the qrels, as in the track's own scores.

Each file is checked against its SHA-256 and its counts when it is read: a changed file is an
error naming it, never a silently different number.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from countercase.datasets.ids import natural_key
from countercase.datasets.trec import CollectionError, Qrels, read_qrels, read_topics
from countercase.runtime.digests import sha256_files

TUNING = tuple(f"AILA_Q{i}" for i in range(1, 11))
TEST = tuple(f"AILA_Q{i}" for i in range(11, 51))

QUERIES = "Query_doc.txt"
CASEDOCS = "Object_casedocs.tar.gz"
STATUTES = "Object_statutes.tar.gz"
QRELS = {"precedents": "relevance_judgments_priorcases.txt",
         "statutes": "relevance_judgments_statutes.txt"}
SHA256 = {
    QUERIES: "150df1b9aeb9d705cce83771d36b23b69cd430d8af8762413abcf05639dd58f8",
    CASEDOCS: "3dd8f6ee562e02473b3d01a7fb9f44976d6577f424d4aa2ef7d21ad37654fcd1",
    STATUTES: "f878335f7e88768fb5cc265a785488296d24992c0f6ce9dcc31bb97b058a2ad6",
    QRELS["precedents"]: "10fe24209fa42b9078e4ab9945f4477b3935ae0e5baa0f230691b884031a7762",
    QRELS["statutes"]: "8b0f32ae72eae9b5d4ba516b5299b8496e38dc36cc58b5ec80b8783af7ae8696",
}
COUNTS = {"queries": 50, "precedents": 2914, "statutes": 197}


def checked(root: Path, name: str) -> Path:
    """``root/name`` after its checksum is verified (once per file and process)."""
    path = Path(root) / name
    if not path.is_file():
        raise CollectionError(f"AILA 2019 file not found: {path} (see data/README.md)")
    found = _sha256(str(path.resolve()), path.stat().st_mtime_ns)
    if found != SHA256[name]:
        raise CollectionError(f"{path} has changed: SHA-256 {found[:12]}... where the AILA 2019 "
                              f"file has {SHA256[name][:12]}...")
    return path


@lru_cache(maxsize=None)
def _sha256(path: str, _mtime: int) -> str:
    return sha256_files(Path(path))


def read_queries(path: str | Path) -> dict[str, str]:
    """A topics file in the AILA form (``qid||text``); any path, no checksum (a user's file)."""
    return read_topics(path, "||")


def queries(root: Path) -> dict[str, str]:
    found = read_queries(checked(root, QUERIES))
    _count("queries", len(found), root / QUERIES)
    return found


def qrels(root: Path, task: str) -> Qrels:
    return read_qrels(checked(root, QRELS[task]))


def _count(what: str, found: int, path: Path) -> None:
    if found != COUNTS[what]:
        raise CollectionError(f"{path}: {found} {what} where AILA 2019 has {COUNTS[what]}")


def _members(path: Path, pattern: str) -> Iterator[tuple[str, str]]:
    """(id, text) of the archive's ``<id>.txt`` members matching ``pattern``, in id order."""
    found = []
    # one sequential pass, then sort: reading members in id order straight from a .tar.gz would
    # decompress it again from the start for every backward seek
    with tarfile.open(path, "r|*") as archive:
        for member in archive:
            name = Path(member.name).name
            if member.isfile() and re.fullmatch(pattern, name):
                found.append((name[:-4], archive.extractfile(member).read()
                              .decode("utf-8", errors="replace")))
    yield from sorted(found, key=lambda item: natural_key(item[0]))


def casedocs(root: Path, ids: set[str] | None = None) -> Iterator[tuple[str, str]]:
    """(``Cn``, judgment text) of the Task-1 documents (``ids``: only these), in id order."""
    path = checked(root, CASEDOCS)
    n = 0
    for doc_id, text in _members(path, r"C\d+\.txt"):
        n += 1
        if ids is None or doc_id in ids:
            yield doc_id, text
    _count("precedents", n, path)


def statutes(root: Path) -> list[dict[str, str]]:
    """The Task-2 statutes: ``statute_id``, ``title`` and ``text`` (the ``Desc:``), in id order."""
    path = checked(root, STATUTES)
    rows = read_statutes(path)
    _count("statutes", len(rows), path)
    return rows


def read_statutes(path: Path) -> list[dict[str, str]]:
    """The statutes of an archive in the AILA form (any path, no checksum)."""
    rows = []
    for statute_id, raw in _members(path, r"S\d+\.txt"):
        title = re.search(r"^Title:\s*(.*)$", raw, re.M)
        desc = re.search(r"^Desc:\s*(.*)", raw, re.M | re.S)
        rows.append({"statute_id": statute_id, "title": title.group(1).strip() if title else "",
                     "text": desc.group(1).strip() if desc else raw.strip()})
    return rows


def statute_text(statute: dict[str, str]) -> str:
    """A statute as one document: its title, then its text (what both statute indexes hold)."""
    return f"{statute['title']}\n{statute['text']}"

"""Readers of the files of a test collection in TREC form, and their errors.

- topics: ``qid<separator>text`` lines (AILA: ``||``; any other collection: a tab);
- qrels: ``qid iter docid rel`` lines;
- documents: JSON lines with a non-empty ``id`` (a string or an integer) and ``contents``; a line
  that is not one (bad JSON, bad UTF-8, nested too deep, a duplicate id) is returned as a failure
  (its line number and why), the others are read.

Every reader takes UTF-8 with or without a byte-order mark (a BOM never becomes part of an id).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from countercase.datasets.ids import natural_key
from countercase.errors import CountercaseError

Qrels = dict[str, dict[str, int]]


class TopicsError(CountercaseError, ValueError):
    """A topics file that cannot be read as ``qid<separator>text`` lines."""


class QrelsError(CountercaseError, ValueError):
    """A qrels file that is not ``qid iter docid rel`` lines."""


class CollectionError(CountercaseError, ValueError):
    """A collection that cannot be loaded: an unknown id, a missing or changed file, no
    usable document."""


def read_topics(path: str | Path, separator: str = "\t") -> dict[str, str]:
    """qid -> query text, in the natural order of the qids (Q2 before Q10)."""
    queries: dict[str, str] = {}
    for number, line in enumerate(_lines(path, TopicsError), start=1):
        if not line.strip():
            continue
        qid, sep, text = line.partition(separator)
        if not sep or not qid.strip() or not text.strip():
            raise TopicsError(f"{path}:{number}: expected 'qid{separator!r}text', "
                              f"got {line[:60]!r}")
        if qid.strip() in queries:
            raise TopicsError(f"{path}:{number}: query {qid.strip()} given twice")
        queries[qid.strip()] = text.strip()
    return dict(sorted(queries.items(), key=lambda item: natural_key(item[0])))


def read_qrels(path: str | Path) -> Qrels:
    """qid -> {docid: rel}; a pair judged twice is an error (which label holds would be a guess)."""
    qrels: Qrels = defaultdict(dict)
    first_line: dict[tuple[str, str], int] = {}
    for number, line in enumerate(_lines(path, QrelsError), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4 or not re.fullmatch(r"-?[0-9]+", parts[3]):
            raise QrelsError(f"{path}:{number}: expected 'qid iter docid rel', got {line[:60]!r}")
        pair = (parts[0], parts[2])
        if pair in first_line:
            raise QrelsError(f"{path}:{number}: query {parts[0]} judges document {parts[2]} again "
                             f"(first on line {first_line[pair]})")
        first_line[pair] = number
        qrels[parts[0]][parts[2]] = int(parts[3])
    return dict(qrels)


def _lines(path: str | Path, error: type[CountercaseError]) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8-sig").splitlines()
    except OSError as failure:
        raise error(f"cannot read {path}: {failure.strerror or failure}") from None
    except UnicodeDecodeError as failure:
        raise error(f"{path} is not UTF-8 text: {failure}") from None


def read_jsonl_documents(path: Path) -> tuple[list[tuple[str, str]], list[dict]]:
    """([(doc id, text)], [failure]) of a documents file; raises when no line is usable."""
    documents, failures, seen = [], [], set()
    try:
        handle = path.open("rb")  # decoded line by line: one bad byte costs its line, not the file
    except OSError as failure:
        raise CollectionError(f"cannot read {path}: {failure.strerror or failure}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
                if not isinstance(record, dict):
                    raise TypeError(f"a JSON {type(record).__name__}, not an object")
                doc_id, text = record["id"], record["contents"]
                if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
                    raise TypeError(f"id {doc_id!r} is neither a string nor an integer")
                doc_id = str(doc_id).strip()
                if not doc_id or not isinstance(text, str) or not text.strip():
                    raise ValueError("empty id or contents")
                if doc_id in seen:
                    raise ValueError(f"duplicate id {doc_id!r}")
            except (UnicodeDecodeError, RecursionError, KeyError, TypeError, ValueError) as error:
                failures.append({"source_path": f"{path}:{number}",
                                 "reason": f"{type(error).__name__}: {error}"[:200]})
                continue
            seen.add(doc_id)
            documents.append((doc_id, text))
    if not documents:
        raise CollectionError(f"{path}: no document with an 'id' and 'contents'")
    return documents, failures


def unretrievable(qrels: Qrels, doc_ids: set[str]) -> dict[str, list[str]]:
    """Relevant documents that are not in the corpus -> the queries they are relevant to."""
    missing: dict[str, list[str]] = defaultdict(list)
    for qid, judged in qrels.items():
        for doc_id, rel in judged.items():
            if rel > 0 and doc_id not in doc_ids:
                missing[doc_id].append(qid)
    return {d: sorted(q, key=natural_key) for d, q in sorted(missing.items(),
                                                            key=lambda i: natural_key(i[0]))}


def iter_jsonl_documents(path: Path) -> Iterator[tuple[str, str]]:
    yield from read_jsonl_documents(path)[0]

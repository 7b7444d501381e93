"""Topics files: the AILA 2019 ``Query_doc.txt`` holds one ``AILA_Qn||text`` line per query;
other collections use ``qid<TAB>text``."""

from __future__ import annotations

from pathlib import Path

from countercase.ingest.text import natural_key

TUNING = tuple(f"AILA_Q{i}" for i in range(1, 11))  # the track's split: Q1..Q10 to tune,
TEST = tuple(f"AILA_Q{i}" for i in range(11, 51))  # Q11..Q50 for every reported number


class TopicsError(ValueError):
    """A topics file that cannot be read as ``qid||text`` lines."""


def read_topics(path: str | Path, separator: str = "||") -> dict[str, str]:
    """qid -> query text from ``qid<separator>text`` lines, in the natural order of the qids
    (Q2 before Q10)."""
    queries: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
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


def read_queries(path: str | Path) -> dict[str, str]:
    """The AILA topics file."""
    return read_topics(path, "||")

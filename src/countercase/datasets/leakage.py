"""The leakage guard: corpus documents that contain a large part of a test query's text.

A query can be the facts of a judgment that is itself in the corpus (AILA_Q15 and AILA_Q21 have
near-copies). Such a document gives the query's own answer away to anything that reads it (the
statute bridge, a reranker trained on corpus pairs). Overlap is measured on word 8-shingles:
the share of the query's shingles that occur in the document; at ``threshold`` or more the
document overlaps the query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_TOKEN = re.compile(r"[a-z0-9]+")


def shingles(text: str, n: int = 8) -> set[str]:
    words = _TOKEN.findall(text.lower())
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def overlapping_documents(queries: Mapping[str, str], documents: Iterable[tuple[str, str]],
                          threshold: float = 0.5, n: int = 8) -> dict[str, list[tuple[str, float]]]:
    """qid -> [(doc id, share of the query's shingles found in it)] at ``threshold`` or more.

    ``documents`` are ``(doc id, text)`` pairs; a document may come in several pieces (chunks)
    under one id, their shingles are pooled.
    """
    of_query = {qid: shingles(text, n) for qid, text in queries.items()}
    index: dict[str, list[str]] = {}
    for qid, found in of_query.items():
        for shingle in found:
            index.setdefault(shingle, []).append(qid)
    seen: dict[str, dict[str, set[str]]] = {}
    for doc_id, text in documents:
        for shingle in shingles(text, n):
            for qid in index.get(shingle, ()):
                seen.setdefault(qid, {}).setdefault(doc_id, set()).add(shingle)
    result: dict[str, list[tuple[str, float]]] = {}
    for qid, docs in seen.items():
        total = len(of_query[qid])
        hits = sorted(((d, round(len(s) / total, 3)) for d, s in docs.items()
                       if len(s) / total >= threshold), key=lambda item: (-item[1], item[0]))
        if hits:
            result[qid] = hits
    return dict(sorted(result.items()))

"""The section adjacency map: which sections a cited section may plausibly be changed into.

Every edge records its kind and the evidence for it:

- ``chapter``: consecutive sections of the same chapter of an act (IPC 302 - 303 in Chapter XVI,
  "Of offences affecting the human body"), weight 1;
- ``constitution_crossref``: an Article naming another (the extract stage's cross-references);
- ``co_citation``: two sections cited in the same judgments, at least ``min_count`` of them; the
  weight is their association (see :func:`cocitation_edges`), the count is in the evidence;
- ``correspondence``: an old code's section and its successor in the 2023 codes (IPC -> BNS,
  CrPC -> BNSS), found from the texts (the new codes' table carries no titles): each section is
  cut into its sub-sections, every sub-section is compared by TF-IDF cosine with every sub-section
  of the new code, and a new section scores the mean over the old section's sub-sections of their
  best cosine within it. The best new section is taken when it scores at least ``min_score`` and
  beats the runner-up by ``margin``; otherwise the old section stays unmatched (IPC 379, whose
  one sentence is as close to BNS 318's as to BNS 303's, is left out rather than guessed).

Edges of the first three kinds are undirected (stored once, ``source`` < ``target``); a
correspondence edge goes from the old section to the new one.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations
from typing import Iterable

import numpy as np
import pandas as pd
from scipy import sparse

SUCCESSORS = (("IPC", "BNS"), ("CrPC", "BNSS"))
_WORD = re.compile(r"[a-z]{3,}")
_SUBSECTION = re.compile(r"\n|(?=\(\d+[A-Z]?\)\s)")
_NUMBER_KEY = re.compile(r"(\d+)(.*)")
COLUMNS = ["source", "target", "kind", "weight", "evidence"]


def _number_key(number: str) -> tuple[int, str]:
    m = _NUMBER_KEY.match(str(number))
    return (int(m.group(1)), m.group(2)) if m else (10 ** 6, str(number))


def chapter_edges(table: pd.DataFrame) -> list[dict]:
    edges = []
    chaptered = table[table["chapter"].notna() & (table["chapter"].astype(str) != "")]
    for (act, chapter), group in chaptered.groupby(["act", "chapter"], sort=True):
        ordered = sorted(zip(group["number"], group["section_id"], group["chapter_title"]),
                         key=lambda item: _number_key(item[0]))
        for (_, a, title), (_, b, _) in zip(ordered, ordered[1:]):
            edges.append({"source": min(a, b), "target": max(a, b), "kind": "chapter",
                          "weight": 1.0, "evidence": f"{act} chapter {chapter}: {title}"})
    return edges


def crossref_edges(crossrefs: pd.DataFrame) -> list[dict]:
    pairs = {tuple(sorted((s, t))) for s, t in zip(crossrefs["source"], crossrefs["target"]) if s != t}
    return [{"source": a, "target": b, "kind": "constitution_crossref", "weight": 1.0,
             "evidence": "one Article's text names the other"} for a, b in sorted(pairs)]


def cocitation_edges(cited: Iterable[Iterable[str]], min_count: int = 3) -> list[dict]:
    """Weight: the association ``n_ab / sqrt(n_a * n_b)`` (0 to 1), so that a section cited with
    everything (IPC 34, common intention) does not outrank a true neighbour; the count is in
    the evidence."""
    pairs: Counter[tuple[str, str]] = Counter()
    singles: Counter[str] = Counter()
    for sections in cited:
        unique = sorted(set(sections))
        singles.update(unique)
        pairs.update(combinations(unique, 2))
    return [{"source": a, "target": b, "kind": "co_citation",
             "weight": round(n / (singles[a] * singles[b]) ** 0.5, 4),
             "evidence": f"cited together in {n} judgments"}
            for (a, b), n in sorted(pairs.items()) if n >= min_count]


def _parts(text: str) -> list[str]:
    parts = [p for p in _SUBSECTION.split(str(text)) if len(_WORD.findall(p.lower())) >= 5]
    return parts or [str(text)]


def correspondence(table: pd.DataFrame, old: str, new: str, min_score: float = 0.5,
                   margin: float = 0.05) -> list[dict]:
    """Old-code section -> its successor (see the module rule)."""
    olds = table[table["act"] == old].reset_index(drop=True)
    news = table[table["act"] == new].reset_index(drop=True)
    if olds.empty or news.empty:
        return []
    old_parts = [(i, p) for i, text in enumerate(olds["text"].fillna("")) for p in _parts(text)]
    new_parts = [(j, p) for j, text in enumerate(news["text"].fillna("")) for p in _parts(text)]
    texts = [p for _, p in old_parts] + [p for _, p in new_parts]
    vocabulary: dict[str, int] = {}
    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        for word, n in Counter(_WORD.findall(text.lower())).items():
            rows.append(row)
            cols.append(vocabulary.setdefault(word, len(vocabulary)))
            values.append(n)
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(len(texts), len(vocabulary)))
    df = np.asarray((matrix > 0).sum(axis=0)).ravel()
    matrix = matrix.multiply(np.log((1 + len(texts)) / (1 + df)) + 1).tocsr()
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    matrix = sparse.diags(1 / np.where(norms > 0, norms, 1)) @ matrix
    n_old = len(old_parts)
    cosine = (matrix[:n_old] @ matrix[n_old:].T).toarray()
    new_owner = np.array([j for j, _ in new_parts])
    best_in_section = np.zeros((n_old, len(news)))
    for j in range(len(news)):
        columns = new_owner == j
        if columns.any():
            best_in_section[:, j] = cosine[:, columns].max(axis=1)
    old_owner = np.array([i for i, _ in old_parts])
    edges = []
    for i, section_id in enumerate(olds["section_id"]):
        scores = best_in_section[old_owner == i].mean(axis=0)
        order = np.argsort(-scores, kind="stable")
        best, runner_up = scores[order[0]], scores[order[1]] if len(order) > 1 else 0.0
        if best >= min_score and best - runner_up >= margin:
            edges.append({"source": section_id, "target": news["section_id"][order[0]],
                          "kind": "correspondence", "weight": round(float(best), 4),
                          "evidence": f"{old} -> {new}: text similarity {best:.2f} "
                                      f"(runner-up {runner_up:.2f})"})
    return edges


def build_adjacency(table: pd.DataFrame, crossrefs: pd.DataFrame, cited: Iterable[Iterable[str]],
                    min_count: int = 3) -> pd.DataFrame:
    edges = chapter_edges(table) + crossref_edges(crossrefs) + cocitation_edges(cited, min_count)
    for old, new in SUCCESSORS:
        edges += correspondence(table, old, new)
    frame = pd.DataFrame(edges, columns=COLUMNS)
    return frame.sort_values(["kind", "source", "target"], kind="stable").reset_index(drop=True)


def neighbours(edges: pd.DataFrame, section_id: str) -> pd.DataFrame:
    """The edges touching ``section_id``, the other end in ``neighbour``, strongest first."""
    touching = edges[(edges["source"] == section_id) | (edges["target"] == section_id)].copy()
    touching["neighbour"] = np.where(touching["source"] == section_id, touching["target"],
                                     touching["source"])
    return touching.sort_values(["weight", "neighbour"], ascending=[False, True], kind="stable")

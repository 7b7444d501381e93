"""Search results a lawyer can read (issue 58): each judgment with its parties, case number and
date, the passage of it that best matches the query with the query's words marked, and the
first sentence of its grounded explanation (:func:`countercase.explain.results.explain_result`:
the holding it shares, the facts it shares, else the weighted terms).

Only the hits' own rows are read: the metadata and chunk tables filtered to their judgments,
and the fact sheets and holding profiles scanned for their ids, so that a search starts fast.
The best passage is the chunk (the one the ranker read, where it names one) whose query words
weigh most, a word weighing the log of the hits' chunks over those containing it.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.explain.results import TERM, explain_result
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import validate_sheet
from countercase.holdings.profile import Profile

PASSAGE = 320  # characters of the passage shown around its first marked word
RARE = 1.0  # a query word is marked when at most about a third of the hits' chunks hold it


def _rows_of(path: Path, key: str, ids: set[str]) -> dict[str, dict]:
    """The JSON lines of ``path`` whose ``key`` is one of ``ids``, parsed (the others only
    searched for their id)."""
    found: dict[str, dict] = {}
    if not Path(path).is_file():
        return found
    wanted = {f'"{key}":"{i}"' for i in ids} | {f'"{key}": "{i}"' for i in ids}
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            head = line[:80]
            if any(w in head for w in wanted):
                row = json.loads(line)
                found[row[key]] = row
    return found


def _marked(text: str, terms: set[str]) -> str:
    """A window of ``text`` around its first query word, every query word in bold."""
    flat = " ".join(text.split())
    if not terms:
        return flat[:PASSAGE]
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, terms))) + r")\b", re.I)
    first = pattern.search(flat)
    start = max(0, (first.start() if first else 0) - PASSAGE // 4)
    window = flat[start:start + PASSAGE]
    window = ("..." if start else "") + window + ("..." if start + PASSAGE < len(flat) else "")
    return pattern.sub(lambda m: f"**{m.group(0)}**", window)


def readable(query: str, hits: list[dict[str, Any]], chunks: Path, metadata: Path,
             sheets: Path, profiles: Path) -> list[dict[str, Any]]:
    """``hits`` (rows with ``judgment`` and, where the ranker read one, ``chunk_id``) with
    ``parties``, ``case_id``, ``date``, ``passage`` and ``why`` added."""
    ids = sorted({h["judgment"] for h in hits})
    if not ids:
        return hits
    meta = (pd.read_parquet(metadata, columns=["doc_id", "case_id", "date", "petitioner",
                                               "respondent", "act_sections"],
                            filters=[("doc_id", "in", ids)])
            if Path(metadata).is_file() else pd.DataFrame(columns=["doc_id"]))
    meta = {r["doc_id"]: r for r in meta.to_dict("records")}
    table = (pd.read_parquet(chunks, columns=["chunk_id", "doc_id", "text"],
                             filters=[("doc_id", "in", ids)])
             if Path(chunks).is_file() else pd.DataFrame(columns=["chunk_id", "doc_id", "text"]))
    words = set(TERM.findall(query.lower()))
    df = Counter(w for text in table["text"] for w in words & set(TERM.findall(text.lower())))
    n = max(len(table), 1)
    weight = {w: math.log((n + 1) / (df[w] + 0.5)) for w in words}
    sheets_of = {d: validate_sheet(row) for d, row in _rows_of(sheets, "case_id", set(ids)).items()}
    profiles_of = {d: Profile.from_json(row)
                   for d, row in _rows_of(profiles, "doc_id", set(ids)).items()}
    query_sheet = extract_rules(query, "query", "query")
    out = []
    for hit in hits:
        doc = hit["judgment"]
        own = table[table["doc_id"] == doc]
        if hit.get("chunk_id") in set(own["chunk_id"]):
            best = own[own["chunk_id"] == hit["chunk_id"]].iloc[0]
        elif len(own):
            scores = [sum(weight[w] for w in words & set(TERM.findall(t.lower())))
                      for t in own["text"]]
            best = own.iloc[max(range(len(scores)), key=lambda i: (scores[i], -i))]
        else:
            best = None
        found = meta.get(doc, {})
        parties = " v. ".join(str(found[k]) for k in ("petitioner", "respondent")
                              if isinstance(found.get(k), str) and found[k])
        chunk_id, text = (best["chunk_id"], best["text"]) if best is not None else ("", "")
        sections = found.get("act_sections")
        context = {"act_sections": [] if sections is None else list(sections)}
        why = explain_result(query_sheet, query, doc, chunk_id, text, sheets_of.get(doc),
                             context, weight.get, profiles_of.get(doc))
        out.append({**hit, "parties": parties or None, "case_id": found.get("case_id"),
                    "date": found.get("date"), "chunk_id": chunk_id or hit.get("chunk_id"),
                    "passage": _marked(text, {w for w in words if weight[w] >= RARE}) or None,
                    "why": why[0].text})
    return out

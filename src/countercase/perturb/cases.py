"""Query cases beyond the AILA queries: corpus judgments, their facts unmasked, searched
leave-one-out.

A corpus case is a judgment's facts (the first ``max_chars`` characters of the facts span its
fact sheet was read from) with the sheet's values rebased to that window (values outside it are
dropped; a party keeps its type). Its cited precedents are the citation links the
``train_reranker`` stage resolved (``groups.jsonl``, precedent groups: the judgment and the
corpus judgments it cites, decided before it). Its searches exclude the judgment itself and
every judgment decided after it (and every judgment of unknown year).

The judgments that cite are split once, by a seeded shuffle: the first ``tuning_cases`` are the
tuning cases (the fact channel's weight in the trees is chosen on them), the next
``corpus_cases`` the validity cases; a case without a known citation is never drawn.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from countercase.datasets.ids import natural_key
from countercase.factsheet.schema import FactSheet, Span


@dataclass(frozen=True)
class QueryCase:
    case_id: str
    text: str
    sheet: FactSheet  # spans are offsets into ``text``
    year: int | None
    cited: tuple[str, ...] = ()  # corpus judgments it cites (known precedents)

    @property
    def exclude(self) -> frozenset[str]:
        return frozenset({self.case_id})


def cited_precedents(groups: Path) -> dict[str, tuple[str, ...]]:
    """citing judgment -> the corpus judgments it cites (train_reranker's precedent groups)."""
    cited: dict[str, set[str]] = defaultdict(set)
    with Path(groups).open(encoding="utf-8") as handle:
        for line in handle:
            group = json.loads(line)
            if group["task"] == "precedents":
                cited[group["query_doc"]].add(group["positive_doc"])
    return {doc: tuple(sorted(found, key=natural_key)) for doc, found in cited.items()}


def split(citing: list[str], seed: int, tuning: int, validity: int) -> tuple[list[str], list[str]]:
    order = sorted(citing, key=natural_key)
    random.Random(seed).shuffle(order)
    return order[:tuning], order[tuning:tuning + validity]


def _rebased(span: Span | None, start: int, end: int) -> Span | None:
    if span is None or span.start < start or span.end > end:
        return None
    return Span(start=span.start - start, end=span.end - start, text=span.text)


def window(doc_text: str, sheet: FactSheet, max_chars: int) -> tuple[str, FactSheet]:
    """The facts window of a judgment and its sheet rebased to it (module docstring)."""
    start = sheet.facts_span.start
    end = min(sheet.facts_span.end, start + max_chars)
    text = doc_text[start:end]
    data = sheet.model_dump()

    def kept(items: list[dict]) -> list[dict]:
        out = []
        for item in items:
            span = _rebased(Span(**item["span"]) if item["span"] else None, start, end)
            if span is not None:
                out.append({**item, "span": span.model_dump()})
        return out

    data["evidence_items"] = kept(data["evidence_items"])
    data["sections_cited"] = kept(data["sections_cited"])
    for kind in ("amounts", "ages", "durations"):
        data["numerical_facts"][kind] = kept(data["numerical_facts"][kind])
    for side in ("petitioner", "respondent"):
        party = data["parties"][side]
        span = _rebased(Span(**party["span"]) if party["span"] else None, start, end)
        party["span"] = span.model_dump() if span else None
    data["source"] = "query"
    data["facts_span"] = {"start": 0, "end": len(text), "text": text[:200]}
    return text, FactSheet.model_validate(data)


def corpus_cases(ids: list[str], texts: dict[str, str], sheets: dict[str, FactSheet],
                 years: dict[str, int | None], cited: dict[str, tuple[str, ...]],
                 max_chars: int) -> tuple[list[QueryCase], list[dict]]:
    """The cases of ``ids`` and, for each one that cannot be a case, why (skipped, counted)."""
    cases, skipped = [], []
    for case_id in ids:
        if case_id not in texts or case_id not in sheets:
            skipped.append({"case_id": case_id, "reason": "no text or no fact sheet"})
            continue
        text, sheet = window(texts[case_id], sheets[case_id], max_chars)
        if not text.strip():
            skipped.append({"case_id": case_id, "reason": "empty facts window"})
            continue
        cases.append(QueryCase(case_id, text, sheet, years.get(case_id), cited.get(case_id, ())))
    return cases, skipped

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

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from countercase.config import Params
from countercase.datasets.ids import natural_key
from countercase.extract.years import read_years
from countercase.factsheet.schema import FactSheet, Span
from countercase.factsheet.store import read_sheets
from countercase.errors import CountercaseError
from countercase.ingest.run import read_documents
from countercase.runtime.jsonl import objects
from countercase.factsheet.thresholds import in_days


class CaseFileError(CountercaseError, ValueError):
    """A citation-group or gold file line that cannot be read (the message names the line)."""


def json_lines(path: Path, fields: tuple[str, ...],
               error: type[Exception] = CaseFileError) -> list[dict]:
    """The JSON objects of a JSON-lines file, each with ``fields``; a line that is not one
    raises ``error`` naming the file and line."""
    def bad(number: int, why: str) -> Exception:
        return error(f"{path}:{number}: {why}")

    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, row in objects(handle, bad):
            missing = [f for f in fields if f not in row]
            if missing:
                raise bad(number, f"missing {', '.join(missing)}")
            rows.append({**row, "_line": number})
    return rows


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
    for group in json_lines(groups, ("task", "query_doc", "positive_doc")):
        if group["task"] == "precedents":
            cited[group["query_doc"]].add(group["positive_doc"])
    return {doc: tuple(sorted(found, key=natural_key)) for doc, found in cited.items()}


def split(citing: list[str], seed: int, tuning: int,
          validity: int) -> tuple[list[str], list[str], list[str]]:
    """The tuning, validity and fresh case ids: a seeded shuffle cut in that order (fresh: the
    rest, never used in development)."""
    order = sorted(citing, key=natural_key)
    random.Random(seed).shuffle(order)
    return order[:tuning], order[tuning:tuning + validity], order[tuning + validity:]


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


@dataclass(frozen=True)
class Precedent:
    sections: frozenset[str]
    evidence: frozenset[str]
    parties: tuple[str, str]  # petitioner, respondent types
    numbers: dict  # kind -> values (durations in days)


def precedent_facts(sheet: FactSheet, act_sections: Iterable[str] = ()) -> Precedent:
    facts = sheet.numerical_facts
    return Precedent(
        frozenset(s.section_id for s in sheet.sections_cited) | frozenset(act_sections),
        frozenset(e.evidence_type for e in sheet.evidence_items),
        (sheet.parties.petitioner.type, sheet.parties.respondent.type),
        {"ages": [a.years for a in facts.ages], "amounts": [a.value for a in facts.amounts],
         "durations": [in_days(d.value, d.unit) for d in facts.durations]})


@dataclass(frozen=True)
class ValidityInputs:
    documents: Path  # the ingest stage's texts
    sheets: Path  # the factsheets stage's judgments.jsonl
    metadata: Path  # the extract stage's metadata (years, sections cited)
    groups: Path  # the train_reranker stage's groups.jsonl (resolved citations)
    gold: Path  # data/gold/dispositive_facts.jsonl


def read_gold(path: Path) -> dict[str, str]:
    """case id -> the labelled dispositive fact type (data/gold/dispositive_facts.md)."""
    return {row["case_id"]: row["fact_type"] for row in json_lines(path, ("case_id", "fact_type"))}


@dataclass
class CaseSets:
    """The corpus query cases of one seed (module docstring)."""

    tuning: list[QueryCase]  # the trees' fact weight is chosen on these
    validity: list[QueryCase]  # validity is measured on these
    gold: list[QueryCase]  # the gold dispositive-fact cases
    gold_types: dict[str, str]  # case id -> labelled dispositive fact type
    skipped: list[dict]  # cases that could not be used, and why (validity and gold)
    n_validity_skipped: int
    precedents: dict[str, Precedent]  # cited judgment -> its facts
    fresh: list[QueryCase] = field(default_factory=list)  # the first after validity (load_cases)


def load_cases(params: Params, inputs: ValidityInputs, fresh: int = 0) -> CaseSets:
    """The tuning, validity and gold cases of ``params.seed``, and their cited precedents;
    ``fresh``: that many of the cases after the validity cases in the split too (the legal
    audit's confirmatory sample; their precedents are not read)."""
    p = params.perturb
    texts = {d.doc_id: d.text for d in read_documents(inputs.documents)}
    sheets = {s.case_id: s for s in read_sheets(inputs.sheets)}
    years = read_years(inputs.metadata)
    meta = pd.read_parquet(inputs.metadata, columns=["doc_id", "act_sections"])
    sections = {d: list(s) if s is not None else [] for d, s in
                zip(meta["doc_id"], meta["act_sections"])}
    cited = cited_precedents(inputs.groups)
    gold = read_gold(inputs.gold)
    tuning_ids, validity_ids, fresh_ids = split(sorted(cited), params.seed, p.tuning_cases,
                                                p.corpus_cases)
    tuning, skipped = corpus_cases(tuning_ids, texts, sheets, years, cited, p.case_chars)
    cases, more = corpus_cases(validity_ids, texts, sheets, years, cited, p.case_chars)
    gold_cases, gold_skipped = corpus_cases(sorted(gold), texts, sheets, years, cited,
                                            p.case_chars)
    needed = {c for case in cases + gold_cases for c in case.cited}
    precedents = {doc: precedent_facts(sheets[doc], sections.get(doc, ()))
                  for doc in needed if doc in sheets}
    fresh_cases = (corpus_cases(fresh_ids, texts, sheets, years, cited, p.case_chars)[0][:fresh]
                   if fresh else [])
    return CaseSets(tuning, cases, gold_cases, gold, skipped + more + gold_skipped, len(more),
                    precedents, fresh_cases)

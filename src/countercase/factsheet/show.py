"""Finding and showing a fact sheet: each value with the text span it was read from."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from countercase.datasets.aila import read_queries
from countercase.errors import CountercaseError
from countercase.factsheet.schema import FactSheet, validate_sheet
from countercase.ingest.run import read_documents


class SheetNotFoundError(CountercaseError, LookupError):
    """No fact sheet (or no stage output) for the case asked for."""


def find_sheet(case_id: str, sheets_dir: Path) -> FactSheet:
    """The stage's sheet of a judgment (``C12``) or AILA query (``AILA_Q3``)."""
    name = "queries.jsonl" if case_id.upper().startswith("AILA_Q") else "judgments.jsonl"
    path = sheets_dir / name
    if not path.exists():
        raise SheetNotFoundError(f"no fact sheets in {path}: run `dvc repro factsheets` first")
    prefix = f'{{"case_id":"{case_id}"'
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(prefix):
                return validate_sheet(json.loads(line))
    raise SheetNotFoundError(f"no fact sheet for {case_id!r} in {path}")


def sheet_rows(sheet: FactSheet) -> list[tuple[str, str, str]]:
    rows = []
    for side in ("petitioner", "respondent"):
        party = getattr(sheet.parties, side)
        rows.append((side, party.type, party.span.text if party.span else ""))
    rows += [("section", s.section_id, s.span.text if s.span else "") for s in sheet.sections_cited]
    rows += [("evidence", e.evidence_type, e.description) for e in sheet.evidence_items]
    facts = sheet.numerical_facts
    rows += [("age", f"{a.years:g} ({a.descriptor})", a.span.text if a.span else "")
             for a in facts.ages]
    rows += [("amount", f"INR {a.value:,.0f}", a.span.text if a.span else "") for a in facts.amounts]
    rows += [("duration", f"{d.value:g} {d.unit}", d.span.text if d.span else "")
             for d in facts.durations]
    rows.append(("outcome", sheet.outcome, ""))
    return rows


# A table row per value is unreadable past a screenful, and rendering 100,000 of them took half
# a minute: each field shows this many, then a count of the rest.
ROWS_PER_FIELD = 50

TAG_STYLES = {"MONETARY_AMOUNT": "bold green", "AGE": "bold cyan", "DURATION": "bold blue",
              "LEGAL_SECTION": "bold magenta", "PARTY_ROLE": "bold yellow",
              "EVIDENCE_TYPE": "bold red"}


def case_text(case_id: str, queries: Path, documents: Path) -> str | None:
    """The text a stage sheet was read from: the AILA query, or the judgment in the ingest
    stage's documents; None when that file is not there."""
    if case_id.upper().startswith("AILA_Q"):
        if not queries.exists():
            return None
        return read_queries(queries).get(case_id)
    if not documents.exists():
        return None
    return next((d.text for d in read_documents(documents) if d.doc_id == case_id), None)


def stage_records(case_id: str, path: Path) -> list[dict]:
    """The lines of a stage's JSONL file (llm.jsonl, entities.jsonl) about one case."""
    if not path.exists():
        return []
    prefix = f'{{"case_id": "{case_id}"', f'{{"case_id":"{case_id}"'
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.startswith(prefix)]


def render(sheet: FactSheet, text: str | None = None, confidence: dict | None = None,
           tags: list | None = None) -> None:
    """The sheet as a table (with each value's sources and confidence when given), then the
    entity tags and the text they were found in, highlighted by label."""
    console = Console()
    table = Table(title=f"fact sheet {sheet.case_id} ({sheet.source}, facts located by "
                        f"{sheet.facts_located_by})")
    columns = ["field", "value", "from the text"] + (["found by", "confidence"] if confidence
                                                     else [])
    for column in columns:
        table.add_column(column, overflow="fold")
    queues: dict[str, list] = {}
    for value in (confidence or {}).get("values", []):
        queues.setdefault(value.field, []).append(value)
    shown_per_field: dict[str, int] = {}
    rows = sheet_rows(sheet)
    for row in rows:
        shown_per_field[row[0]] = shown_per_field.get(row[0], 0) + 1
        if shown_per_field[row[0]] == ROWS_PER_FIELD + 1:
            more = sum(r[0] == row[0] for r in rows) - ROWS_PER_FIELD
            table.add_row(row[0], f"... {more:,} more", "(--json shows every value)",
                          *([""] * (len(columns) - 3)))
        if shown_per_field[row[0]] > ROWS_PER_FIELD:
            continue
        extra = []
        if confidence:
            queue = queues.get(row[0], [])
            value = queue.pop(0) if queue and row[1] != "Unknown" else None
            extra = ["+".join(value.found_by),
                     value.level if value.score is None else f"{value.score:.2f} {value.level}"] \
                if value else ["", ""]
        table.add_row(*row, *extra)
    console.print(table)
    if confidence:
        overall = confidence["overall"]
        score = "n/a" if overall["score"] is None else f"{overall['score']:.2f}"
        console.print(f"overall confidence: {score} ({overall['level']}, mean of "
                      f"{overall['n']} values)")
    if tags:
        listing = Table(title="entity tags")
        for column in ("label", "text", "value", "source", "score", "agrees"):
            listing.add_column(column, overflow="fold")
        for tag in tags:
            listing.add_row(Text(tag.label, style=TAG_STYLES.get(tag.label, "")), tag.text,
                            tag.value or "", tag.source,
                            "" if tag.score is None else f"{tag.score:.2f}",
                            "" if tag.agrees is None else ("yes" if tag.agrees else "no"))
        console.print(listing)
    if text:  # the facts, with the tags (or, without tags, the sheet's spans) highlighted
        start, end = (sheet.facts_span.start, sheet.facts_span.end) \
            if sheet.source == "judgment" else (0, len(text))
        shown = Text(text[start:end])
        if tags:
            for tag in tags:
                if start <= tag.start and tag.end <= end:
                    shown.stylize(TAG_STYLES.get(tag.label, "bold"), tag.start - start,
                                  tag.end - start)
            console.print(Text(" ").join(Text(label, style=style)
                                         for label, style in TAG_STYLES.items()))
        else:
            spans = [v.span for v in (sheet.sections_cited + sheet.evidence_items
                                      + sheet.numerical_facts.ages + sheet.numerical_facts.amounts
                                      + sheet.numerical_facts.durations) if v.span]
            for span in spans[:ROWS_PER_FIELD * 5]:
                if start <= span.start and span.end <= end:
                    shown.stylize("bold yellow", span.start - start, span.end - start)
        console.print(shown)

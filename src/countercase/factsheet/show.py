"""Finding and showing a fact sheet: each value with the text span it was read from."""

from __future__ import annotations

from pathlib import Path

from countercase.factsheet.schema import FactSheet, validate_sheet


def find_sheet(case_id: str, sheets_dir: Path) -> FactSheet:
    """The stage's sheet of a judgment (``C12``) or AILA query (``AILA_Q3``)."""
    name = "queries.jsonl" if case_id.upper().startswith("AILA_Q") else "judgments.jsonl"
    path = sheets_dir / name
    if not path.exists():
        raise LookupError(f"no fact sheets in {path}: run `dvc repro factsheets` first")
    prefix = f'{{"case_id":"{case_id}"'
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(prefix):
                import json

                return validate_sheet(json.loads(line))
    raise LookupError(f"no fact sheet for {case_id!r} in {path}")


def _rows(sheet: FactSheet) -> list[tuple[str, str, str]]:
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


def render(sheet: FactSheet, text: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    table = Table(title=f"fact sheet {sheet.case_id} ({sheet.source}, facts located by "
                        f"{sheet.facts_located_by})")
    for column in ("field", "value", "from the text"):
        table.add_column(column, overflow="fold")
    for row in _rows(sheet):
        table.add_row(*row)
    console.print(table)
    if text:  # the spans highlighted in the text they came from
        shown = Text(text)
        spans = [v.span for v in (sheet.sections_cited + sheet.evidence_items
                                  + sheet.numerical_facts.ages + sheet.numerical_facts.amounts
                                  + sheet.numerical_facts.durations) if v.span]
        for span in spans:
            shown.stylize("bold yellow", span.start, span.end)
        console.print(shown)

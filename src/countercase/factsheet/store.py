"""Reading a stage's fact sheets (``judgments.jsonl``, ``queries.jsonl``: one sheet a line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from countercase.factsheet.schema import FactSheet, FactSheetError, validate_sheet


def read_sheets(path: Path) -> Iterator[FactSheet]:
    """Every sheet of a stage file (one JSON object a line); a line that is not JSON or not a
    valid sheet is an error naming the file and line."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield validate_sheet(json.loads(line))
            except json.JSONDecodeError as error:
                raise FactSheetError(f"{path}:{number}: not JSON ({error.msg})") from None
            except FactSheetError as error:
                raise FactSheetError(f"{path}:{number}: {error}") from None

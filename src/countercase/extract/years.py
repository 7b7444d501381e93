"""The judgments' years, as the extract stage's metadata gives them (a missing year is None)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read_years(metadata: Path) -> dict[str, int | None]:
    table = pd.read_parquet(metadata, columns=["doc_id", "year"])
    # a missing year reads as NaN (not equal to itself) or None
    return {d: (int(y) if y is not None and y == y else None)
            for d, y in zip(table["doc_id"], table["year"])}


def read_dates(metadata: Path) -> dict[str, str | None]:
    """The judgments' ISO dates (None when unknown)."""
    table = pd.read_parquet(metadata, columns=["doc_id", "date"])
    return {d: (str(v) if isinstance(v, str) and v else None)
            for d, v in zip(table["doc_id"], table["date"])}

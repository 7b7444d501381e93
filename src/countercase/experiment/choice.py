"""The tie rule every grid choice follows (the tuning grids, the trees' fact weight, the
fine-tuned encoder's adoption): the highest score wins, but a point within :data:`TIE_MARGIN` of
it that comes earlier in grid order (the simpler setting) is taken instead."""

from __future__ import annotations

from typing import Any

TIE_MARGIN = 0.001


def best(rows: list[dict[str, Any]], key: str = "tuning_MAP") -> dict[str, Any]:
    """The first row of ``rows`` (in grid order) within :data:`TIE_MARGIN` of the top ``key``."""
    top = max(row[key] for row in rows)
    return next(row for row in rows if row[key] >= top - TIE_MARGIN)

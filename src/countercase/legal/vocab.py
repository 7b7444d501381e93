"""Closed vocabularies shared by extraction, the indexes and the retrieval filters."""

from __future__ import annotations

BENCH_TYPES: tuple[str, ...] = (
    "Single", "Division", "Three-Judge", "Larger", "Constitution", "Unknown")
SECTION_TYPES: tuple[str, ...] = (
    "Facts", "Issues", "Submissions", "Held", "Ratio", "Obiter", "Unknown")
OUTCOMES: tuple[str, ...] = ("Allowed", "Dismissed", "Disposed", "Unknown")


def bench_type_for(n_judges: int | None) -> str:
    """The plan's bench classes by judge count: 1, 2, 3, 4, 5 or more."""
    if not n_judges or n_judges < 1:
        return "Unknown"
    return {1: "Single", 2: "Division", 3: "Three-Judge", 4: "Larger"}.get(n_judges, "Constitution")

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

# The legal domains a case belongs to (a case may belong to several): a boundary of
# thresholds.yaml, a party axis or an evidence toggle applies only in the categories it names.
CASE_CATEGORIES: tuple[str, ...] = (
    "criminal", "civil", "service", "tax", "constitutional", "family", "motor_accident",
    "commercial", "consumer")
# Whose number it is, or what it measures, by kind of number; "unknown" where the text does not
# say (such a number crosses only boundaries scoped to "any" role).
NUMBER_ROLES: dict[str, tuple[str, ...]] = {
    "ages": ("accused", "victim", "witness", "employee", "party", "unknown"),
    "amounts": ("fine", "compensation", "dowry", "loan", "suit_value", "bribe", "cheque",
                "unknown"),
    "durations": ("sentence", "delay", "limitation", "employment", "marriage", "custody",
                  "unknown"),
}

"""The natural order of ids: C2 before C10, AILA_Q2 before AILA_Q10."""

from __future__ import annotations

import re


def natural_key(name: str) -> tuple:
    """Runs of digits compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))

"""JSON-lines files read line by line, a bad line named: the one reader of the case files, the
labels and the LLM's recordings."""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator


def objects(lines: Iterable[str],
            error: Callable[[int, str], Exception]) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every line that is not blank; a line that is not a JSON
    object raises ``error(number, why)``."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            found = json.loads(line)
        except json.JSONDecodeError as problem:
            raise error(number, f"not JSON ({problem.msg})") from None
        if not isinstance(found, dict):
            raise error(number, "not a JSON object")
        yield number, found

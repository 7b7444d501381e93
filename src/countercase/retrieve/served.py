"""The system served for each task: ``retrieve.system`` where it ranks the task, else the
pipeline ``full`` (a learned ranker of judgments serves no statutes)."""

from __future__ import annotations

from countercase.config import Params
from countercase.retrieve.registry import system

FALLBACK = "full"


def served_system(params: Params, task: str) -> str:
    """The name of the system ``countercase search`` serves for ``task`` by default."""
    name = params.retrieve.system
    return name if task in system(name).tasks else FALLBACK

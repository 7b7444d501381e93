"""One base class for every error a user can act on.

A :class:`CountercaseError` is bad input, a missing stage output, an unknown name: its message
names the input and says what to do, and the CLI shows it as one ``error:`` line with exit
status 2. Any other exception is a bug in COUNTERCASE, and the CLI says so (``countercase.cli``).
Subclasses keep a built-in base too (``ValueError``, ``FileNotFoundError``...), so callers that
catch those still do.
"""

from __future__ import annotations


class CountercaseError(Exception):
    """An error caused by the input or the state of the artefacts, not by a bug."""


class PartMissing(CountercaseError, ValueError):
    """A stage run in parts (countercase.dag.stages) found one of its parts missing or made of
    other input: the message names the part and the command that makes it."""

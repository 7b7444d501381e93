"""Work handed to a second process, where a stage's work is single-threaded (Lucene's searches).

A forked JVM does not survive, so the second process is spawned: it imports what it needs and
opens its own indexes. What it returns is the same as if it had run in this process; the
caller joins the results in a fixed order, so nothing depends on which process finished first.
"""

from __future__ import annotations

import logging
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the command line's and a child's


def _log_as_parent(level: int) -> None:
    logging.basicConfig(level=level, format=LOG_FORMAT)


class Apart:
    """``submit(fn, *args)`` runs ``fn(*args)`` in a spawned process when ``workers`` is 2, or
    at once in this process when it is 1; either way it returns a future, whose ``result()``
    is ``fn``'s value or raises its error. Leaving the block waits for the second process."""

    def __init__(self, workers: int) -> None:
        if workers not in (1, 2):
            raise ValueError(f"workers must be 1 or 2, not {workers}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Apart:
        if self.workers == 2:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                initializer=_log_as_parent, initargs=(logging.getLogger().getEffectiveLevel(),))
        return self

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        if self._pool is not None:
            return self._pool.submit(fn, *args)
        done: Future = Future()
        try:
            done.set_result(fn(*args))
        except Exception as error:  # noqa: BLE001 - handed to the caller by result(), as a pool does
            done.set_exception(error)
        return done

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

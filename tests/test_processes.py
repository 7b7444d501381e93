"""Apart: work in a spawned second process returns what it returns in this one."""

import logging
import os

import pytest

from countercase.runtime.processes import LOG_FORMAT, Apart


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _logging() -> tuple[int, list[str]]:
    root = logging.getLogger()
    return root.level, [h.formatter._fmt for h in root.handlers if h.formatter]


def _fails(name: str) -> None:
    raise ValueError(f"bad input {name}")


@pytest.mark.parametrize("workers", [1, 2])
def test_the_result_is_the_same_in_either_process(workers):
    with Apart(workers) as apart:
        pid, square = apart.submit(_pid_and_square, 7).result()
    assert square == 49
    assert (pid == os.getpid()) == (workers == 1)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_reaches_the_caller_with_its_message(workers):
    with Apart(workers) as apart:
        future = apart.submit(_fails, "C152")
        with pytest.raises(ValueError, match="C152"):
            future.result()


def test_more_than_two_workers_is_refused():
    with pytest.raises(ValueError, match="workers"):
        Apart(3)


def test_the_second_process_logs_as_the_first(monkeypatch):
    monkeypatch.setattr(logging.getLogger(), "level", logging.WARNING)
    with Apart(2) as apart:
        level, formats = apart.submit(_logging).result()
    assert level == logging.WARNING and formats == [LOG_FORMAT]

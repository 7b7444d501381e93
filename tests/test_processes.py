"""Apart: work in a spawned second process returns what it returns in this one."""

import os

import pytest

from countercase.processes import Apart


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


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

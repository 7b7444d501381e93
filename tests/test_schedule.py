"""The runner's schedule replayed on predicted seconds (countercase.dag.schedule)."""

import pytest

from countercase.dag.schedule import chains, simulate

# a -> b, and c beside them: the shape of embed -> tune beside train_ner
UP = {"a": set(), "b": {"a"}, "c": set()}
SECONDS = {"a": 10.0, "b": 5.0, "c": 10.0}


def test_one_job_takes_the_sum():
    assert simulate(["a", "b", "c"], UP, SECONDS, jobs=1) == pytest.approx(25.0)


def test_two_jobs_share_two_cores_at_the_beside_speed():
    # a and c side by side at 1/2 speed finish at 20 s; b then runs alone for 5 s
    assert simulate(["a", "b", "c"], UP, SECONDS, jobs=2, beside=2.0) == pytest.approx(25.0)
    # at 1/1.5 they finish at 15 s
    assert simulate(["a", "b", "c"], UP, SECONDS, jobs=2, beside=1.5) == pytest.approx(20.0)


def test_a_stage_that_runs_alone_waits_and_is_waited_for():
    # c runs alone: a first (the file's order), b and c cannot share
    alone = simulate(["a", "b", "c"], UP, SECONDS, jobs=2, alone=frozenset({"c"}), beside=1.5)
    assert alone == pytest.approx(25.0)


def test_the_longest_chain_bounds_any_number_of_jobs():
    found = chains(["a", "b", "c"], UP, SECONDS)
    assert found == {"a": 15.0, "b": 5.0, "c": 10.0}
    assert simulate(["a", "b", "c"], UP, SECONDS, jobs=3, beside=1.0) == pytest.approx(15.0)


def test_a_stage_waiting_on_one_outside_the_schedule_is_an_error():
    with pytest.raises(ValueError, match="outside the schedule"):
        simulate(["b"], {"b": {"a"}}, {"b": 1.0}, jobs=2)

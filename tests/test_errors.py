"""One base class for errors a user can act on: the CLI shows them as one ``error:`` line with
exit status 2; anything else is a bug, said to be one, with its traceback in a file (or on the
terminal with ``--debug``)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import countercase
from countercase.errors import CountercaseError


def test_every_error_class_of_the_package_shares_the_base():
    classes = []
    for info in pkgutil.walk_packages(countercase.__path__, "countercase."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        # Exceptions, that is errors; a BaseException that is no Exception is a control-flow
        # signal that no caller may catch by accident (countercase.ingest.workers.CpuLimitReached)
        classes += [c for _, c in inspect.getmembers(module, inspect.isclass)
                    if issubclass(c, Exception) and c.__module__ == info.name]
    assert len(classes) >= 20
    assert [c.__name__ for c in classes if not issubclass(c, CountercaseError)] == []


def test_a_user_error_is_one_line_with_status_2(run_cli, tmp_path):
    code, _, err = run_cli("search", "the appellant", "--task", "lawsuits")
    assert code == 2 and err.strip() == "error: unknown task 'lawsuits': use precedents or statutes"
    code, _, err = run_cli("search", "facts", "--system", "full", "--chunks",
                           str(tmp_path / "chunks.parquet"))
    assert code == 2 and err.startswith("error: ") and str(tmp_path) in err  # a missing index


@pytest.fixture
def bug(monkeypatch):
    """A command whose code has a bug (a ValueError raised where no user input is wrong)."""
    import countercase.cli.retrieval as command

    def broken(path):
        raise ValueError("invalid literal for int() with base 10: 'x'")
    monkeypatch.setattr(command, "read_queries", broken)  # the name the latency command calls


def test_a_bug_says_so_and_keeps_its_traceback(run_cli, bug, tmp_path, monkeypatch):
    from countercase.cli import base

    monkeypatch.setattr(base, "CRASH_LOG", tmp_path / "last-error.log")
    code, _, err = run_cli("latency", "--queries", "params.yaml")
    assert code == 1 and "a bug in countercase" in err and "ValueError" in err
    assert "Traceback" not in err and str(tmp_path / "last-error.log") in err
    assert "raise ValueError" in (tmp_path / "last-error.log").read_text()


def test_debug_shows_the_traceback(run_cli, bug):
    with pytest.raises(ValueError, match="invalid literal"):
        run_cli("--debug", "latency", "--queries", "params.yaml")


def test_a_pilot_and_a_rerun_of_v2_together_are_refused_by_name(run_cli):
    code, _, err = run_cli("validity-v2", "--pilot", "2", "--rerun")
    assert code == 2 and "give --pilot or --rerun, not both" in err
    assert "Traceback" not in err


def test_the_preregistered_v2_record_is_never_written_over(run_cli, tmp_path):
    record = tmp_path / "validity_v2.json"
    record.write_text('{"primary": "bm25"}', encoding="utf-8")
    code, _, err = run_cli("validity-v2", "--metrics", str(record))
    assert code == 2 and "already holds the preregistered run's record" in err
    assert str(record) in err and "Traceback" not in err
    assert record.read_text(encoding="utf-8") == '{"primary": "bm25"}'

"""Runs: per query, documents ranked with a score; the systems that make them (``topics ->
run``); TREC run files."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from countercase.errors import CountercaseError

Run = dict[str, list[tuple[str, float]]]  # qid -> ranked (doc id, score)
System = Callable[[Mapping[str, str]], Run]  # topics (qid -> text) -> run


def ranked(doc_ids: list[str]) -> list[tuple[str, float]]:
    """A ranking with scores that fall with the rank: trec_eval orders by score, and the scores
    of pooled hits differ in kind between systems."""
    return [(doc, float(len(doc_ids) - i)) for i, doc in enumerate(doc_ids)]


def write_trec_run(run: Run, path: Path, tag: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for qid, ranking in run.items():
            for rank, (doc, score) in enumerate(ranking, start=1):
                handle.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")


class RunFileError(CountercaseError, ValueError):
    """A run file that is not ``qid Q0 doc rank score tag`` lines."""


def read_trec_run(path: Path) -> Run:
    """A run file's rankings, in the file's order per query."""
    run: Run = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise RunFileError(f"{path}:{number}: expected 'qid Q0 doc rank score tag'")
        run.setdefault(parts[0], []).append((parts[2], float(parts[4])))
    return run

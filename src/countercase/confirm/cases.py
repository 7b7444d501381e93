"""The confirmatory cases (``docs/preregistration/validity_v2.md``, section 8): the citation
collection's held-out judgments that no earlier validity run and no gold or hand-labelled file
used, whose cited precedents are in the corpus, in a seeded order."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from countercase.datasets.citations import read_citations
from countercase.datasets.ids import natural_key
from countercase.perturb.cases import cited_precedents, json_lines, split


def named_cases(folder: Path) -> set[str]:
    """Every ``case_id`` of a JSON line in a ``.jsonl`` file under ``folder``."""
    return {row["case_id"] for path in sorted(Path(folder).rglob("*.jsonl"))
            for row in json_lines(path, ()) if isinstance(row.get("case_id"), str)}


def draw(heldout: Mapping[str, Mapping[str, int]], used: Iterable[str], corpus: set[str],
         seed: int) -> tuple[list[str], dict[str, int]]:
    """The held-out judgments (``heldout``: qid -> its qrels) not in ``used`` that cite a
    judgment of ``corpus``, in a seeded shuffle of their natural order; how many were left out,
    by reason."""
    used = set(used)
    left_out: Counter = Counter()
    eligible = []
    for qid in sorted(heldout, key=natural_key):
        if qid in used:
            left_out["used by an earlier run or a labelled file"] += 1
        elif not any(grade > 0 and doc in corpus for doc, grade in heldout[qid].items()):
            left_out["cites no judgment of the corpus"] += 1
        else:
            eligible.append(qid)
    random.Random(seed).shuffle(eligible)
    return eligible, dict(sorted(left_out.items()))


def confirmatory_cases(citations: Path, groups: Path, gold: Path, corpus: set[str], seed: int,
                       used_splits: int) -> tuple[list[str], dict[str, int]]:
    """:func:`draw` over the held-out half of the citation collection at ``citations``: the
    first ``used_splits`` judgments of v1's seeded split of the citing judgments
    (:func:`countercase.perturb.cases.split` over ``groups``: its tuning and validity cases) and
    every case of a labelled file under ``gold`` (the legal audit's samples among them) left
    out."""
    collection = read_citations(citations)
    heldout = {q: collection.qrels.get(q, {}) for q in collection.qids("heldout")}
    earlier, _, _ = split(sorted(cited_precedents(groups)), seed, used_splits, 0)
    return draw(heldout, {*earlier, *named_cases(gold)}, corpus, seed)

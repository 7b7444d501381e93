"""Stage ``results``: the headline numbers the README and the paper report, computed once.

:func:`table` reads the pipeline's outputs (``metrics/``, ``params.yaml``, the AILA track's
best runs and the evaluate stage's per-query tables, or the copies the paper keeps in
``paper/inputs/`` where the pipeline has not run) and returns, per collection, the headline
systems of :mod:`countercase.report.headline` (MAP with its 95 % bootstrap interval, P@10, RR,
the Holm-corrected paired test against the served system, the smallest difference the queries
detect) after the track's best run, and the per-query differences the paper draws. ``countercase results`` writes it to :data:`RESULTS`; the
README's headline block and the paper's cells format that file: neither draws an interval or
runs a test of its own.

The counterfactual answer (the preregistered v3 test) is not in the table: its stage runs in the
opt-in pipeline, after this one, so a copy here would be the previous build's; the README and
the paper read the test's own summary (``metrics/validity_v3.json``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from countercase import layout as L
from countercase.config import load_params
from countercase.confirm.directional import power
from countercase.errors import CountercaseError
from countercase.report.headline import headline
from countercase.report.outputs import Outputs
from countercase.retrieve.served import served_system

RESULTS = Path("metrics/results.json")
# the confirmatory v2 run's expected sample and smallest effect (its preregistration's section 8,
# docs/preregistration/validity_v2.md), against which its power is stated
V2_EXPECTED_CASES, V2_SMALL_EFFECT = 64, 0.2
# each question a collection asks, in the order a reader meets them, and the task it ranks for
COLLECTIONS: dict[str, tuple[str, str]] = {
    "aila2019-task1": ("precedents", "precedents for a case description: AILA 2019 Task 1"),
    "citations": ("precedents", "precedents for a judgment's own text: citation collection, "
                  "held-out half"),
    "aila2019-task2": ("statutes", "statutes for a case description: AILA 2019 Task 2")}


# the per-query differences of AP the paper draws (its worked examples and per-query figure):
# (system, baseline) per collection
GAPS: dict[str, tuple[tuple[str, str], ...]] = {
    "aila2019-task1": (("ltr", "bm25_docs"), ("full", "bm25_docs"), ("full", "dense"),
                       ("full", "full_aila_tuned"))}


class ResultsError(CountercaseError):
    """An output the results table needs is missing; the message names it."""


def _plain(value: Any) -> Any:
    """A JSON value: NaN as null, numpy scalars as Python numbers."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value


def per_query(o: Outputs, collection: str) -> Path | None:
    """The per-query table of ``collection``: the evaluate stage's, else the copy the paper
    keeps (``paper/inputs/``; the copy is refreshed from it whenever the paper renders)."""
    return next(((o.root / made) if (o.root / made).is_file() else (o.root / kept)
                 for made, kept in L.PAPER_INPUTS.items()
                 if made.parent.name == collection and made.suffix == ".csv"), None)


def collection(o: Outputs, name: str, seed: int, served: str) -> dict[str, Any]:
    """One collection's headline rows, the track's best run first where the track scored it."""
    table = per_query(o, name)
    if table is None or not table.is_file():
        raise ResultsError(f"{table or name}: the per-query table is missing (stage "
                           "`evaluate` writes it)")
    track = (o.yaml(str(L.TRACK_RESULTS)) or {}).get(name.removeprefix("aila2019-")) \
        if name.startswith("aila2019-") else None
    scores = pd.read_csv(table)
    rows = headline(scores, name, served, seed, track)
    retrieval = (o.metric("retrieval.json") or {}).get(name, {})
    evaluation = (o.metric("evaluation.json") or {}).get(name, {})
    return {"question": COLLECTIONS[name][1],
            "n_test_queries": evaluation.get("n_test_queries"),
            "n_queries_scored": int(scores["qid"].nunique()),  # those with a judgment
            "without_copies": without_copies(
                scores, sorted(evaluation.get("queries_with_a_corpus_copy") or {}),
                [s for s in (served, "full") if s in set(scores["condition"])]),
            "served": served,
            "served_system": retrieval.get("served", {}).get("system", served),
            "track": ({"run": track["run"], **{m: track[m] for m in ("MAP", "P@10", "RR")}}
                      if track else None),
            "rows": [{key: _plain(value) for key, value in row.items()}
                     for row in rows.to_dict("records")],
            "per_query_gaps": gaps(scores, GAPS.get(name, ()))}


def gaps(scores: pd.DataFrame, pairs: tuple[tuple[str, str], ...]) -> dict[str, dict]:
    """``"system - baseline"``: each query's AP of the system minus the baseline's, in query
    order (pairs with a system the table lacks are left out)."""
    wide = scores.pivot(index="qid", columns="condition", values="MAP")
    return {f"{system} - {base}": {qid: round(float(gap), 6) for qid, gap in
                                   (wide[system] - wide[base]).items()}
            for system, base in pairs if system in wide and base in wide}


def without_copies(scores: pd.DataFrame, copied: list[str],
                   systems: list[str]) -> dict[str, Any] | None:
    """MAP of ``systems`` over the queries without a near-copy in the corpus (a precedent
    search may find the copy's own citations) beside their MAP over all; None where none has
    one."""
    if not copied:
        return None
    kept = scores[~scores["qid"].isin(copied)]
    mean = lambda table, system: round(float(table.loc[table["condition"] == system,
                                                       "MAP"].mean()), 6)
    return {"queries_left_out": copied, "n_queries": int(kept["qid"].nunique()),
            "MAP": {system: mean(kept, system) for system in systems},
            "MAP_all_queries": {system: mean(scores, system) for system in systems}}


def v2_power(o: Outputs) -> dict[str, Any] | None:
    """The confirmatory v2 run's power at its preregistered sample: against the small effect,
    and the effect it reaches 80 % at (None where its record is missing)."""
    v2 = o.metric("validity_v2.json")
    if not v2:
        return None
    alpha, n = v2["settings"]["alpha"], V2_EXPECTED_CASES
    return {"expected_cases": n, "alpha": alpha, "effect": V2_SMALL_EFFECT,
            "power": round(power(n, V2_SMALL_EFFECT, alpha), 4),
            "effect_at_80": next(d / 100 for d in range(1, 200)
                                 if power(n, d / 100, alpha) >= 0.8)}


def table(o: Outputs) -> dict[str, Any]:
    """The results table of the outputs under ``o.root``."""
    params = o.root / "params.yaml"
    if not params.is_file():
        raise ResultsError(f"{params} is missing")
    found = load_params(params)
    collections = {}
    for name, (task, _) in COLLECTIONS.items():
        collections[name] = collection(o, name, found.seed, served_system(found, task))
    return {"collections": collections, "validity_v2_power": v2_power(o)}


def write(root: Path, out: Path = RESULTS) -> Path:
    """The table of the outputs under ``root``, written to ``out`` (under ``root``)."""
    try:
        found = table(Outputs(root))
    except ValueError as error:  # a damaged output, named by its file
        raise ResultsError(str(error)) from None
    path = Path(root) / out
    path.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return path

"""Measures with ``ir_measures`` (trec_eval semantics): per query, and their means."""

from __future__ import annotations

import ir_measures
import pandas as pd
from ir_measures import AP, P, R, RR, Bpref, nDCG

from countercase.retrieve.runs import Run

# The track's measures first (MAP, P@10, BPREF, RR), then the ones the plan adds.
MEASURES = {"MAP": AP, "P@10": P @ 10, "BPREF": Bpref, "RR": RR, "nDCG@10": nDCG @ 10,
            "MRR@10": RR @ 10, "R@5": R @ 5, "R@10": R @ 10, "R@20": R @ 20}
_NAME_OF = {str(measure): name for name, measure in MEASURES.items()}


def per_query(qrels: dict[str, dict[str, int]], run: Run, qids: tuple[str, ...],
              measures: tuple[str, ...] | None = None) -> pd.DataFrame:
    """One row per query of ``qids`` and one column per measure (default: all of
    :data:`MEASURES`); a query the run does not answer scores 0 on every measure (trec_eval's
    ``-c``)."""
    names = list(measures or MEASURES)
    unknown = [m for m in names if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(unknown)}: use {', '.join(MEASURES)}")
    qrels = {q: qrels[q] for q in qids if q in qrels}
    scored = {q: {doc: score for doc, score in run.get(q, [])} for q in qrels}
    table = pd.DataFrame(0.0, index=pd.Index(list(qrels), name="qid"), columns=names)
    for metric in ir_measures.iter_calc([MEASURES[m] for m in names], qrels, scored):
        table.at[metric.query_id, _NAME_OF[str(metric.measure)]] = float(metric.value)
    return table


def aggregate(table: pd.DataFrame) -> dict[str, float]:
    return {name: round(float(table[name].mean()), 4) for name in table.columns}

"""Measures with ``ir_measures`` (trec_eval semantics) and TREC run files."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pandas as pd
from ir_measures import AP, P, R, RR, Bpref, nDCG

Run = dict[str, list[tuple[str, float]]]  # qid -> ranked (doc id, score)

# The track's measures first (MAP, P@10, BPREF, RR), then the ones the plan adds.
MEASURES = {"MAP": AP, "P@10": P @ 10, "BPREF": Bpref, "RR": RR, "nDCG@10": nDCG @ 10,
            "MRR@10": RR @ 10, "R@5": R @ 5, "R@10": R @ 10, "R@20": R @ 20}
_NAME_OF = {str(measure): name for name, measure in MEASURES.items()}


def per_query(qrels: dict[str, dict[str, int]], run: Run, qids: tuple[str, ...]) -> pd.DataFrame:
    """One row per query of ``qids`` and one column per measure; a query the run does not
    answer scores 0 on every measure (trec_eval's ``-c``)."""
    qrels = {q: qrels[q] for q in qids if q in qrels}
    scored = {q: {doc: score for doc, score in run.get(q, [])} for q in qrels}
    table = pd.DataFrame(0.0, index=pd.Index(list(qrels), name="qid"), columns=list(MEASURES))
    for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, scored):
        table.at[metric.query_id, _NAME_OF[str(metric.measure)]] = float(metric.value)
    return table


def aggregate(table: pd.DataFrame) -> dict[str, float]:
    return {name: round(float(table[name].mean()), 4) for name in table.columns}


def write_trec_run(run: Run, path: Path, tag: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for qid, ranking in run.items():
            for rank, (doc, score) in enumerate(ranking, start=1):
                handle.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")

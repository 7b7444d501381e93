"""The headline table of each collection: a few systems, each with its MAP and bootstrap 95 %
interval, P@10 and RR, and its paired test against the served system; the track's best run as a
row of its own (its per-query scores are not published: it has no interval and no test).

The rows are the reader's questions: what plain BM25 gives, what is served and what it replaced,
the first stage, the learned rankers and the preregistered tuned system. The full condition
tables stay in the paper's appendix. Each paired test is a two-sided randomisation test on
average precision, Holm-corrected over the table's comparisons; beside it, the smallest MAP
difference the collection's queries detect at 80 % power (two-sided, α 0.05, the normal
approximation of a paired test on the observed spread of the differences).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from countercase.confirm.analysis import bootstrap
from countercase.experiment.families import randomisation
from countercase.experiment.significance import holm

# collection -> (system, what the row answers), in the table's order; a system a collection
# did not score is left out
ROWS: dict[str, tuple[tuple[str, str], ...]] = {
    "aila2019-task1": (
        ("bm25_docs", "plain BM25 over whole judgments"),
        ("bm25", "BM25 over passages, max-pooled"),
        ("served", "the served system (its route for descriptions)"),
        ("ltr", "the learned ranker, masked"),
        ("ltr_unmasked", "the learned ranker trained unmasked (the trees')"),
        ("full", "the pipeline served before the learned ranker"),
        ("no_rerank", "the pipeline's first stage"),
        ("full_docs_prior", "the preregistered tuned system")),
    "aila2019-task2": (
        ("bm25_docs", "plain BM25 over whole statutes"),
        ("bm25", "BM25 over statute passages"),
        ("full", "the pipeline (served for statutes)"),
        ("no_rerank", "the pipeline's first stage"),
        ("precedent_bridge", "the statute bridge alone"),
        ("ltr_bridge", "the bridge over the learned ranker")),
    "citations": (
        ("bm25_docs", "plain BM25 over whole judgments"),
        ("bm25", "BM25 over passages, max-pooled"),
        ("served", "the served system (its route for judgments)"),
        ("ltr", "the learned ranker, masked"),
        ("ltr_unmasked", "the learned ranker trained unmasked"),
        ("full", "the pipeline served before the learned ranker"),
        ("no_rerank", "the pipeline's first stage"),
        ("full_docs_prior", "the preregistered tuned system")),
}
MEASURES = ("MAP", "P@10", "RR")
RESAMPLES = 10_000


def detectable(differences: np.ndarray, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest mean paired difference a two-sided test at ``alpha`` detects with
    ``power`` over these queries: (z_{1-α/2} + z_power) · sd / √n."""
    values = np.asarray(differences, dtype=float)
    if len(values) < 2 or not values.std(ddof=1) > 0:  # no spread: it ranks as the served does
        return math.nan
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return float(z * values.std(ddof=1) / math.sqrt(len(values)))


def headline(per_query: pd.DataFrame, collection: str, served: str, seed: int,
             track: dict | None = None, resamples: int = RESAMPLES) -> pd.DataFrame:
    """The headline rows of ``collection`` from its per-query table (``condition``, ``qid``
    and a column per measure): one row a system (``served`` among them), and ``track``'s best
    run first when given (its MAP, P@10 and RR)."""
    scored = set(per_query["condition"])
    if served not in scored:
        raise ValueError(f"{collection}: the served system {served!r} was not scored")
    wanted = [(s, why) for s, why in ROWS[collection] if s in scored]
    if served not in {s for s, _ in wanted}:
        wanted.insert(0, (served, "the served system"))
    table = {name: frame.set_index("qid").sort_index()
             for name, frame in per_query.groupby("condition") if name in dict(wanted)}
    base = table[served]["MAP"].to_numpy(dtype=float)
    tests = {name: randomisation(table[name]["MAP"].to_numpy(dtype=float), base, seed)
             for name, _ in wanted if name != served}
    adjusted = holm(tests)
    rows = []
    if track is not None:
        rows.append({"system": f"track's best ({track['run']})", "role": "FIRE 2019 AILA",
                     **{m: float(track[m]) for m in MEASURES}, "MAP_ci": None,
                     "vs_served": None, "p_holm": None, "detectable": None})
    for name, role in wanted:
        frame = table[name]
        maps = frame["MAP"].to_numpy(dtype=float)
        rows.append({"system": name, "role": role,
                     **{m: float(frame[m].mean()) for m in MEASURES},
                     "MAP_ci": bootstrap(maps, resamples, seed, (0.95,))["ci95"],
                     "vs_served": None if name == served else float((maps - base).mean()),
                     "p_holm": adjusted.get(name),
                     "detectable": None if name == served else detectable(maps - base)})
    return pd.DataFrame(rows)

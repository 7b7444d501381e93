"""The LLM check measured as a classifier (issue 41): does its score tell a legally meaningful
counterfactual from one that is not?

The rule was written before any label or score was read (``data/gold/llm_calibration.md``):
a seeded sample of the check's candidates that no legal-audit sample holds, its cases cut in a
tuning and a test half; labels under the legal audit's rules (``meaningful`` is the positive
class; ``not`` and ``unclear`` are not); the score :data:`SCORE`, whose threshold the check's
acceptance uses; the threshold of the highest Youden's J on the tuning half; on the test half
the AUC with a bootstrap interval over cases, precision and recall. The check is retired as a
filter when the interval's lower bound is below ``floor``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from countercase.datasets.ids import natural_key
from countercase.experiment.agreement import auc
from countercase.perturb.audit import SHOWN, read_audit_labels, write_jsonl

SCORE = "min(p_plausible, p_operative)"  # accepted iff it reaches the threshold
SPLITS = ("tune", "test")
MIN_PER_CLASS = 30  # items of each class in each half (issue 41)


def calibration_sample(pool: list[dict[str, Any]], labelled: set[tuple[str, str]], n: int,
                       seed: int) -> list[dict[str, Any]]:
    """``n`` of ``pool``'s items (rows of :func:`countercase.perturb.audit.root_pool`) that no
    audit sample labelled (``labelled``: case, description), by seed, each with its half: the
    cases are cut in two by a seeded shuffle, so a case's items share a half."""
    items = {r["item"]: r for r in pool if (r["case_id"], r["description"]) not in labelled}
    ordered = [items[i] for i in sorted(items)]
    cases = sorted({r["case_id"] for r in ordered}, key=natural_key)
    random.Random(seed).shuffle(cases)
    tune = set(cases[:len(cases) // 2])
    drawn = random.Random(seed + 2).sample(ordered, min(n, len(ordered)))
    return [{**{k: r[k] for k in SHOWN}, "split": "tune" if r["case_id"] in tune else "test"}
            for r in drawn]


def youden_threshold(truth: np.ndarray, score: np.ndarray) -> float:
    """The observed score whose threshold (at or above: yes) maximises TPR - FPR; of equal
    ones the highest (the stricter filter)."""
    def j(t: float) -> float:
        said = score >= t
        return float(said[truth].mean() - said[~truth].mean())
    return max(sorted(set(score.tolist())), key=lambda t: (round(j(t), 12), t))


def at_threshold(truth: np.ndarray, score: np.ndarray, threshold: float) -> dict[str, Any]:
    said = score >= threshold
    tp, fp = int((said & truth).sum()), int((said & ~truth).sum())
    fn = int((~said & truth).sum())
    return {"threshold": round(float(threshold), 6),
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "accepted_share": round(float(said.mean()), 4)}


def auc_interval(rows: pd.DataFrame, seed: int, resamples: int = 2000) -> list[float] | None:
    """A 95 % bootstrap interval of the AUC, resampling cases (their items together)."""
    groups = [g for _, g in rows.groupby("case_id", sort=True)]
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(resamples):
        part = pd.concat([groups[i] for i in rng.integers(0, len(groups), len(groups))])
        value = auc(part["truth"].to_numpy(), part["score"].to_numpy(float))
        if value is not None:
            found.append(value)
    if not found:
        return None
    return [round(float(np.percentile(found, 2.5)), 4), round(float(np.percentile(found, 97.5)), 4)]


def calibrate(checked: pd.DataFrame, sample: list[dict[str, Any]],
              labels: dict[str, dict[str, Any]], seed: int, floor: float) -> dict[str, Any]:
    """``llm_check``'s ``calibration``: ``checked`` (the check's verdicts), ``sample`` (with
    its halves) and ``labels`` (item -> label row of the legal audit's rules)."""
    rows = pd.DataFrame([{"item": s["item"], "case_id": s["case_id"],
                          "description": s["description"], "fact_type": s["fact_type"],
                          "split": s["split"], "label": labels[s["item"]]["label"]}
                         for s in sample if s["item"] in labels])
    if rows.empty:
        return {"n_labelled": 0}
    rows = rows.merge(checked.drop_duplicates(["case_id", "description"]),
                      on=["case_id", "description"], how="inner", suffixes=("", "_check"))
    rows["truth"] = rows["label"] == "meaningful"
    rows["score"] = rows[["p_plausible", "p_operative"]].min(axis=1)
    halves = {s: rows[rows["split"] == s] for s in SPLITS}
    counts = {s: {"meaningful": int(h["truth"].sum()), "not_or_unclear": int((~h["truth"]).sum())}
              for s, h in halves.items()}
    out: dict[str, Any] = {
        "rules": "data/gold/llm_calibration.md", "score": SCORE, "floor": floor,
        "n_sample": len(sample), "n_labelled": int(len(rows)), "counts": counts,
        "enough_per_class": all(min(c.values()) >= MIN_PER_CLASS for c in counts.values())}
    tune, test = halves["tune"], halves["test"]
    if tune["truth"].nunique() < 2 or test["truth"].nunique() < 2:
        return {**out, "retired": True, "why": "a half lacks a class"}
    threshold = youden_threshold(tune["truth"].to_numpy(), tune["score"].to_numpy(float))
    interval = auc_interval(test, seed)
    out["tune"] = {"auc": auc(tune["truth"].to_numpy(), tune["score"].to_numpy(float)),
                   **at_threshold(tune["truth"].to_numpy(), tune["score"].to_numpy(float),
                                  threshold)}
    out["test"] = {"auc": auc(test["truth"].to_numpy(), test["score"].to_numpy(float)),
                   "auc_ci95": interval,
                   **at_threshold(test["truth"].to_numpy(), test["score"].to_numpy(float),
                                  threshold),
                   "at_fixed_threshold": at_threshold(test["truth"].to_numpy(),
                                                      test["score"].to_numpy(float), 0.5),
                   "meaningful_share": round(float(test["truth"].mean()), 4)}
    # each question's own score on the test half: reported, not chosen on
    out["test_auc_by_question"] = {q: auc(test["truth"].to_numpy(), test[f"p_{q}"].to_numpy(float))
                                   for q in ("plausible", "operative")}
    out["retired"] = interval is None or interval[0] < floor
    return out


def labelled_edges(audit: Path) -> set[tuple[str, str]]:
    """Every (case, change) a legal-audit sample holds, of any engine."""
    return {(row["case_id"], row["description"]) for path in sorted(audit.glob("sample_*.jsonl"))
            for row in map(json.loads, path.open(encoding="utf-8"))}


def write_sample(pool: list[dict[str, Any]], audit: Path, folder: Path, n: int,
                 seed: int) -> list[dict[str, Any]]:
    """``sample.jsonl`` (with the halves) and ``to_label.jsonl`` (without, in item order) of
    ``folder``; returns the sample."""
    sample = calibration_sample(pool, labelled_edges(audit), n, seed)
    write_jsonl(folder / "sample.jsonl", sample)
    write_jsonl(folder / "to_label.jsonl", sorted(({k: r[k] for k in SHOWN} for r in sample),
                                                  key=lambda r: r["item"]))
    return sample


def read_calibration(folder: Path) -> tuple[list[dict[str, Any]], str, dict[str, dict[str, Any]]]:
    """(sample, who labelled, item -> label) of ``folder``; an empty sample where it has none
    or no labels yet."""
    sample_path, labels_path = folder / "sample.jsonl", folder / "labels_A.jsonl"
    if not sample_path.exists() or not labels_path.exists():
        return [], "", {}
    sample = [json.loads(line) for line in sample_path.open(encoding="utf-8")]
    who, labels = read_audit_labels(labels_path)
    return sample, who, labels

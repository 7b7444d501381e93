"""The LLM check measured as a classifier (data/gold/llm_calibration.md): the sample apart from
the audit and cut by case, the tuned threshold, the test's interval and the retirement rule."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from countercase import layout
from countercase.perturb.audit import item_id
from countercase.perturb.calibration import (MIN_PER_CLASS, at_threshold, calibrate,
                                             calibration_sample, labelled_edges,
                                             youden_threshold)
from test_legal_audit import _pool


def test_the_sample_leaves_out_audited_edges_and_keeps_a_case_in_one_half():
    pool = _pool("calibration")
    audited = {(r["case_id"], r["description"]) for r in pool[:40]}
    sample = calibration_sample(pool, audited, 100, seed=5)
    assert len(sample) == 100 and len({r["item"] for r in sample}) == 100
    assert not {(r["case_id"], r["description"]) for r in sample} & audited
    halves = {}
    for r in sample:
        assert halves.setdefault(r["case_id"], r["split"]) == r["split"]
    assert set(halves.values()) == {"tune", "test"}
    assert calibration_sample(pool, audited, 100, seed=5) == sample
    assert calibration_sample(pool, audited, 100, seed=6) != sample


def test_youdens_threshold_is_the_best_cut_and_the_stricter_of_equals():
    truth = np.array([True, True, True, False, False, False])
    assert youden_threshold(truth, np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])) == 0.7
    # 0.5 and 0.4 separate equally well: the higher one is kept
    assert youden_threshold(np.array([True, False]), np.array([0.5, 0.4])) == 0.5
    found = at_threshold(truth, np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.1]), 0.5)
    assert found["precision"] == round(2 / 3, 4) and found["recall"] == round(2 / 3, 4)


def _rows(n_cases: int, informative: bool) -> tuple[pd.DataFrame, list[dict], dict]:
    rng = np.random.default_rng(1)
    checked, sample, labels = [], [], {}
    for case in range(n_cases):
        for j in range(4):
            meaningful = bool((case + j) % 2)
            score = (0.7 if meaningful else 0.3) + rng.normal(0, 0.05) if informative \
                else rng.uniform()
            description = f"change {j}"
            item = item_id(f"C{case}", description, "calibration")
            checked.append({"case_id": f"C{case}", "description": description,
                            "p_plausible": 0.99, "p_operative": score})
            sample.append({"item": item, "case_id": f"C{case}", "description": description,
                           "fact_type": "section", "split": "tune" if case % 2 else "test"})
            labels[item] = {"label": "meaningful" if meaningful else "not"}
    return pd.DataFrame(checked), sample, labels


def test_a_separating_score_is_kept_and_a_random_one_retired(monkeypatch):
    from functools import partial

    from countercase.perturb import calibration

    # the rule's 2,000 resamples are the stage's; 300 decide these clear cases as well
    monkeypatch.setattr(calibration, "auc_interval",
                        partial(calibration.auc_interval, resamples=300))
    kept = calibrate(*_rows(40, informative=True), seed=3, floor=0.6)
    assert kept["test"]["auc"] == 1.0 and kept["test"]["auc_ci95"][0] >= 0.6
    assert not kept["retired"] and kept["enough_per_class"]
    assert 0.3 < kept["test"]["threshold"] <= 0.7  # chosen on the tuning half
    retired = calibrate(*_rows(40, informative=False), seed=3, floor=0.6)
    assert retired["retired"] and retired["test"]["auc_ci95"][0] < 0.6
    small = calibrate(*_rows(20, informative=True), seed=3, floor=0.6)
    assert small["counts"]["test"]["not_or_unclear"] < MIN_PER_CLASS
    assert not small["enough_per_class"]


def test_the_committed_calibration_labels_cover_the_sample_and_avoid_the_audit():
    folder = layout.LLM_CALIBRATION
    sample = [json.loads(line) for line in (folder / "sample.jsonl").open(encoding="utf-8")]
    lines = (folder / "labels_A.jsonl").read_text(encoding="utf-8").splitlines()
    assert "who" in json.loads(lines[0])
    assert {json.loads(line)["item"] for line in lines[1:]} == {r["item"] for r in sample}
    assert not {(r["case_id"], r["description"]) for r in sample} & labelled_edges(
        layout.LEGAL_AUDIT)

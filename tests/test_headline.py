"""The headline tables: each row's MAP, its bootstrap interval and its paired test against the
served system, from a per-query table cut from the evaluate stage's Task 1 output; the smallest
detectable difference by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from countercase.experiment.families import randomisation
from countercase.config import Params
from countercase.report.headline import ROWS, detectable, headline
from countercase.retrieve.served import served_system

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def task1() -> pd.DataFrame:
    return pd.read_csv(ROOT / "paper/inputs/task1_per_query.csv")


def test_each_row_is_its_systems_mean_and_its_test_against_the_served(task1):
    track = yaml.safe_load((ROOT / "paper/aila2019_track.yaml").read_text())["task1"]
    table = headline(task1, "aila2019-task1", "ltr", 7, track, resamples=2000)
    assert table.iloc[0]["MAP"] == track["MAP"] and table.iloc[0]["MAP_ci"] is None
    rows = table.set_index("system")
    assert list(rows.index[1:]) == [s for s, _ in ROWS["aila2019-task1"]]
    for name in ("bm25_docs", "full"):
        ap = task1[task1.condition == name].set_index("qid").sort_index()["MAP"]
        served = task1[task1.condition == "ltr"].set_index("qid").sort_index()["MAP"]
        assert rows.at[name, "MAP"] == pytest.approx(ap.mean())
        low, high = rows.at[name, "MAP_ci"]
        assert low < ap.mean() < high
        assert rows.at[name, "vs_served"] == pytest.approx((ap - served).mean())
        raw = randomisation(ap.to_numpy(), served.to_numpy(), 7)
        assert raw <= rows.at[name, "p_holm"] <= 1  # Holm never lowers a p
    assert math.isnan(rows.at["ltr", "p_holm"]) or rows.at["ltr", "p_holm"] is None


def test_the_detectable_difference_by_hand_and_the_served_system_per_task():
    diff = np.array([0.1, -0.05, 0.2, 0.0, 0.05])
    by_hand = (1.959964 + 0.841621) * diff.std(ddof=1) / math.sqrt(5)
    assert detectable(diff) == pytest.approx(by_hand, rel=1e-5)
    params = Params()
    params = params.model_copy(update={"retrieve": params.retrieve.model_copy(
        update={"system": "ltr"})})
    assert [served_system(params, t) for t in ("precedents", "statutes")] == ["ltr", "full"]


def test_an_unscored_served_system_is_named(task1):
    with pytest.raises(ValueError, match="served system 'nothing'"):
        headline(task1, "aila2019-task1", "nothing", 7)

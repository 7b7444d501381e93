"""The serving rule (configs/serving_rule.yaml, issue 58): per kind of query, the candidate of
the highest tuning MAP that beats chunk BM25 beyond noise, else chunk BM25; and the served
system routing each query by its kind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from countercase.ltr.serving import decide, decide_kind, lower_bound, read_rule

ROOT = Path(__file__).resolve().parents[1]

RULE = read_rule(ROOT / "configs/serving_rule.yaml")
QIDS = [f"Q{i}" for i in range(1, 41)]


def _ap(values) -> pd.Series:
    return pd.Series(values, index=QIDS[:len(values)], dtype=float)


def test_a_candidate_serves_only_where_it_beats_the_baseline_beyond_noise():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.0, 0.4, 40)
    scores = {"bm25": _ap(base), "ltr": _ap(base + 0.05),  # better on every query
              "full": _ap(base + np.tile([0.2, -0.19], 20)),  # ahead on average, by noise
              "ltr_no_facts": _ap(base + 0.02)}
    found = decide_kind(scores, RULE, seed=1)
    assert found["system"] == "ltr"  # the highest MAP of the two beyond noise
    assert found["candidates"]["ltr_no_facts"]["lower_bound"] > 0
    assert found["candidates"]["full"]["lower_bound"] < 0
    assert found["candidates"]["bm25"]["lower_bound"] is None
    # no candidate beyond noise: the baseline serves
    assert decide_kind({"bm25": _ap(base), "full": scores["full"]}, RULE, 1)["system"] == "bm25"


def test_a_tie_goes_to_the_earlier_candidate_and_a_missing_query_scores_zero():
    base = _ap([0.1] * 20)
    found = decide_kind({"bm25": base, "ltr_unmasked": _ap([0.3] * 20),
                         "ltr": _ap([0.3] * 20)}, RULE, 0)
    assert found["system"] == "ltr"  # listed before ltr_unmasked in the rule
    short = decide_kind({"bm25": base, "ltr": _ap([0.3] * 10)}, RULE, 0)
    assert short["candidates"]["ltr"]["MAP"] == 0.15


def test_the_choice_routes_each_kind_and_the_bound_is_seeded():
    base = _ap([0.1, 0.2, 0.0, 0.3] * 5)
    scores = {"description": {"bm25": base, "full": base},
              "judgment": {"bm25": base, "ltr": base + 0.1}}
    found = decide(scores, RULE, 0)
    assert found["route"] == {"description": "bm25", "judgment": "ltr"}
    # each kind's order: what beat the baseline, best first, then the baseline
    assert found["order"] == {"description": ["bm25"], "judgment": ["ltr", "bm25"]}
    diff = np.array([0.1, -0.05, 0.2, 0.0])
    assert lower_bound(diff, 1000, 3, 0.025) == lower_bound(diff, 1000, 3, 0.025)


def test_the_route_ranks_each_kind_by_its_own_system_and_keeps_their_runs_apart(
        indexed_corpus):
    from countercase.config import RetrieveParams
    from countercase.datasets.limits import Topics
    from countercase.retrieve.choices import Choices
    from countercase.retrieve.compose import Composer
    from countercase.retrieve.registry import BY_NAME, CORPUS_SUPPLIES

    paths, _, _ = indexed_corpus
    order = {"description": ["bm25"], "judgment": ["bm25_docs", "bm25"]}
    composer = Composer("precedents", paths, RetrieveParams(), 10, 10,
                        Choices(values={"serving.order": order}))
    texts = {"q": "the accused was convicted of murder under section 302 and sentenced"}
    served = composer.system("served")
    as_description = served(Topics(texts, kind="description"))
    as_judgment = served(Topics(texts, kind="judgment"))  # the same text, the other route
    assert as_description == composer.system("bm25")(Topics(texts, kind="description"))
    assert as_judgment == composer.system("bm25_docs")(Topics(texts, kind="judgment"))
    assert as_description != as_judgment
    # a collection that lacks what a route's system needs gets the next of its kind's order
    # that it can run, else the fallback
    chosen = Choices(values={"serving.order": {
        "description": ["bm25"], "judgment": ["ltr_applicability", "ltr_text", "bm25"]}})
    spec = BY_NAME["served"]
    assert spec.route(CORPUS_SUPPLIES, chosen)["judgment"] == "ltr_applicability"
    assert spec.route(frozenset(), chosen) == {"description": "bm25", "judgment": "ltr_text"}
    assert spec.route(frozenset(), chosen, lambda name: name != "ltr_text") == {
        "description": "bm25", "judgment": "bm25"}


def test_a_serving_rule_without_its_keys_is_named(tmp_path):
    from countercase.config import ConfigError
    import pytest

    bad = tmp_path / "rule.yaml"
    bad.write_text("baseline: bm25\n")
    with pytest.raises(ConfigError, match=r"rule.yaml: the serving rule lacks candidates"):
        read_rule(bad)
    with pytest.raises(ConfigError, match=r"cannot read the serving rule"):
        read_rule(tmp_path / "missing.yaml")

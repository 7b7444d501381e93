"""The tune_ft stage: the fine-tuned encoder's fusion weight, chosen on dev queries, on the small
real corpus of ``indexed_corpus`` (its packaged embeddings standing in for the fine-tuned ones,
so both encoders must score alike), and the rule that names what the choice makes of it."""

from __future__ import annotations

import pytest

from conftest import INDEXED_JUDGMENTS, ROOT
from countercase.config import load_params
from countercase.datasets import Dataset
from countercase.config import Params
from countercase.experiment.choice import TIE_MARGIN, best
from countercase.evaluate.tuning_ft import choice_ft, tune_ft
from countercase.retrieve.choices import Choices

CHOICE = ("tuned_system: full_docs\nprecedents:\n  docs: {k1: 1.2, b: 0.75}\n"
          "  docs_fusion: {weight: 1.0}\n")


@pytest.fixture(scope="module")
def known_items(aila_files) -> Dataset:
    """Six judgments searched for by a passage from their middle (known-item queries)."""
    texts = aila_files.casedocs(INDEXED_JUDGMENTS[:6])
    queries = {f"K{d}": text[len(text) // 2:len(text) // 2 + 1500] for d, text in texts.items()}
    return Dataset("known/dev", "known", "precedents", queries,
                   {f"K{d}": {d: 1} for d in texts})


def test_an_encoder_scores_alike_under_either_name_and_the_rule_picks_the_weight(
        indexed_corpus, known_items, tmp_path):
    paths, _, _ = indexed_corpus
    choice = tmp_path / "choice.yaml"
    choice.write_text(CHOICE, encoding="utf-8")
    report = tune_ft(known_items, load_params(ROOT / "params.yaml"), paths, paths.dense_dir,
                     Choices({"tuning": choice}), ())
    assert [row["weight"] for row in report["grid"]] == list(Params().tune.dense_weights)
    assert all(row["fine_tuned_MAP"] == row["packaged_MAP"] for row in report["grid"])
    assert report["weight"] == best(report["grid"], key="fine_tuned_MAP")["weight"]
    assert report["dev_queries"] == 6 and report["tuned_system"] == "full_docs"
    assert set(report["tuned_MAP"]) == ({"configured", "fine_tuned"} if report["weight"] > 0
                                        else {"configured"})
    assert all(0 < value <= 1 for value in report["tuned_MAP"].values())
    picked = choice_ft(report, known_items)
    assert picked["weight"] == report["weight"] and picked["tuned_on"] == "known/dev (6 queries)"


def _report(weight: float, configured: float, fine_tuned: float | None) -> dict:
    return {"grid": [{"weight": weight, "fine_tuned_MAP": 0.2, "packaged_MAP": 0.1}],
            "weight": weight, "tuned_system": "full_docs_prior",
            "tuned_MAP": {"configured": configured,
                          **({} if fine_tuned is None else {"fine_tuned": fine_tuned})}}


def test_the_tuned_system_takes_the_encoder_only_above_the_margin(known_items):
    taken = choice_ft(_report(0.5, 0.14, 0.14 + 2 * TIE_MARGIN), known_items)
    assert taken["adopt"] and taken["tuned_system_ft"] == "tuned_ft"
    assert taken["dev_MAP"] == {"full_ft": 0.2, "full_docs_prior": 0.14,
                                "tuned_ft": 0.14 + 2 * TIE_MARGIN}
    within = choice_ft(_report(0.5, 0.14, 0.14 + TIE_MARGIN / 2), known_items)
    assert not within["adopt"] and within["tuned_system_ft"] == "full_docs_prior"
    unweighted = choice_ft(_report(0.0, 0.14, None), known_items)
    assert not unweighted["adopt"] and "tuned_ft" not in unweighted["dev_MAP"]


def test_tune_ft_names_a_missing_split_and_one_without_tuning_queries(tmp_path, run_cli):
    (tmp_path / "dense_ft/precedents").mkdir(parents=True)
    (tmp_path / "citations").mkdir()
    args = ["tune-ft", "--citations", str(tmp_path / "citations"),
            "--ft-dense", str(tmp_path / "dense_ft"), "--split", str(tmp_path / "split.json")]
    code, _, err = run_cli(*args)
    assert code != 0 and "cannot read the dev queries from" in err and "split.json" in err
    assert "Traceback" not in err
    (tmp_path / "split.json").write_text('{"train": []}', encoding="utf-8")
    code, _, err = run_cli(*args)
    assert code != 0 and "train_biencoder" in err

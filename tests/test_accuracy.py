"""Tests for the metadata accuracy harness, run on the hand-labelled gold file plus small predictions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from countercase.extract.accuracy import (
    GOLD_KEYS,
    MISSING_LABEL,
    NULL_LABEL,
    load_gold,
    metadata_accuracy,
    surname_key,
)

ROOT = Path(__file__).resolve().parents[1]
GOLD_DIR = ROOT / "data" / "gold"
GOLD_A = GOLD_DIR / "metadata_gold_a.jsonl"
SAMPLE = GOLD_DIR / "sample_aila.txt"

GOLD_A_IDS = {
    "C200", "C469", "C1386", "C2463", "C2578", "C723", "C1004", "C1017", "C1345", "C2670",
    "C886", "C1068", "C1396", "C2154", "C2276", "C2550", "C108", "C240", "C1776", "C2076",
}


@pytest.fixture(scope="module")
def gold() -> dict[str, dict]:
    return load_gold(GOLD_A)


def as_prediction(row: dict) -> dict:
    """A perfect prediction for a gold row, in the project's metadata-record field names."""
    return {
        "year": row["year"],
        "month": row["month"],
        "date": row["date"],
        "bench_size": row["bench_size"],
        "judge_names": [f"X. {name}" for name in row["judges"]],
        "outcome_label": row["outcome"],
        "act_sections": list(row["act_sections"]),
        "citation_string": row["citation_string"],
        "petitioner": row["petitioner"],
        "respondent": row["respondent"],
    }


def subset(gold: dict, *ids: str) -> dict:
    return {doc_id: gold[doc_id] for doc_id in ids}


def gold_row(doc_id: str, **overrides) -> dict:
    row = {
        "doc_id": doc_id, "year": 1957, "month": 7, "date": "1957-07-10", "bench_size": None,
        "judges": ["Sinha"], "outcome": "Dismissed", "act_sections": ["IPC-302"],
        "citation_string": None, "petitioner": "A", "respondent": "B", "notes": "",
    }
    row.update(overrides)
    return row


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                            for line in lines), encoding="utf-8")
    return path


def assert_keys_sorted(value) -> None:
    if isinstance(value, dict):
        assert list(value) == sorted(value)
        for item in value.values():
            assert_keys_sorted(item)
    elif isinstance(value, list):
        for item in value:
            assert_keys_sorted(item)


# --- the gold file itself --------------------------------------------------------------------

def test_gold_file_loads_with_expected_documents(gold):
    assert set(gold) == GOLD_A_IDS
    for row in gold.values():
        assert tuple(row) == GOLD_KEYS
        assert row["act_sections"] == sorted(set(row["act_sections"]))
    # spot checks of labels read from the judgments
    assert gold["C200"]["act_sections"] == ["CrPC-342", "IPC-302", "IPC-380"]
    assert gold["C1396"]["act_sections"] == ["CrPC-342", "CrPC-537", "IPC-120B", "IPC-44", "IPC-477A"]
    assert gold["C469"]["judges"] == ["Das", "Bose"] and gold["C469"]["outcome"] == "Allowed"
    assert gold["C240"]["judges"] == []  # "The Order of the Court", no author
    assert gold["C2550"]["date"] == "1971-05-06"


def test_all_gold_files_are_disjoint_and_from_the_sample():
    paths = sorted(GOLD_DIR.glob("metadata_gold_*.jsonl"))
    assert GOLD_A in paths
    combined = load_gold(paths)  # raises on a doc_id labelled in two files
    sample = set(SAMPLE.read_text(encoding="utf-8").split())
    supreme_court_pdfs = {"judgment_01", "judgment_02", "judgment_05"}
    assert set(combined) == sample | supreme_court_pdfs  # the whole sample is labelled


# --- scoring -----------------------------------------------------------------------------------

def test_perfect_predictions_score_one(gold):
    predicted = {doc_id: as_prediction(row) for doc_id, row in gold.items()}
    result = metadata_accuracy(gold, predicted)
    for field in ("year", "month", "date", "outcome", "petitioner", "respondent", "judges"):
        assert result[field]["accuracy"] == 1.0, field
    assert result["act_sections"]["exact_set_accuracy"] == 1.0
    assert result["act_sections"]["precision"] == result["act_sections"]["recall"] == 1.0
    assert result["judges"]["precision"] == result["judges"]["recall"] == 1.0
    assert result["n_missing"] == 0 and result["missing_doc_ids"] == []
    # every gold bench_size and citation_string in file a is null: nothing to score
    assert result["bench_size"] == {"accuracy": None, "n": 0, "n_correct": 0, "n_missing": 0}
    assert result["citation_string"]["n"] == 0 and result["citation_string"]["accuracy"] is None


def test_one_wrong_year_in_three(gold):
    three = subset(gold, "C200", "C469", "C1386")
    predicted = {doc_id: as_prediction(row) for doc_id, row in three.items()}
    predicted["C469"]["year"] = 1955
    result = metadata_accuracy(three, predicted)
    assert result["year"] == {"accuracy": 0.6667, "n": 3, "n_correct": 2, "n_missing": 0}
    assert result["month"]["accuracy"] == 1.0
    assert result["date"]["accuracy"] == 1.0


def test_year_and_date_accept_strings_and_date_objects(gold):
    import datetime as dt

    one = subset(gold, "C200")
    prediction = as_prediction(gold["C200"])
    prediction.update(year="1957", month=7.0, date=dt.date(1957, 7, 10))
    result = metadata_accuracy(one, {"C200": prediction})
    assert result["year"]["accuracy"] == result["month"]["accuracy"] == result["date"]["accuracy"] == 1.0


def test_outcome_confusion_matrix(gold):
    four = subset(gold, "C200", "C469", "C1386", "C1004")  # Dismissed, Allowed, Dismissed, Allowed
    predicted = {doc_id: as_prediction(gold[doc_id]) for doc_id in ("C200", "C469", "C1386")}
    predicted["C469"]["outcome_label"] = "Dismissed"
    predicted["C1386"]["outcome_label"] = "Disposed"
    result = metadata_accuracy(four, predicted)
    assert result["outcome"]["accuracy"] == 0.25
    assert result["outcome"]["n_missing"] == 1
    assert result["outcome"]["confusion"] == {
        "Allowed": {MISSING_LABEL: 1, "Dismissed": 1},
        "Dismissed": {"Dismissed": 1, "Disposed": 1},
    }


def test_null_outcome_has_its_own_column(gold):
    one = subset(gold, "C200")
    prediction = as_prediction(gold["C200"])
    prediction["outcome_label"] = None
    result = metadata_accuracy(one, {"C200": prediction})
    assert result["outcome"]["confusion"] == {"Dismissed": {NULL_LABEL: 1}}
    assert result["outcome"]["accuracy"] == 0.0


def test_missing_predictions_count_as_wrong(gold):
    predicted = {doc_id: as_prediction(row) for doc_id, row in gold.items()
                 if doc_id not in ("C200", "C1396")}
    predicted["NOT-IN-GOLD"] = as_prediction(gold["C200"])
    result = metadata_accuracy(gold, predicted)
    assert result["n_gold"] == 20
    assert result["n_missing"] == 2
    assert result["missing_doc_ids"] == ["C1396", "C200"]
    assert result["n_extra_predictions"] == 1
    for field in ("year", "month", "date", "outcome", "petitioner", "respondent", "judges"):
        assert result[field]["n"] == 20 and result[field]["n_correct"] == 18, field
        assert result[field]["accuracy"] == 0.9 and result[field]["n_missing"] == 2, field
    # C200 has 3 act ids and C1396 has 5, all missed
    acts = result["act_sections"]
    total = sum(len(row["act_sections"]) for row in gold.values())
    assert acts["fn"] == 8 and acts["fp"] == 0 and acts["tp"] == total - 8
    assert acts["precision"] == 1.0
    assert acts["recall"] == round((total - 8) / total, 4)
    assert acts["exact_set_accuracy"] == 0.9
    # citations: null/null rows are not scored, but missing predictions are
    assert result["citation_string"] == {"accuracy": 0.0, "n": 2, "n_correct": 0, "n_missing": 2}


def test_act_sections_micro_precision_recall(gold):
    two = subset(gold, "C200", "C1386")
    predicted = {doc_id: as_prediction(row) for doc_id, row in two.items()}
    # gold C200 is {CrPC-342, IPC-302, IPC-380}: one missed, one spurious
    predicted["C200"]["act_sections"] = ["IPC-302", "IPC-380", "IPC-34"]
    acts = metadata_accuracy(two, predicted)["act_sections"]
    assert (acts["tp"], acts["fp"], acts["fn"]) == (8, 1, 1)
    assert acts["precision"] == acts["recall"] == acts["f1"] == 0.8889
    assert acts["exact_set_accuracy"] == 0.5


def test_judges_compare_surnames(gold):
    three = subset(gold, "C469", "C1345", "C240")  # [Das, Bose], [Subbarao, Mudholkar], []
    predicted = {
        "C469": {**as_prediction(gold["C469"]), "judge_names": ["S. R. Das"]},
        "C1345": {**as_prediction(gold["C1345"]),
                  "judge_names": ["K. SUBBARAO, J.", "J.R. Mudholkar", "Raghubar Dayal"]},
        "C240": {**as_prediction(gold["C240"]), "judge_names": None},
    }
    judges = metadata_accuracy(three, predicted)["judges"]
    assert judges["accuracy"] == 0.3333  # only C240 (empty == empty) is an exact set match
    assert (judges["tp"], judges["fp"], judges["fn"]) == (3, 1, 1)
    assert judges["precision"] == judges["recall"] == 0.75


@pytest.mark.parametrize("name, key", [
    ("A. Alagiriswami", "alagiriswami"),
    ("ALAGIRISWAMI, J.", "alagiriswami"),
    ("B.C.Ray", "ray"),
    ("Hon'ble Mr. Justice P. B. Gajendragadkar", "gajendragadkar"),
    ("S. R. Das, C.J.", "das"),
    ("J.", None),
])
def test_surname_key(name, key):
    assert surname_key(name) == key


def test_bench_size_scored_only_where_gold_has_it(tmp_path):
    path = write_jsonl(tmp_path / "gold.jsonl", [
        gold_row("D1", bench_size=2), gold_row("D2", bench_size=None), gold_row("D3", bench_size=3),
        gold_row("D4", bench_size=5),
    ])
    small_gold = load_gold(path)
    predicted = {
        "D1": {"bench_size": 2}, "D2": {"bench_size": 5}, "D3": {"bench_size": "1"},
    }
    result = metadata_accuracy(small_gold, predicted)
    assert result["bench_size"] == {"accuracy": 0.3333, "n": 3, "n_correct": 1, "n_missing": 1}


def test_citation_and_party_normalisation(tmp_path):
    path = write_jsonl(tmp_path / "gold.jsonl", [
        gold_row("D1", citation_string="AIR 1957 SC 614", petitioner="Prakash Chandra Pathak"),
        gold_row("D2", citation_string=None),
        gold_row("D3", citation_string=None),
    ])
    small_gold = load_gold(path)
    predicted = {
        "D1": {"citation_string": " AIR  1957\nSC 614 ", "petitioner": "prakash  chandra PATHAK",
               "respondent": "b"},
        "D2": {"citation_string": "(1957) SCR 1", "petitioner": "A", "respondent": None},
        "D3": {"citation_string": "", "petitioner": "A ", "respondent": "B"},
    }
    result = metadata_accuracy(small_gold, predicted)
    # D3 is null on both sides (empty string counts as null) and is not scored
    assert result["citation_string"] == {"accuracy": 0.5, "n": 2, "n_correct": 1, "n_missing": 0}
    assert result["petitioner"]["accuracy"] == 1.0
    assert result["respondent"] == {"accuracy": 0.6667, "n": 3, "n_correct": 2, "n_missing": 0}


def test_output_is_json_ready_with_sorted_keys(gold):
    predicted = {doc_id: as_prediction(row) for doc_id, row in list(gold.items())[:7]}
    result = metadata_accuracy(gold, predicted)
    assert json.loads(json.dumps(result)) == result
    assert_keys_sorted(result)
    for value in (result["year"]["accuracy"], result["act_sections"]["recall"]):
        assert value == round(value, 4)


# --- malformed gold ------------------------------------------------------------------------------

def test_malformed_json_line_names_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [gold_row("D1"), "{not json"])
    with pytest.raises(ValueError, match=re.escape(f"{path}:2") + ".*invalid JSON"):
        load_gold(path)


@pytest.mark.parametrize("row, reason", [
    ({k: v for k, v in gold_row("D1").items() if k != "notes"}, "missing keys"),
    ({**gold_row("D1"), "extra": 1}, "unexpected keys"),
    (gold_row("D1", year="1957"), "year must be an int"),
    (gold_row("D1", month=13), "month"),
    (gold_row("D1", date="1957-08-10"), "disagrees"),
    (gold_row("D1", bench_size=0), "bench_size"),
    (gold_row("D1", judges="Sinha"), "judges"),
    (gold_row("D1", outcome="Partly allowed"), "outcome"),
    (gold_row("D1", act_sections=["IPC-477-A"]), "not a canonical id"),
    (gold_row("D1", act_sections=["XYZ-12"]), "unknown act code"),
    (gold_row("D1", act_sections=["Constitution-21"]), "unknown act code"),
    (gold_row("D1", citation_string=5), "citation_string"),
    ([1, 2], "expected a JSON object"),
])
def test_invalid_gold_rows_raise(tmp_path, row, reason):
    path = write_jsonl(tmp_path / "bad.jsonl", ["", row])
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: ") + ".*" + re.escape(reason)):
        load_gold(path)


def test_duplicate_doc_id_across_files(tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", [gold_row("D1")])
    second = write_jsonl(tmp_path / "b.jsonl", [gold_row("D2"), gold_row("D1")])
    with pytest.raises(ValueError, match=re.escape(f"{second}:2") + ".*duplicate doc_id 'D1'"):
        load_gold([first, second])

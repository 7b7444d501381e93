"""Measure metadata extractors against hand-labelled gold rows.

The gold files (``data/gold/metadata_gold_*.jsonl``) hold one JSON object per line, labelled by
reading each judgment's text, with exactly the keys in :data:`GOLD_KEYS`. Predictions are
the project's metadata records keyed by ``doc_id``, and use the record's own field names
(``judge_names``, ``outcome_label``, ...). :data:`FIELD_MAP` lists which gold key each one
maps to.

Scoring rules:

* A gold document with no prediction (absent, or ``None``) is *missing*. It counts as wrong in
  every field it is eligible for, and each field reports ``n_missing``.
* ``year``, ``month`` and ``date`` must match exactly (ints, and ``YYYY-MM-DD``).
* ``bench_size`` is scored only on gold rows whose ``bench_size`` is not null.
* ``judges`` are compared as sets of surnames: the last name token of each name, lower-cased,
  with honorifics such as ``J.`` and ``C.J.`` dropped. So ``"A. Alagiriswami"`` matches
  ``"Alagiriswami"``. The field reports exact-set accuracy plus micro precision, recall and F1.
* ``outcome`` must match exactly. It also reports a confusion matrix
  ``{gold_label: {predicted_label: count}}``.
* ``act_sections`` reports micro precision, recall and F1 over canonical ids, plus exact-set
  accuracy.
* ``citation_string`` must match exactly after whitespace is collapsed. It is scored on rows
  where the gold or the prediction is non-null, and on every missing prediction.
* ``petitioner`` and ``respondent`` must match exactly, ignoring case and collapsed whitespace.

The result is JSON-ready: floats are rounded to 4 decimals, and every dict has sorted keys.
An accuracy whose denominator is zero is ``None``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from countercase.legal.acts import ACTS_BY_CODE

GOLD_KEYS: tuple[str, ...] = (
    "doc_id", "year", "month", "date", "bench_size", "judges", "outcome", "act_sections",
    "citation_string", "petitioner", "respondent", "notes",
)

OUTCOME_LABELS: frozenset[str] = frozenset({"Allowed", "Dismissed", "Disposed", "Unknown"})

# gold key -> key of the project's metadata record
FIELD_MAP: dict[str, str] = {
    "year": "year",
    "month": "month",
    "date": "date",
    "bench_size": "bench_size",
    "judges": "judge_names",
    "outcome": "outcome_label",
    "act_sections": "act_sections",
    "citation_string": "citation_string",
    "petitioner": "petitioner",
    "respondent": "respondent",
}

MISSING_LABEL = "<missing>"  # confusion-matrix column for a document with no prediction
NULL_LABEL = "<null>"  # confusion-matrix column for a prediction whose outcome_label is null

_NUMBER = r"[0-9]+[A-Z]{0,3}"
_SECTION_ID = re.compile(
    rf"^(?:Constitution-Article-{_NUMBER}|(?P<code>[A-Za-z]+)-{_NUMBER})$"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HONORIFICS = frozenset({"j", "jj", "cj", "c", "justice", "hon'ble", "honble", "mr", "mrs", "ms",
                         "dr", "shri", "sri", "smt", "acting"})
_ROUND = 4


# ---------------------------------------------------------------------------------------------
# gold loading
# ---------------------------------------------------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_section_id(section: Any) -> str | None:
    """Why a gold act-section id is malformed, or None if it is canonical."""
    if not isinstance(section, str):
        return f"act_sections entry {section!r} is not a string"
    match = _SECTION_ID.match(section)
    if match is None:
        return f"act_sections entry {section!r} is not a canonical id"
    code = match.group("code")
    if code is not None and (code not in ACTS_BY_CODE or code == "Constitution"):
        return f"act_sections entry {section!r} names an unknown act code {code!r}"
    return None


def _validate_gold_row(row: Any) -> str | None:
    """Why one parsed gold line is malformed, or None if it is well-formed."""
    if not isinstance(row, dict):
        return f"expected a JSON object, got {type(row).__name__}"
    keys = set(row)
    missing = [key for key in GOLD_KEYS if key not in keys]
    extra = sorted(keys - set(GOLD_KEYS))
    if missing:
        return f"missing keys {missing}"
    if extra:
        return f"unexpected keys {extra}"
    if not isinstance(row["doc_id"], str) or not row["doc_id"].strip():
        return "doc_id must be a non-empty string"
    if not _is_int(row["year"]):
        return "year must be an int"
    if not _is_int(row["month"]) or not 1 <= row["month"] <= 12:
        return "month must be an int in 1..12"
    if not isinstance(row["date"], str) or not _DATE.match(row["date"]):
        return "date must be a 'YYYY-MM-DD' string"
    try:
        date = dt.date.fromisoformat(row["date"])
    except ValueError:
        return f"date {row['date']!r} is not a valid calendar date"
    if (date.year, date.month) != (row["year"], row["month"]):
        return f"date {row['date']!r} disagrees with year/month {row['year']}/{row['month']}"
    if row["bench_size"] is not None and (not _is_int(row["bench_size"]) or row["bench_size"] < 1):
        return "bench_size must be a positive int or null"
    if not isinstance(row["judges"], list) or not all(
            isinstance(judge, str) and judge.strip() for judge in row["judges"]):
        return "judges must be a list of non-empty strings"
    if row["outcome"] not in OUTCOME_LABELS:
        return f"outcome must be one of {sorted(OUTCOME_LABELS)}, got {row['outcome']!r}"
    if not isinstance(row["act_sections"], list):
        return "act_sections must be a list"
    for section in row["act_sections"]:
        problem = _check_section_id(section)
        if problem:
            return problem
    # A party may be absent ("In Re: ..." has no respondent), hence null is allowed.
    for key in ("citation_string", "petitioner", "respondent"):
        if row[key] is not None and not isinstance(row[key], str):
            return f"{key} must be a string or null"
    if not isinstance(row["notes"], str):
        return "notes must be a string"
    return None


def load_gold(paths: str | Path | Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """Read one or more gold JSONL files into ``{doc_id: row}``.

    Blank lines are skipped. A line that is not valid JSON, lacks a key, has an extra key, has
    a value of the wrong type, or repeats a doc_id that an earlier line or file already gave,
    raises ``ValueError("<file>:<line>: <reason>")``.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    gold: dict[str, dict[str, Any]] = {}
    seen_at: dict[str, str] = {}
    for path in paths:
        path = Path(path)
        with path.open(encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{where}: invalid JSON ({exc.msg})") from exc
                problem = _validate_gold_row(row)
                if problem:
                    raise ValueError(f"{where}: {problem}")
                doc_id = row["doc_id"]
                if doc_id in gold:
                    raise ValueError(f"{where}: duplicate doc_id {doc_id!r} (first at {seen_at[doc_id]})")
                gold[doc_id] = dict(row)
                seen_at[doc_id] = where
    return gold


# ---------------------------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------------------------

def _get(record: Any, key: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(key)
    return getattr(record, key, None)


def _as_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _as_date(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.strftime("%Y-%m-%d")
    text = str(value).strip()
    return text or None


def _squash(value: Any) -> str | None:
    """Collapse whitespace runs; empty or null gives None."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def surname_key(name: str) -> str | None:
    """The last name token of a judge's name, lower-cased, with honorifics dropped.

    ``"A. Alagiriswami"``, ``"ALAGIRISWAMI, J."`` and ``"Alagiriswami"`` all give
    ``"alagiriswami"``. ``"B.C.Ray"`` gives ``"ray"``.
    """
    tokens = [token for token in re.split(r"[\s.,;:()]+", name.lower()) if token]
    tokens = [token for token in tokens if token not in _HONORIFICS]
    return tokens[-1] if tokens else None


def _surnames(names: Any) -> set[str]:
    if names is None:
        return set()
    if isinstance(names, str):
        names = [names]
    keys = (surname_key(str(name)) for name in names if name is not None)
    return {key for key in keys if key}


def _id_set(ids: Any) -> set[str]:
    if ids is None:
        return set()
    if isinstance(ids, str):
        ids = [ids]
    return {str(section).strip() for section in ids if section is not None and str(section).strip()}


# ---------------------------------------------------------------------------------------------
# scoring
# ---------------------------------------------------------------------------------------------

def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, _ROUND) if denominator else None


def _prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, _ROUND), "recall": round(recall, _ROUND),
            "f1": round(f1, _ROUND), "tp": tp, "fp": fp, "fn": fn}


class _Tally:
    def __init__(self) -> None:
        self.n = 0
        self.correct = 0
        self.missing = 0

    def add(self, correct: bool, missing: bool) -> None:
        self.n += 1
        self.missing += missing
        self.correct += bool(correct) and not missing

    def result(self, accuracy_key: str = "accuracy") -> dict[str, Any]:
        return {accuracy_key: _ratio(self.correct, self.n), "n": self.n,
                "n_correct": self.correct, "n_missing": self.missing}


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    if isinstance(value, float):
        return round(value, _ROUND)
    return value


def metadata_accuracy(gold: Mapping[str, Mapping[str, Any]],
                      predicted: Mapping[str, Any]) -> dict[str, Any]:
    """Score predicted metadata records against gold rows. See the module docstring for rules.

    ``predicted`` maps doc_id to a metadata record, either a mapping or an object with
    attributes, using the keys in :data:`FIELD_MAP`. A prediction whose doc_id is not in
    ``gold`` is ignored and counted in ``n_extra_predictions``.
    """
    tallies = {field: _Tally() for field in
               ("year", "month", "date", "bench_size", "outcome", "citation_string",
                "petitioner", "respondent")}
    judges_tally, acts_tally = _Tally(), _Tally()
    judge_counts = {"tp": 0, "fp": 0, "fn": 0}
    act_counts = {"tp": 0, "fp": 0, "fn": 0}
    confusion: dict[str, dict[str, int]] = {}
    missing_ids: list[str] = []

    for doc_id in sorted(gold):
        row = gold[doc_id]
        record = predicted.get(doc_id)
        missing = record is None
        if missing:
            missing_ids.append(doc_id)

        def pred(field: str) -> Any:
            return None if missing else _get(record, FIELD_MAP[field])

        for field in ("year", "month"):
            value = _as_int(pred(field))
            tallies[field].add(value is not None and value == row[field], missing)
        tallies["date"].add(_as_date(pred("date")) == row["date"], missing)

        if row["bench_size"] is not None:
            tallies["bench_size"].add(_as_int(pred("bench_size")) == row["bench_size"], missing)

        gold_judges, pred_judges = _surnames(row["judges"]), _surnames(pred("judges"))
        judges_tally.add(gold_judges == pred_judges, missing)
        judge_counts["tp"] += len(gold_judges & pred_judges)
        judge_counts["fp"] += len(pred_judges - gold_judges)
        judge_counts["fn"] += len(gold_judges - pred_judges)

        pred_outcome = pred("outcome")
        tallies["outcome"].add(pred_outcome == row["outcome"], missing)
        column = MISSING_LABEL if missing else (NULL_LABEL if pred_outcome is None else str(pred_outcome))
        confusion.setdefault(row["outcome"], {}).setdefault(column, 0)
        confusion[row["outcome"]][column] += 1

        gold_acts, pred_acts = _id_set(row["act_sections"]), _id_set(pred("act_sections"))
        acts_tally.add(gold_acts == pred_acts, missing)
        act_counts["tp"] += len(gold_acts & pred_acts)
        act_counts["fp"] += len(pred_acts - gold_acts)
        act_counts["fn"] += len(gold_acts - pred_acts)

        gold_citation, pred_citation = _squash(row["citation_string"]), _squash(pred("citation_string"))
        if missing or gold_citation is not None or pred_citation is not None:
            tallies["citation_string"].add(gold_citation == pred_citation, missing)

        for field in ("petitioner", "respondent"):
            gold_party, pred_party = _squash(row[field]), _squash(pred(field))
            same = (gold_party or "").casefold() == (pred_party or "").casefold()
            tallies[field].add(same and (gold_party is None) == (pred_party is None), missing)

    result: dict[str, Any] = {field: tally.result() for field, tally in tallies.items()}
    result["outcome"]["confusion"] = confusion
    result["judges"] = {**judges_tally.result(), **_prf(**judge_counts)}
    result["act_sections"] = {**acts_tally.result("exact_set_accuracy"), **_prf(**act_counts)}
    result["n_gold"] = len(gold)
    result["n_missing"] = len(missing_ids)
    result["missing_doc_ids"] = missing_ids
    result["n_extra_predictions"] = sum(1 for doc_id in predicted if doc_id not in gold)
    return _sorted_keys(result)

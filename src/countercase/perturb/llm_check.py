"""The LLM check, measured: its acceptance over the root candidates of the corpus query cases,
whether it separates the perturbations that matter, and its agreement with hand labels.

Candidates are the validity trees' root perturbations (:func:`countercase.perturb.operative.root_edges`, up to
``perturb.per_type`` of each fact type) of the first ``llm_check.cases`` validity cases (the
split is a seeded shuffle, so these are a seeded sample), each labelled as the validity
experiment labels it (*operative* when it changes a fact shared with a cited precedent,
*incidental* otherwise) and checked by :class:`validate.LlmValidator`. Reported:

- the acceptance rate (both scores at :data:`validate.THRESHOLD`), with a 95% bootstrap
  interval over cases, the rate of each answer, per fact type and per citation label;
- whether the check separates: the cited precedents' displacement (the validity experiment's
  primary condition) of accepted against rejected candidates (Mann-Whitney U), and the share of
  citation-operative candidates among each;
- agreement with a hand-labelled sample (``data/gold/perturbation_labels.jsonl``, rules in the
  ``.md`` beside it): accuracy and Cohen's kappa of each answer at the threshold, and the AUC of
  each score (does it rank the labelled-true above the labelled-false, whatever the threshold).
  The sample is drawn before any check is read (:func:`label_sample`), so the labels are blind
  to the model.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from tqdm import tqdm

from countercase.errors import CountercaseError
from countercase.experiment.agreement import auc, cohens_kappa
from countercase.factsheet.schema import FactSheet
from countercase.perturb.calibration import calibrate, read_calibration
from countercase.perturb.cases import Precedent, QueryCase, json_lines, load_cases
from countercase.perturb.llm_validator import THRESHOLD, LlmValidator, brief
from countercase.perturb.operative import FACT_TYPES, label, root_edges
from countercase.perturb.rules import apply
from countercase.perturb.validity import PRIMARY_CONSTRUCTION

log = logging.getLogger(__name__)

KEY = ["case_id", "description"]  # a candidate: one change of one case
ANSWERS = ("plausible", "operative", "accepted")
SCORES = ("plausible", "operative")  # the answers with a score (p_<answer>)


class LabelFileError(CountercaseError, ValueError):
    """A hand-label file that cannot be read (the message names the line)."""


@dataclass(frozen=True)
class Candidate:
    case_id: str
    fact_type: str
    description: str
    label: str  # operative | incidental (cited precedents)
    original: FactSheet
    perturbed: FactSheet


def root_candidates(cases: list[QueryCase], edges: pd.DataFrame, per_type: int,
                    precedents: dict[str, Precedent]) -> list[Candidate]:
    found = []
    for case in cases:
        cited = [precedents[c] for c in case.cited if c in precedents]
        for p in root_edges(case, edges, per_type):
            found.append(Candidate(case.case_id, p.fact_type, p.description, label(p, cited),
                                   case.sheet, apply(case.sheet, p)))
    return found


def label_sample(candidates: list[Candidate], cases: dict[str, QueryCase], seed: int,
                 n: int) -> list[dict[str, Any]]:
    """``n`` candidates for hand labels, drawn round-robin over the fact types from a seeded
    shuffle of each, with what a labeller reads: the case's facts and the change."""
    by_type: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_type[c.fact_type].append(c)
    rng = random.Random(seed)
    for items in by_type.values():
        rng.shuffle(items)
    drawn: list[Candidate] = []
    order = [t for t in FACT_TYPES if t in by_type] + sorted(set(by_type) - set(FACT_TYPES))
    while len(drawn) < n and any(by_type.values()):
        for fact_type in order:
            if by_type[fact_type] and len(drawn) < n:
                drawn.append(by_type[fact_type].pop(0))
    return [{"case_id": c.case_id, "fact_type": c.fact_type, "description": c.description,
             "original_facts": json.loads(brief(c.original)),
             "altered_facts": json.loads(brief(c.perturbed)),
             "case_text": cases[c.case_id].text} for c in drawn]


CHECK_COLUMNS = KEY[:1] + ["fact_type"] + KEY[1:] + ["label", "p_plausible", "p_operative",
                                                      "plausible", "operative", "accepted"]


def check_all(candidates: list[Candidate], validator: LlmValidator) -> pd.DataFrame:
    rows = []
    for c in tqdm(candidates, desc="LLM check", unit="candidate"):
        verdict = validator.check(c.original, c.perturbed, c.fact_type, c.description)
        rows.append({"case_id": c.case_id, "fact_type": c.fact_type,
                     "description": c.description, "label": c.label,
                     "p_plausible": round(verdict.plausible, 6),
                     "p_operative": round(verdict.operative, 6),
                     "plausible": verdict.plausible >= THRESHOLD,
                     "operative": verdict.operative >= THRESHOLD,
                     "accepted": verdict.accepted})
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def read_labels(path: Path) -> pd.DataFrame:
    """The hand labels: one JSON object a line with case_id, description, annotator, and
    boolean plausible and operative (rules in the ``.md`` beside the file)."""
    fields = tuple(KEY) + ("annotator", "plausible", "operative")
    rows = json_lines(path, fields, LabelFileError)
    for row in rows:
        mistyped = [k for k in fields[:3] if not isinstance(row[k], str)]
        mistyped += [k for k in fields[3:] if not isinstance(row[k], bool)]
        if mistyped:
            raise LabelFileError(f"{path}:{row['_line']}: mistyped {', '.join(mistyped)}")
    table = pd.DataFrame([{k: row[k] for k in fields} for row in rows], columns=list(fields))
    if table.duplicated(KEY + ["annotator"]).any():
        raise LabelFileError(f"{path}: a perturbation labelled twice by the same annotator")
    table["accepted"] = table["plausible"] & table["operative"]
    return table


def _rate(values: pd.Series) -> float | None:
    return round(float(values.mean()), 4) if len(values) else None


def _agree(a: pd.Series, b: pd.Series, score: pd.Series | None = None) -> dict[str, Any]:
    a, b = a.astype(bool).to_numpy(), b.astype(bool).to_numpy()
    if not len(a):
        return {"accuracy": None, "kappa": None}
    out = {"accuracy": round(float(np.mean(a == b)), 4), "kappa": cohens_kappa(a, b),
           "rates": [round(float(a.mean()), 4), round(float(b.mean()), 4)]}
    if score is not None:
        out["auc"] = auc(a, score.to_numpy(float))
    return out


def agreement(checked: pd.DataFrame, labels: pd.DataFrame) -> dict[str, Any]:
    """Accuracy and Cohen's kappa of each LLM answer against each annotator's labels (and the
    AUC of its score), and between the annotators (``rates``: the share of true of each side,
    annotator first)."""
    out: dict[str, Any] = {"n_labelled": int(labels[KEY].drop_duplicates().shape[0]),
                           "annotators": sorted(labels["annotator"].unique().tolist())}
    # a case can have two candidates with one description (the same value changed at another
    # mention); a label names the change, so the first candidate's answer stands for it
    checked = checked.drop_duplicates(KEY)
    for annotator in out["annotators"]:
        both = labels[labels["annotator"] == annotator].merge(checked, on=KEY,
                                                             suffixes=("_human", "_llm"))
        out[f"llm_vs_{annotator}"] = {
            "n_matched": int(len(both)),
            **{answer: _agree(both[f"{answer}_human"], both[f"{answer}_llm"],
                              both[f"p_{answer}"] if answer in SCORES else None)
               for answer in ANSWERS}}
    if len(out["annotators"]) == 2:
        first, second = (labels[labels["annotator"] == a] for a in out["annotators"])
        both = first.merge(second, on=KEY, suffixes=("_1", "_2"))
        out["between_annotators"] = {
            "n_matched": int(len(both)),
            **{answer: _agree(both[f"{answer}_1"], both[f"{answer}_2"]) for answer in ANSWERS}}
    return out


def _bootstrap_rate(checked: pd.DataFrame, seed: int, resamples: int = 1000) -> list[float]:
    per_case = checked.groupby("case_id")["accepted"].agg(["sum", "count"])
    sums, counts = per_case["sum"].to_numpy(float), per_case["count"].to_numpy(float)
    rng = np.random.default_rng(seed)
    rates = []
    for _ in range(resamples):
        pick = rng.integers(0, len(per_case), len(per_case))
        rates.append(sums[pick].sum() / counts[pick].sum())
    return [round(float(np.percentile(rates, 2.5)), 4), round(float(np.percentile(rates, 97.5)), 4)]


def separation(checked: pd.DataFrame, displacement: pd.DataFrame) -> dict[str, Any]:
    """Accepted against rejected candidates: their cited precedents' displacement and share of
    citation-operative changes."""
    joined = checked.drop_duplicates(KEY).merge(displacement, on=KEY, how="inner").dropna(
        subset=["cited_displacement"])
    out: dict[str, Any] = {"n_joined": int(len(joined))}
    for name, part in (("accepted", joined[joined["accepted"]]),
                       ("rejected", joined[~joined["accepted"]])):
        out[name] = {"n": int(len(part)),
                     "cited_displacement_mean": (round(float(part["cited_displacement"].mean()), 4)
                                                 if len(part) else None),
                     "operative_share": _rate(part["label"] == "operative")}
    acc, rej = joined.loc[joined["accepted"], "cited_displacement"], joined.loc[
        ~joined["accepted"], "cited_displacement"]
    out["mann_whitney_p"] = (float(f"{stats.mannwhitneyu(acc, rej).pvalue:.3g}")
                             if len(acc) and len(rej) else None)
    # does the operative score rank the citation-operative changes first?
    checked = checked.drop_duplicates(KEY)
    out["auc_p_operative_vs_label"] = auc((checked["label"] == "operative").to_numpy(),
                                          checked["p_operative"].to_numpy(float))
    return out


def summarise(checked: pd.DataFrame, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n_cases": int(checked["case_id"].nunique()), "n_candidates": int(len(checked)),
        "acceptance_rate": _rate(checked["accepted"]),
        "acceptance_ci95": _bootstrap_rate(checked, seed) if len(checked) else None,
        "threshold": THRESHOLD,
        "plausible_rate": _rate(checked["plausible"]),
        "operative_rate": _rate(checked["operative"]),
        **{f"p_{answer}_quartiles": [round(float(q), 4) for q in
                                     checked[f"p_{answer}"].quantile([0.25, 0.5, 0.75])]
           for answer in SCORES if len(checked)}}
    for column in ("fact_type", "label"):
        out[f"acceptance_by_{column}"] = {
            str(k): {"rate": _rate(g["accepted"]), "n": int(len(g))}
            for k, g in checked.groupby(column)}
    return out


def read_displacement(validity_csv: Path, granularity: str, construction: str) -> pd.DataFrame:
    """The validity experiment's rows for one condition (set ``validity``)."""
    rows = pd.read_csv(validity_csv)
    rows = rows[(rows["set"] == "validity") & (rows["granularity"] == granularity)
                & (rows["construction"] == construction) & (rows["label"] != "placebo")]
    return rows[KEY + ["cited_displacement"]].drop_duplicates(KEY)


def run_llm_check(params, inputs, edges: pd.DataFrame, validity_rows: Path, labels: Path,
                  out: Path, recording, sample_only: bool = False,
                  calibration: Path | None = None) -> dict[str, Any]:
    """The ``llm_check`` stage. Writes ``out/label_sample.jsonl`` (what the hand labels label)
    and, unless ``sample_only``, ``out/checks.csv`` (every verdict); returns the metrics, with
    the check measured as a classifier where ``calibration`` holds its labelled sample
    (:mod:`countercase.perturb.calibration`). ``recording``: the LLM's answers
    (:class:`countercase.runtime.recording.Recording`)."""
    sets = load_cases(params, inputs)
    cases = sets.validity[:params.llm_check.cases]
    candidates = root_candidates(cases, edges, params.perturb.per_type, sets.precedents)
    out.mkdir(parents=True, exist_ok=True)
    sample = label_sample(candidates, {c.case_id: c for c in cases}, params.seed,
                          params.llm_check.label_sample)
    with (out / "label_sample.jsonl").open("w", encoding="utf-8") as handle:
        for row in sample:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    if sample_only:
        return {"n_candidates": len(candidates), "label_sample": len(sample)}
    validator = LlmValidator(recording)
    checked = check_all(candidates, validator)
    checked.to_csv(out / "checks.csv", index=False)
    report = summarise(checked, params.seed)
    report["model_calls"] = validator.calls
    report["recording"] = recording.counts.as_dict()
    report["separation"] = separation(checked, read_displacement(
        validity_rows, params.perturb.granularity, PRIMARY_CONSTRUCTION))
    report["agreement"] = agreement(checked, read_labels(labels))
    if calibration is not None:
        sample, who, found = read_calibration(calibration)
        if sample:
            report["calibration"] = {"labelled_by": who, **calibrate(
                checked, sample, found, params.seed, params.llm_check.retire_below)}
    return report

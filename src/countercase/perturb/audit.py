"""The legal audit's samples: root perturbations of the corpus cases, drawn from one engine.

Issue 41 asks whether the perturbation engine proposes counterfactuals a lawyer would
recognise. The audit reads a seeded sample of root perturbations (the validity trees' roots,
:func:`countercase.perturb.operative.root_edges`) of the validity cases of one full build, drawn
once from the engine before its rules change (``before``) and once after (``after``). Each fact
type gets up to ``per_type`` edges from a seeded shuffle of all of that type's edges, so a rare
type (party) is sampled whole rather than crowded out.

:func:`blind` merges the two samples into one file to label, shuffled and without the engine's
name; the labelling rules and the defect categories are in ``data/gold/legal_audit.md``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.perturb.cases import CaseFileError, QueryCase
from countercase.perturb.operative import FACT_TYPES, root_edges

# the engine before issue 41, its first rules, the rules revised on the first audit's labels
# (whose own sample holds no edge the first samples labelled), those revised on after2's,
# after3's and after4's, and issue 57's (edges consistent with the rest of the case), labelled
# under two criteria
ENGINES = ("before", "after", "after2", "after3", "after4", "after5", "after_v3")
CRITERIA_ENGINE = "after_v3"  # labelled under two criteria (apply, decides), not one label
CRITERIA = ("apply", "decides")
ANSWERS = ("yes", "no", "unclear")
# what a labeller reads: the change and the case, never which engine proposed it
SHOWN = ("item", "case_id", "fact_type", "description", "basis", "sections_cited",
         "case_text")


def item_id(case_id: str, description: str, engine: str) -> str:
    """A stable id of one edge of one engine (the blind file names items by it alone)."""
    return hashlib.sha1(f"{engine}\n{case_id}\n{description}".encode()).hexdigest()[:12]


def root_pool(cases: list[QueryCase], edges: pd.DataFrame, per_type: int,
              engine: str) -> list[dict[str, Any]]:
    """Every root perturbation of ``cases`` as the audit shows it, in case order."""
    pool = []
    for case in cases:
        sections = [s.section_id for s in case.sheet.sections_cited]
        for p in root_edges(case, edges, per_type):
            pool.append({"item": item_id(case.case_id, p.description, engine),
                         "engine": engine, "case_id": case.case_id,
                         "fact_type": p.fact_type, "description": p.description,
                         "basis": p.basis, "sections_cited": sections, "case_text": case.text})
    return pool


def draw(pool: list[dict[str, Any]], per_type: int, seed: int) -> list[dict[str, Any]]:
    """Up to ``per_type`` edges of each fact type, from a seeded shuffle of each type's edges
    (every edge of a type with fewer), in fact-type order."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in pool:
        by_type[row["fact_type"]].append(row)
    rng = random.Random(seed)
    drawn = []
    for fact_type in FACT_TYPES:
        items = list(by_type.get(fact_type, ()))
        rng.shuffle(items)
        drawn += items[:per_type]
    return drawn


def summary(pool: list[dict[str, Any]], n_cases: int) -> dict[str, Any]:
    """The engine's root edges over all cases: per fact type, the edges and the share of cases
    whose root has one (a clean tree must not be an empty one)."""
    cases_with: dict[str, set[str]] = defaultdict(set)
    edges: dict[str, int] = defaultdict(int)
    for row in pool:
        cases_with[row["fact_type"]].add(row["case_id"])
        edges[row["fact_type"]] += 1
    return {"n_cases": n_cases, "root_edges": len(pool),
            "root_edges_per_case": round(len(pool) / n_cases, 3) if n_cases else None,
            "per_type": {t: {"edges": edges.get(t, 0),
                             "case_share": round(len(cases_with.get(t, ())) / n_cases, 4)
                             if n_cases else None} for t in FACT_TYPES}}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def blind(samples: list[list[dict[str, Any]]], seed: int) -> list[dict[str, Any]]:
    """The samples as one list to label: shuffled by ``seed``, each item without its engine."""
    merged = [{k: row[k] for k in SHOWN} for sample in samples for row in sample]
    merged.sort(key=lambda row: row["item"])  # the shuffle does not depend on the input order
    random.Random(seed).shuffle(merged)
    return merged


LABELS = ("meaningful", "not", "unclear")
DEFECTS = ("renumbering", "repealed", "unrelated_section", "cross_kind_section",
           "wrong_domain_threshold", "wrong_person_threshold", "misread_number",
           "generic_evidence_toggle", "inapplicable_party", "other")


def _read_labels(path: Path, wrong) -> tuple[str, dict[str, dict[str, Any]]]:
    """(who labelled, item -> label row) of a label file whose first line names the labeller;
    ``wrong(row)``: what is wrong with a row (None: nothing); a bad line is an error naming the
    file and line."""
    who, rows = "", {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                row = json.loads(line)
            except ValueError:
                raise CaseFileError(f"{path}:{number}: not JSON") from None
            if "item" not in row:
                who = row.get("who", "")
                continue
            problem = wrong(row)
            if problem:
                raise CaseFileError(f"{path}:{number}: {problem}")
            rows[row["item"]] = row
    return who, rows


def read_audit_labels(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """(who labelled, item -> label row) of a label file (``data/gold/legal_audit.md``)."""
    def wrong(row):
        if row.get("label") not in LABELS:
            return f"label {row.get('label')!r} is not one of {', '.join(LABELS)}"
        if row["label"] == "not" and row.get("defect") not in DEFECTS:
            return f"defect {row.get('defect')!r} is not one of {', '.join(DEFECTS)}"
        return None

    return _read_labels(path, wrong)


def _shares(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {"n": n,
            "meaningful_share": round(sum(r["label"] == "meaningful" for r in rows) / n, 4)
            if n else None,
            "unclear_share": round(sum(r["label"] == "unclear" for r in rows) / n, 4)
            if n else None}


def cohen_kappa(a: list[str], b: list[str]) -> float | None:
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((a.count(c) / n) * (b.count(c) / n) for c in sorted(set(a) | set(b)))
    return round((observed - expected) / (1 - expected), 4) if expected < 1 else None


def audit_results(samples: dict[str, list[dict[str, Any]]], first: dict[str, dict[str, Any]],
                  second: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """``legal_audit`` of metrics/counterfactual.json: per engine the shares over its sample
    (``unclear`` in the denominator) and per fact type, the defects by category, and Cohen's
    kappa of the second labeller against the first on the items both labelled."""
    found: dict[str, Any] = {}
    for engine, sample in samples.items():
        # an item is one text a labeller reads: two numbers of a case moved alike are one item
        items = list({s["item"]: s for s in sample}.values())
        rows = [{**first[s["item"]], "fact_type": s["fact_type"]} for s in items
                if s["item"] in first]
        defects: dict[str, int] = defaultdict(int)
        for r in rows:
            if r["label"] == "not":
                defects[r["defect"]] += 1
        found[engine] = {**_shares(rows), "n_sample": len(sample), "n_items": len(items),
                         "per_type": {t: {k: v for k, v in _shares(
                             [r for r in rows if r["fact_type"] == t]).items()
                             if k != "unclear_share"} for t in FACT_TYPES},
                         "defects": dict(sorted(defects.items()))}
    if second:
        both = sorted(set(first) & set(second))
        found["agreement"] = {"n": len(both), "cohen_kappa": cohen_kappa(
            [first[i]["label"] for i in both], [second[i]["label"] for i in both])}
    return found


def read_criteria_labels(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """(who labelled, item -> row) of an ``after_v3`` label file: each row answers
    :data:`CRITERIA` with one of :data:`ANSWERS`."""
    def wrong(row):
        bad = [c for c in CRITERIA if row.get(c) not in ANSWERS]
        return f"{', '.join(bad)} not one of {', '.join(ANSWERS)}" if bad else None

    return _read_labels(path, wrong)


def criteria_results(sample: list[dict[str, Any]],
                     readers: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """``legal_audit.after_v3``: per criterion the share answered ``yes`` (each reader's and
    their mean; ``unclear`` in the denominator), per fact type; Cohen's kappa of the readers per
    criterion and of the two criteria per reader."""
    items = list({s["item"]: s for s in sample}.values())
    kind = {s["item"]: s["fact_type"] for s in items}

    def share(rows, criterion):
        return round(sum(r[criterion] == "yes" for r in rows) / len(rows), 4) if rows else None

    out: dict[str, Any] = {"n": len(items), "readers": sorted(readers)}
    labelled = {who: [rows[i["item"]] for i in items if i["item"] in rows]
                for who, rows in readers.items()}
    out["meaningful_share"] = {
        c: {**{who: share(rows, c) for who, rows in labelled.items()},
            "mean": round(sum(share(rows, c) or 0 for rows in labelled.values())
                          / max(len(labelled), 1), 4)} for c in CRITERIA}
    out["per_type"] = {t: {c: {who: share([r for r in rows if kind[r["item"]] == t], c)
                               for who, rows in labelled.items()} for c in CRITERIA}
                       | {"n": sum(1 for i in items if i["fact_type"] == t)} for t in FACT_TYPES}
    agreement: dict[str, Any] = {}
    names = sorted(readers)
    if len(names) == 2:
        a, b = (readers[n] for n in names)
        both = sorted(set(a) & set(b) & set(kind))
        agreement["readers"] = {c: cohen_kappa([a[i][c] for i in both], [b[i][c] for i in both])
                                for c in CRITERIA}
        agreement["n_both"] = len(both)
    agreement["criteria"] = {who: cohen_kappa([r["apply"] for r in rows],
                                              [r["decides"] for r in rows])
                             for who, rows in labelled.items()}
    out["agreement"] = agreement
    defects: dict[str, int] = defaultdict(int)
    for rows in labelled.values():
        for r in rows:
            if r["apply"] == "no":
                defects[r.get("defect") or "other"] += 1
    out["defects"] = dict(sorted(defects.items()))
    return out

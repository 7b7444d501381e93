"""The ``factsheets`` stage: the rule fact sheet of every judgment and every AILA query.

Outputs: ``judgments.jsonl`` and ``queries.jsonl`` (one sheet per line, in id order),
``failures.jsonl`` (an input without facts, with the reason; the batch goes on) and the
coverage summary for ``metrics/factsheets.json``: the share of sheets with each field filled.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd
from tqdm import tqdm

from countercase.extract.run import read_sections
from countercase import layout
from countercase.factsheet.llm import LlmExtractor, LlmUnavailableError, open_recording
from countercase.factsheet.roles import NUMBER_ROLES, read_labels
from countercase.factsheet.roles import agreement as role_labels_agreement
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import FactSheet, validate_sheet
from countercase.factsheet.store import read_sheets
from countercase.ingest.run import read_documents

log = logging.getLogger(__name__)


def coverage(sheets: list[FactSheet]) -> dict[str, Any]:
    n = len(sheets)

    def share(test) -> float:
        return round(sum(1 for s in sheets if test(s)) / n, 4) if n else 0.0

    return {
        "n": n,
        "with_sections": share(lambda s: s.sections_cited),
        "with_ages": share(lambda s: s.numerical_facts.ages),
        "with_amounts": share(lambda s: s.numerical_facts.amounts),
        "with_durations": share(lambda s: s.numerical_facts.durations),
        "with_evidence": share(lambda s: s.evidence_items),
        "with_petitioner_type": share(lambda s: s.parties.petitioner.type != "Unknown"),
        "with_respondent_type": share(lambda s: s.parties.respondent.type != "Unknown"),
        "evidence_types": dict(sorted(pd.Series(
            [e.evidence_type for s in sheets for e in s.evidence_items]).value_counts().items())),
        "petitioner_types": dict(sorted(pd.Series(
            [s.parties.petitioner.type for s in sheets]).value_counts().items())),
    }


def _write(path: Path, sheets: Iterable[FactSheet]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for sheet in sheets:
            handle.write(sheet.model_dump_json() + "\n")


def judgment_sheets(documents: Path, extract_dir: Path, facts_fraction: float,
                    failures: list[dict]) -> Iterator[FactSheet]:
    metadata = pd.read_parquet(extract_dir / "metadata.parquet").set_index("doc_id")
    sections = read_sections(extract_dir / "sections.parquet")
    for doc in tqdm(read_documents(documents), desc="fact sheets", unit="doc"):
        if doc.doc_id not in metadata.index:
            continue  # the extract stage recorded why
        row = metadata.loc[doc.doc_id]
        try:
            yield extract_rules(doc.text, doc.doc_id, "judgment", sections.get(doc.doc_id),
                                row["petitioner"], row["respondent"], row["outcome_label"],
                                facts_fraction)
        except Exception as error:  # one unreadable judgment must not stop the corpus
            failures.append({"case_id": doc.doc_id, "reason": f"{type(error).__name__}: {error}"})


def run_factsheets(documents: Path, extract_dir: Path, queries: dict[str, str], out: Path,
                   facts_fraction: float = 0.2) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    failures: list[dict] = []
    started = time.perf_counter()
    judgments = sorted(judgment_sheets(documents, extract_dir, facts_fraction, failures),
                       key=lambda s: s.case_id)
    seconds = time.perf_counter() - started
    query_sheets = []
    for qid, text in queries.items():
        try:
            query_sheets.append(extract_rules(text, qid, "query"))
        except ValueError as error:
            failures.append({"case_id": qid, "reason": str(error)})
    _write(out / "judgments.jsonl", judgments)
    _write(out / "queries.jsonl", query_sheets)
    with (out / "failures.jsonl").open("w", encoding="utf-8") as handle:
        for failure in failures:
            handle.write(json.dumps(failure) + "\n")
    return {"rules": {"judgments": coverage(judgments), "queries": coverage(query_sheets),
                      "n_failures": len(failures)},
            "timing": {"rules_seconds": round(seconds, 2),
                       "rules_ms_per_judgment": round(1000 * seconds / max(1, len(judgments)), 3)}}


def agreement(rule: FactSheet, llm: FactSheet) -> dict[str, bool]:
    """Field by field, whether the two extractors found the same values."""
    def kinds(sheet: FactSheet) -> dict[str, set]:
        facts = sheet.numerical_facts
        return {"petitioner_type": {sheet.parties.petitioner.type},
                "respondent_type": {sheet.parties.respondent.type},
                "sections_cited": {s.section_id for s in sheet.sections_cited},
                "evidence_types": {e.evidence_type for e in sheet.evidence_items},
                "ages": {a.years for a in facts.ages}, "amounts": {a.value for a in facts.amounts},
                "durations": {(d.value, d.unit) for d in facts.durations}}
    a, b = kinds(rule), kinds(llm)
    return {field: a[field] == b[field] for field in a}


def run_llm(texts: dict[str, tuple[str, str, int]], rule_sheets: dict[str, FactSheet],
            out: Path, extractor) -> dict[str, Any]:
    """The LLM over ``texts`` (case id -> (facts text, source, offset of the facts)); its
    sheets, failures, the valid-JSON rate and the field agreement with the rule sheets."""
    statuses, agreements, sheets = [], [], []
    started = time.perf_counter()
    for case_id, (text, source, offset) in tqdm(texts.items(), desc="LLM fact sheets",
                                                unit="case"):
        sheet, status = extractor.extract(text, case_id, source, offset)
        statuses.append(status)
        if sheet is not None:
            sheets.append(sheet)
            agreements.append(agreement(rule_sheets[case_id], sheet))
    seconds = time.perf_counter() - started
    _write(out / "llm.jsonl", sheets)
    with (out / "llm_failures.jsonl").open("w", encoding="utf-8") as handle:
        for status in statuses:
            if not status["ok"]:
                handle.write(json.dumps(status) + "\n")
    n = len(statuses)
    fields = agreements[0].keys() if agreements else []
    return {"n": n, "valid_first_try": round(sum(s.get("tries") == 1 and s["ok"]
                                                 for s in statuses) / n, 4) if n else None,
            "valid_after_retry": round(sum(s["ok"] for s in statuses) / n, 4) if n else None,
            "ungrounded_values": sum(s.get("ungrounded_values", 0) for s in statuses),
            "agreement_with_rules": {f: round(sum(a[f] for a in agreements) / len(agreements), 4)
                                     for f in fields},
            "seconds_per_case": round(seconds / n, 2) if n else None}


def run_stage(params, documents: Path, extract_dir: Path, topics: dict[str, str], out: Path,
              recording: Path, mode: str, tag: Callable | None = None) -> dict[str, Any]:
    """Stage ``factsheets``: the rule sheets of every judgment and query, their entity tags
    (``tag(out, topics, documents)``: the ner layer's tagger, given by the command line, which
    sits above both), the number roles against their labelled samples, and the LLM's sheets
    (``mode``: replay or live) when ``factsheets.llm`` is on."""
    report = run_factsheets(documents, extract_dir, topics, out,
                            params.extract.facts_fallback_fraction)
    if tag is not None:
        tagged = tag(out, topics, documents)
        report["entities"] = tagged["entities"]
        report["timing"].update(tagged["timing"])
    report["number_roles"] = role_agreement(out / "judgments.jsonl")
    report["number_roles_read"] = role_counts(out / "judgments.jsonl")
    if params.factsheets.llm:
        report["llm"] = llm_sheets(out, params, topics, documents, recording, mode)
    return report


def role_agreement(sheets: Path) -> list[dict]:
    """The sheets' number roles against each labelled sample of data/gold/number_roles.md."""
    found = []
    for sample_path, labels_path, how in layout.NUMBER_ROLE_GOLD:
        if not (sample_path.exists() and labels_path.exists()):
            continue
        sample = [json.loads(line) for line in sample_path.open(encoding="utf-8")]
        found.append({"sample": sample_path.name, "use": how,
                      **role_labels_agreement(read_sheets(sheets), sample,
                                              read_labels(labels_path))})
    return found


def role_counts(sheets: Path) -> dict[str, dict]:
    """The judgments' numbers by kind and role, and the share whose role was not read (such a
    number crosses only the boundaries scoped to any role)."""
    counts = {kind: Counter() for kind in NUMBER_ROLES}
    for sheet in read_sheets(sheets):
        for kind in NUMBER_ROLES:
            counts[kind].update(n.role for n in getattr(sheet.numerical_facts, kind))
    return {kind: {"n": sum(c.values()), "by_role": dict(sorted(c.items())),
                   "unknown_share": round(c["unknown"] / sum(c.values()), 4) if c else None}
            for kind, c in counts.items()}


def llm_sheets(out: Path, params, topics: dict[str, str], documents: Path, recording: Path,
               mode: str) -> dict:
    """The LLM's sheets of the queries and a sample of judgments (replayed from ``recording``
    where it holds them), or why it did not run."""
    rule_sheets = {}
    for name in ("queries.jsonl", "judgments.jsonl"):
        for line in (out / name).read_text(encoding="utf-8").splitlines():
            sheet = validate_sheet(json.loads(line))
            rule_sheets[sheet.case_id] = sheet
    judgments = sorted(c for c in rule_sheets if not c.startswith("AILA_Q"))
    sample = set(random.Random(params.seed).sample(
        judgments, min(params.factsheets.llm_judgments, len(judgments))))
    limit = params.factsheets.llm_max_chars
    texts = {qid: (text[:limit], "query", 0) for qid, text in topics.items()}
    for doc in read_documents(documents):
        if doc.doc_id in sample:
            span = rule_sheets[doc.doc_id].facts_span
            texts[doc.doc_id] = (doc.text[span.start:span.end][:limit], "judgment", span.start)
    with open_recording("factsheets", mode, recording) as answers:
        try:
            report = run_llm(texts, rule_sheets, out, LlmExtractor(answers))
        except LlmUnavailableError as error:
            log.warning("LLM fact sheets skipped: %s", error)
            return {"status": f"not run: {error}"}
    return {"status": "run", **report, "recording": answers.counts.as_dict()}

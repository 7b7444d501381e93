"""Rhetorical-role annotations, and how well :func:`countercase.extract.segment.segment` agrees with them.

Two public annotation sets of Indian judgments are read from ``data/raw/rhetorical_roles``:

* **BUILD** (Kalamkar et al. 2022), dev split: ``build-kalamkar2022-dev/dev.json.gz``, Label-Studio
  JSON. 30 judgments (17 Supreme Court, 6 High Court, 7 trial court), 13 labels, character
  offsets into each judgment's full text (real layout: preamble, hard line wraps, numbered
  paragraphs). One judgment (id 4196) carries a second, coarser annotation of the same text
  (11 spans on top of the 86 of its first one): 2,890 spans in all, 2,879 in the first
  annotations. Scoring uses the first annotation of each judgment only, so that no text is counted
  twice; :func:`load_build` returns all 2,890 with their annotation index.
* **Paheli** (Bhattacharya et al. 2019): ``paheli-bhattacharya2019/paheli-dataset/*.json``,
  50 Supreme Court judgments, one ``sentence<TAB>label`` line per sentence (9,380 sentences,
  7 labels), split 40/5/5 in ``paheli-{train,dev,test}.json[.gz]`` (the same sentences, with
  offsets into their concatenation). The original paragraph layout, the paragraph numbers and
  most sentence-final full stops are gone. The text given to the segmenter is the sentences
  joined by ``"\\n"``, one per line, as the dataset ships them. That lets paragraph-start cue rules
  fire at every sentence start, which is kinder than real running text would be.

Label mapping onto the section types of :mod:`countercase.extract.segment`
(``Facts, Issues, Submissions, Held, Ratio, Obiter, Unknown``). The segmenter works at
*section* level: a stretch of the judgment gets one type. So a label goes to the section in
which such sentences sit in a judgment's usual order (preamble, facts with the history in the
courts below, issues, submissions, the court's reasoning, the order). The neighbour counts
quoted below are from :func:`label_neighbours`, which gives the nearest different label before and
after each span of a label.

==========================  ===========  =====================================================
label (dataset)             our type     why
==========================  ===========  =====================================================
FAC (B), Facts (P)          Facts        same notion
RLC (B), Ruling by Lower    Facts        the history of the case in the courts below is told
Court (P)                                with the facts, before issues and arguments: its
                                         nearest other label is FAC in 65 % of cases (BUILD),
                                         Facts in 48 % against 33 % Ratio (Paheli)
ISSUE (B)                   Issues       same notion (Paheli has no issue label)
ARG_PETITIONER,             Submissions  the parties' arguments are what the plan calls
ARG_RESPONDENT (B),                      submissions
Argument (P)
ANALYSIS (B)                Ratio        the court's own reasoning. A section-level segmenter
                                         cannot tell the reasoning that carries the decision
                                         (RATIO) from the rest of the reasoning that surrounds
                                         it; Paheli's own "Ratio of the decision" is defined
                                         as this whole reasoning. Mapping it to Obiter would
                                         claim that all discussion is obiter, which it is not
RATIO (B), Ratio of the     Ratio        same notion
decision (P)
PRE_RELIED,                 Ratio        precedents discussed by the court sit inside its
PRE_NOT_RELIED (B),                      reasoning: nearest other label ANALYSIS in 65 % / 71 %
Precedent (P)                            (BUILD), Ratio in 80 % (Paheli). Precedents cited by
                                         counsel are labelled ARG_* / Argument in both sets
STA (B), Statute (P)        Ratio        statutes are quoted mostly where the court applies
                                         them: nearest other label ANALYSIS in 66 % (BUILD),
                                         Ratio in 73 % (Paheli)
RPC (B), Ruling by Present  Held         the final decision / order
Court (P)
PREAMBLE, NONE (B)          Unknown      the header (parties, bench, citation) and the
                                         signature lines, dates and "xx xx" gaps are no section
(none)                      Obiter       no label in either set marks obiter dicta, so Obiter
                                         has no support: only its precision could be measured
==========================  ===========  =====================================================

Scoring (:func:`evaluate_segmentation`): every annotated span gets the section type that covers
most of its characters, and is compared with its mapped label. Per type: precision, recall, F1
and support (the number of spans whose gold type it is); plus micro accuracy (spans whose
type is right / all spans) and macro F1 over the types with support. Span counts weight short
and long sentences alike, as the annotations do.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from countercase.extract.segment import (
    BASELINE, FINAL, PLAN, RULE_NAMES, SECTION_TYPES, Rules, Segment, section_of_span, segment,
)

ROOT = Path(__file__).resolve().parents[3]
RR_DIR = ROOT / "data" / "raw" / "rhetorical_roles"
BUILD_DEV = RR_DIR / "build-kalamkar2022-dev" / "dev.json.gz"
PAHELI_DIR = RR_DIR / "paheli-bhattacharya2019"

BUILD_LABELS = (
    "FAC", "ISSUE", "ARG_PETITIONER", "ARG_RESPONDENT", "ANALYSIS", "RATIO", "RPC",
    "PRE_RELIED", "PRE_NOT_RELIED", "STA", "RLC", "PREAMBLE", "NONE",
)
PAHELI_LABELS = (
    "Facts", "Ruling by Lower Court", "Argument", "Statute", "Precedent",
    "Ratio of the decision", "Ruling by Present Court",
)

# The table in the module docstring, as data.
LABEL_MAP: dict[str, dict[str, str]] = {
    "build": {
        "FAC": "Facts",
        "RLC": "Facts",
        "ISSUE": "Issues",
        "ARG_PETITIONER": "Submissions",
        "ARG_RESPONDENT": "Submissions",
        "ANALYSIS": "Ratio",
        "RATIO": "Ratio",
        "PRE_RELIED": "Ratio",
        "PRE_NOT_RELIED": "Ratio",
        "STA": "Ratio",
        "RPC": "Held",
        "PREAMBLE": "Unknown",
        "NONE": "Unknown",
    },
    "paheli": {
        "Facts": "Facts",
        "Ruling by Lower Court": "Facts",
        "Argument": "Submissions",
        "Ratio of the decision": "Ratio",
        "Precedent": "Ratio",
        "Statute": "Ratio",
        "Ruling by Present Court": "Held",
    },
}


@dataclass(frozen=True)
class RoleSpan:
    start: int  # character offsets into AnnotatedJudgment.text
    end: int
    label: str  # the dataset's own label
    annotation: int = 0  # index of the annotation (annotator pass) the span belongs to


@dataclass
class AnnotatedJudgment:
    doc_id: str
    dataset: str  # "build" | "paheli"
    text: str
    spans: list[RoleSpan]
    meta: dict[str, Any] = field(default_factory=dict)


def _read_json(path: Path) -> Any:
    """Read ``path``, or ``path`` + ``.gz`` when only the compressed file exists."""
    if not path.exists() and Path(str(path) + ".gz").exists():
        path = Path(str(path) + ".gz")
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    return json.loads(path.read_text(encoding="utf-8"))


def _same_text(sliced: str, stored: str) -> bool:
    """The span's stored text is the slice, or (one span of the second pass on task 4196) a prefix of it."""
    if sliced == stored:
        return True
    a, b = " ".join(sliced.split()), " ".join(stored.split())
    return len(b) >= 40 and a.startswith(b)


def load_build(path: str | Path = BUILD_DEV) -> list[AnnotatedJudgment]:
    """The BUILD dev judgments, with every span of every annotation (offsets checked against the text)."""
    path = Path(path)
    if not path.exists() and path.suffix != ".gz" and Path(str(path) + ".gz").exists():
        path = Path(str(path) + ".gz")
    judgments = []
    for task in _read_json(path):
        text = task["data"]["text"]
        spans = []
        for index, annotation in enumerate(task["annotations"]):
            for result in annotation["result"]:
                value = result["value"]
                start, end = int(value["start"]), int(value["end"])
                if not 0 <= start <= end <= len(text) or not _same_text(text[start:end], value["text"]):
                    raise ValueError(f"BUILD task {task['id']}: span {start}-{end} does not match its text")
                (label,) = value["labels"]
                spans.append(RoleSpan(start, end, label, index))
        judgments.append(AnnotatedJudgment(str(task["id"]), "build", text, spans, dict(task.get("meta") or {})))
    return judgments


def _paheli_splits(directory: Path) -> dict[int, str]:
    splits = {}
    for split in ("train", "dev", "test"):
        for task in _read_json(directory / f"paheli-{split}.json"):
            splits[int(task["id"])] = split
    return splits


def load_paheli(directory: str | Path = PAHELI_DIR) -> list[AnnotatedJudgment]:
    """The 50 Paheli judgments: text = sentences joined by newlines; one span per sentence.

    ``meta`` holds the dataset's task id and its split (train/dev/test). The sentences are
    checked against the split files, which hold the same sentences with their own offsets.
    """
    directory = Path(directory)
    splits = _paheli_splits(directory)
    split_sentences: dict[int, list[tuple[str, str]]] = {}
    for split in ("train", "dev", "test"):
        for task in _read_json(directory / f"paheli-{split}.json"):
            (annotation,) = task["annotations"]
            split_sentences[int(task["id"])] = [
                (r["value"]["text"], r["value"]["labels"][0]) for r in annotation["result"]
            ]
    judgments = []
    for path in sorted((directory / "paheli-dataset").glob("*.json")):
        record = _read_json(path)
        task_id = int(record["id"])
        sentences = []
        for line in record["data"]["text"].split("\n"):
            if not line.strip():
                continue
            sentence, label = line.rsplit("\t", 1)
            sentences.append((sentence, label))
        if split_sentences.get(task_id) != sentences:
            raise ValueError(f"Paheli {path.name}: sentences differ from the split file's task {task_id}")
        parts, spans, offset = [], [], 0
        for sentence, label in sentences:
            spans.append(RoleSpan(offset, offset + len(sentence), label))
            parts.append(sentence)
            offset += len(sentence) + 1
        judgments.append(AnnotatedJudgment(
            path.stem, "paheli", "\n".join(parts), spans,
            {"task_id": task_id, "split": splits.get(task_id)},
        ))
    return judgments


def load_all(directory: str | Path = RR_DIR) -> dict[str, list[AnnotatedJudgment]]:
    """Both annotation sets, from ``directory`` (``data/raw/rhetorical_roles``)."""
    directory = Path(directory)
    return {
        "build": load_build(directory / "build-kalamkar2022-dev" / "dev.json.gz"),
        "paheli": load_paheli(directory / "paheli-bhattacharya2019"),
    }


def scored_spans(judgment: AnnotatedJudgment) -> list[RoleSpan]:
    """The spans that are scored: the first annotation's (see the module docstring)."""
    return [span for span in judgment.spans if span.annotation == 0]


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | None]:
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None or precision + recall == 0:
        f1 = 0.0 if (precision is not None and recall is not None) else None
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return {k: (None if v is None else round(v, 4)) for k, v in
            (("precision", precision), ("recall", recall), ("f1", f1))}


def score_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Per-type precision/recall/F1/support and micro accuracy over (gold, predicted) pairs."""
    pairs = list(pairs)
    confusion: dict[str, Counter[str]] = {t: Counter() for t in SECTION_TYPES}
    for gold, pred in pairs:
        confusion[gold][pred] += 1
    per_type = {}
    for t in SECTION_TYPES:
        tp = confusion[t][t]
        fn = sum(confusion[t].values()) - tp
        fp = sum(confusion[g][t] for g in SECTION_TYPES if g != t)
        per_type[t] = {**_prf(tp, fp, fn), "support": tp + fn, "predicted": tp + fp}
    with_support = [per_type[t]["f1"] or 0.0 for t in SECTION_TYPES if per_type[t]["support"]]
    correct = sum(confusion[t][t] for t in SECTION_TYPES)
    return {
        "n_spans": len(pairs),
        "accuracy": round(correct / len(pairs), 4) if pairs else None,
        "macro_f1": round(sum(with_support) / len(with_support), 4) if with_support else None,
        "per_type": per_type,
        "confusion": {g: {p: confusion[g][p] for p in SECTION_TYPES if confusion[g][p]}
                      for g in SECTION_TYPES if confusion[g]},
    }


Segmenter = Callable[[str], list[Segment]]


def _as_segmenter(segmenter: Segmenter | Rules) -> Segmenter:
    if isinstance(segmenter, Rules):
        rules = segmenter
        return lambda text: segment(text, rules)
    return segmenter


def evaluate_judgments(
    judgments: Sequence[AnnotatedJudgment],
    segmenter: Segmenter | Rules = FINAL,
    label_map: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Score a segmenter (a function, or :class:`Rules` for :func:`segment`) on judgments of one dataset."""
    run = _as_segmenter(segmenter)
    pairs = []
    for judgment in judgments:
        mapping = label_map or LABEL_MAP[judgment.dataset]
        segments = run(judgment.text)
        for span in scored_spans(judgment):
            pairs.append((mapping[span.label], section_of_span(segments, span.start, span.end)))
    result = score_pairs(pairs)
    result["n_judgments"] = len(judgments)
    return result


def evaluate_segmentation(
    segmenter: Segmenter | Rules = FINAL,
    datasets: dict[str, Sequence[AnnotatedJudgment]] | None = None,
) -> dict[str, Any]:
    """Per-dataset scores of a segmenter (default: :func:`segment` with the final rules), JSON-ready.

    ``datasets`` defaults to both annotation sets (:func:`load_all`). For Paheli the scores of its
    5 test judgments are added under ``"paheli_test"``: the rules were written looking at the other
    judgments (and at BUILD dev), so these few are the only unseen ones.
    """
    datasets = dict(datasets) if datasets is not None else load_all()
    result = {name: evaluate_judgments(judgments, segmenter) for name, judgments in datasets.items()}
    if "paheli" in datasets:
        test = [j for j in datasets["paheli"] if j.meta.get("split") == "test"]
        if test:
            result["paheli_test"] = evaluate_judgments(test, segmenter)
    return result


def ablation(datasets: dict[str, Sequence[AnnotatedJudgment]] | None = None,
             rules: Rules = FINAL) -> dict[str, dict[str, float]]:
    """Span accuracy per dataset of ``rules``, and of ``rules`` with each rule switched off in turn."""
    datasets = dict(datasets) if datasets is not None else load_all()
    variants = {"final": rules, **{f"without_{name}": rules.without(name) for name in RULE_NAMES}}
    return {name: {ds: evaluate_judgments(js, variant)["accuracy"] for ds, js in datasets.items()}
            for name, variant in variants.items()}


def segmentation_report(datasets: dict[str, Sequence[AnnotatedJudgment]] | None = None) -> dict[str, Any]:
    """Baseline (the 20 % fallback alone), the plan (headings + fallback) and the final rules, plus the ablation."""
    datasets = dict(datasets) if datasets is not None else load_all()
    return {
        "baseline": evaluate_segmentation(BASELINE, datasets),
        "plan": evaluate_segmentation(PLAN, datasets),
        "final": evaluate_segmentation(FINAL, datasets),
        "ablation": ablation(datasets),
    }


def label_neighbours(judgments: Sequence[AnnotatedJudgment]) -> dict[str, dict[str, int]]:
    """For each label: how often each other label is the nearest different one before/after its spans.

    This is the evidence behind the mapping of labels that have no section of their own.
    """
    counts: dict[str, Counter[str]] = {}
    for judgment in judgments:
        labels = [s.label for s in sorted(scored_spans(judgment), key=lambda s: (s.start, s.end))]
        for i, label in enumerate(labels):
            for step in (-1, 1):
                j = i + step
                while 0 <= j < len(labels) and labels[j] == label:
                    j += step
                if 0 <= j < len(labels):
                    counts.setdefault(label, Counter())[labels[j]] += 1
    return {label: dict(c.most_common()) for label, c in sorted(counts.items())}


def label_counts(judgments: Sequence[AnnotatedJudgment], scored_only: bool = False) -> dict[str, int]:
    counter: Counter[str] = Counter()
    for judgment in judgments:
        for span in (scored_spans(judgment) if scored_only else judgment.spans):
            counter[span.label] += 1
    return dict(counter.most_common())

"""Roles of numbers: whose age it is, what a sum is, what a period measures.

A boundary of ``thresholds.yaml`` applies to a number of one role (the age of criminal
responsibility to the accused, never to a murdered child), so the fact sheet records each
number's role (:data:`NUMBER_ROLES`). The rules read it from the words of the
number's own sentence: each role has cue words, and the cue nearest the number wins (one before
it at equal distance). A number with no cue is ``unknown``; it stays in the sheet and crosses only
boundaries scoped to any role.

In a criminal case "the appellant" or "the petitioner" is the accused; elsewhere a party.

:func:`sample_numbers` draws the numbers a labeller reads to measure the rules
(``data/gold/number_roles.md``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any, Iterable

# Whose number it is, or what it measures, by kind of number; "unknown" where the text does not
# say (such a number crosses only boundaries scoped to "any" role).
NUMBER_ROLES: dict[str, tuple[str, ...]] = {
    "ages": ("accused", "victim", "witness", "employee", "party", "unknown"),
    "amounts": ("fine", "compensation", "dowry", "loan", "suit_value", "bribe", "cheque",
                "unknown"),
    "durations": ("sentence", "delay", "limitation", "employment", "marriage", "custody",
                  "unknown"),
}

WINDOW = 90  # characters read either side of a number, within its sentence

_CUES: dict[str, tuple[tuple[str, str], ...]] = {
    "ages": (
        ("accused", r"accused|convict(?:ed)?|juvenile|assailants?|A-?\d+"),
        ("victim", r"deceased|victims?|prosecutrix|injured|died|murdered|killed|raped|"
                   r"kidnapped|abducted|girl|boy|child|(?:murder|death|rape|kidnapping|"
                   r"abduction|stabbing) of"),
        ("witness", r"witness(?:es)?|P\.?\s?W\.?\s?-?\d+|informant|D\.?\s?W\.?\s?-?\d+|"
                    r"deponent"),
        ("employee", r"superannuat\w*|retire\w*|employee|employed|appointed|appointment|"
                     r"in service|attain\w*|retain\w*|completed"),
        ("party", r"plaintiffs?|defendants?|bride(?:groom)?|husband|wife|guardian|"
                  r"appellants?|petitioners?|respondents?"),
    ),
    "amounts": (
        ("fine", r"fine[ds]?|in default"),
        ("compensation", r"compensation|damages|award(?:ed)?|claim(?:ed|s)?|claimants?|"
                         r"ex gratia|solatium|relief|market value|acquisition|acquired|"
                         r"L\.?A\.?O\.?|per (?:acre|sq|square|hec\w*)"),
        ("dowry", r"dowry|demand(?:ed|s)?"),
        ("loan", r"loan|borrow\w*|lent|advance[ds]?|debt|mortgage\w*|repay\w*"),
        ("suit_value", r"suit|valued|consideration|price|sale|decree|contract|agreement"),
        ("bribe", r"bribe\w*|gratification|illegal(?:ly)? (?:demand|accept)\w*"),
        ("cheque", r"cheques?|dishono\w*"),
    ),
    "durations": (
        ("sentence", r"imprisonment|sentenced?|R\.\s?I\.|S\.\s?I\.|rigorous|"
                     r"simple imprisonment"),
        ("custody", r"custody|in jail|incarcerat\w*|detention|detained|undergone|remand\w*"),
        ("marriage", r"marriage|married|wedlock"),
        ("employment", r"service|employed|worked|working|served|employment|experience|"
                       r"probation"),
        ("limitation", r"limitation|time.barred|prescribed period|before the expiry"),
        ("delay", r"delay(?:ed)?|belated(?:ly)?|late|lodged|barred by"),
    ),
}
# a cue stands alone: no word character touches it (a cue may end in a full stop, "R.I.")
_COMPILED = {kind: [(role, re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", re.I))
                    for role, pattern in cues] for kind, cues in _CUES.items()}
_SENTENCE_END = re.compile(r"(?<!\bNo)(?<!\bsec)(?<!\bs)(?<![A-Z])[.;]\s+(?=[A-Z(])")
_CRIMINAL_PARTY = re.compile(r"^(?:appellants?|petitioners?)$", re.I)


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the window around [start, end) cut at the sentence's ends."""
    left = max(0, start - WINDOW)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, left, start)]
    left = ends[-1] if ends else left
    right = min(len(text), end + WINDOW)
    stop = _SENTENCE_END.search(text, end, right)
    return left, stop.start() + 1 if stop else right


def read_role(kind: str, text: str, start: int, end: int, criminal: bool = False) -> str:
    """The role of the number at ``text[start:end]`` of ``kind`` (ages, amounts, durations)."""
    if kind not in _COMPILED:
        raise ValueError(f"unknown number kind {kind!r}: use one of {', '.join(_COMPILED)}")
    left, right = _sentence(text, start, end)
    best: tuple[int, int, str] | None = None  # (distance, after?, role)
    for role, pattern in _COMPILED[kind]:
        for m in pattern.finditer(text, left, right):
            if start <= m.start() < end:
                continue  # the number's own words ("3 years' imprisonment" is read as after)
            before = m.end() <= start
            distance = start - m.end() if before else m.start() - end
            if kind == "ages" and role == "party" and criminal and \
                    _CRIMINAL_PARTY.match(m.group()):
                role = "accused"
            candidate = (distance, 0 if before else 1, role)
            if best is None or candidate < best:
                best = candidate
    return best[2] if best else "unknown"


def item_id(case_id: str, kind: str, start: int) -> str:
    return hashlib.sha1(f"{case_id}\n{kind}\n{start}".encode()).hexdigest()[:12]


def sample_numbers(sheets: Iterable[Any], texts: dict[str, str], per_kind: int, seed: int,
                   context: int = 300, exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Up to ``per_kind`` numbers of each kind from a seeded shuffle of all the sheets' numbers
    (none whose item id is in ``exclude``), each with ``context`` characters of text either
    side (what a labeller reads)."""
    exclude = set(exclude)
    pools: dict[str, list[dict[str, Any]]] = {kind: [] for kind in NUMBER_ROLES}
    for sheet in sorted(sheets, key=lambda s: s.case_id):
        text = texts.get(sheet.case_id)
        if text is None:
            continue
        for kind in NUMBER_ROLES:
            for number in getattr(sheet.numerical_facts, kind):
                if number.span is None:
                    continue
                a, b = number.span.start, number.span.end
                if item_id(sheet.case_id, kind, a) in exclude:
                    continue
                pools[kind].append({
                    "item": item_id(sheet.case_id, kind, a), "case_id": sheet.case_id,
                    "kind": kind, "start": a, "end": b,
                    "before": text[max(0, a - context):a], "span": text[a:b],
                    "after": text[b:b + context]})
    rng = random.Random(seed)
    drawn = []
    for kind in NUMBER_ROLES:
        items = pools[kind]
        rng.shuffle(items)
        drawn += items[:per_kind]
    return drawn


def read_labels(path) -> dict[str, str]:
    """item id -> role of a label file (data/gold/number_roles.md: a header line, then labels)."""
    labels = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                row = json.loads(line)
            except ValueError:
                raise ValueError(f"{path}:{number}: not JSON") from None
            if "item" in row:
                labels[row["item"]] = row["role"]
    return labels


def agreement(sheets: Iterable[Any], sample: list[dict[str, Any]],
              labels: dict[str, str]) -> dict[str, Any]:
    """The sheets' roles against a labelled sample, per kind: accuracy, its count, and the
    confusion table ``{gold: {read: n}}``. A labelled number the sheets no longer hold (by its
    case, kind and start) is read as ``missing``."""
    read = {}
    for sheet in sheets:
        for kind in NUMBER_ROLES:
            for number in getattr(sheet.numerical_facts, kind):
                if number.span is not None:
                    read[item_id(sheet.case_id, kind, number.span.start)] = number.role
    found: dict[str, Any] = {}
    for kind in NUMBER_ROLES:
        rows = [(labels[s["item"]], read.get(s["item"], "missing")) for s in sample
                if s["kind"] == kind and s["item"] in labels]
        table: dict[str, dict[str, int]] = {}
        for gold, got in rows:
            table.setdefault(gold, {}).setdefault(got, 0)
            table[gold][got] += 1
        right = sum(gold == got for gold, got in rows)
        found[kind] = {"n": len(rows), "accuracy": round(right / len(rows), 4) if rows else None,
                       "confusion": {g: dict(sorted(t.items())) for g, t in sorted(table.items())}}
    return found

"""The legal label against the hand labels of ``data/gold/perturbation_labels.jsonl`` (two AI
annotators, A and B): each labelled change is read back from its description (the rules'
wording when it was drawn), labelled operative when it is so for any of the case's cited
precedents, and compared with each annotator's ``operative``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from countercase.confirm.analysis import agreement
from countercase.confirm.label import Reasons, operative
from countercase.perturb.rules import Perturbation

_NUMBER = r"([\d,]+(?:\.\d+)?)"
_PATTERNS: list[tuple[re.Pattern, Callable[[re.Match], Perturbation]]] = [
    (re.compile(r"^Section (\S+) changed to (\S+)"),
     lambda m: Perturbation("section", "sections_cited.0", m[1], m[2], "", "")),
    (re.compile(r"^(\w+) added$"),
     lambda m: Perturbation("evidence", "evidence_items", None, m[1], "", "")),
    (re.compile(r"^(\w+) removed"),
     lambda m: Perturbation("evidence", "evidence_items", m[1], None, "", "")),
    (re.compile(rf"^Age changed from {_NUMBER} to {_NUMBER}"),
     lambda m: Perturbation("numerical", "numerical_facts.ages.0", _float(m[1]), _float(m[2]),
                            "", "")),
    (re.compile(rf"^Amount changed from Rs {_NUMBER} to Rs {_NUMBER}"),
     lambda m: Perturbation("numerical", "numerical_facts.amounts.0", _float(m[1]),
                            _float(m[2]), "", "")),
    (re.compile(rf"^Duration changed from {_NUMBER} (\w+) to {_NUMBER} (\w+)"),
     lambda m: Perturbation("numerical", "numerical_facts.durations.0", (_float(m[1]), m[2]),
                            (_float(m[3]), m[4]), "", "")),
    (re.compile(rf"^Duration \w+ from {_NUMBER} to {_NUMBER} (\w+)"),
     lambda m: Perturbation("numerical", "numerical_facts.durations.0", (_float(m[1]), m[3]),
                            (_float(m[2]), m[3]), "", "")),
    (re.compile(r"^The (petitioner|respondent) changed from (\w+) to (\w+)"),
     lambda m: Perturbation("party", f"parties.{m[1]}", m[2], m[3], "", "")),
]


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def perturbation_of(description: str) -> Perturbation | None:
    """The change a rule's description states (None: a wording none of the patterns reads)."""
    for pattern, build in _PATTERNS:
        found = pattern.match(description)
        if found:
            return build(found)
    return None


def label_agreement(path: Path, cited: Mapping[str, tuple[str, ...]],
                    reasons: Callable[[tuple[str, ...]], Mapping[str, Reasons]]
                    ) -> dict[str, Any]:
    """The label against each annotator of the hand labels at ``path``; ``cited``: case ->
    its cited precedents; ``reasons``: precedents -> their Reasons."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    ours: dict[tuple[str, str], bool] = {}
    unread = set()
    for row in rows:
        key = (row["case_id"], row["description"])
        change = perturbation_of(row["description"])
        if change is None:
            unread.add(key)
            continue
        found = reasons(cited.get(row["case_id"], ()))
        ours[key] = any(operative(change, r) for r in found.values())
    labels: dict[str, dict[tuple[str, str], bool]] = {}
    for row in rows:
        labels.setdefault(row["annotator"], {})[(row["case_id"], row["description"])] = bool(
            row["operative"])
    return {**agreement(ours, labels), "items_labelled": len({(r["case_id"], r["description"])
                                                              for r in rows}),
            "items_unread": len(unread)}

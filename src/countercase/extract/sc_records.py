"""The Supreme Court open dataset's metadata records, indexed by judgment date, for linking.

The AILA texts name only the author of a judgment; the records list the bench. A judgment is
linked to a record only when the date is the same and the party names agree, and only one record
agrees: ambiguity links nothing.
"""

from __future__ import annotations

import datetime as dt
import gzip
import html
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

_STOP = {"the", "and", "ors", "others", "anr", "another", "of", "state", "through", "thr", "by",
         "its", "etc", "smt", "shri", "sri", "mr", "mrs", "ltd", "limited", "pvt", "co", "m/s",
         "union", "india", "secretary", "govt", "government", "lrs", "dead", "deceased"}
_TITLE = re.compile(r"HON(?:'|&#39;|’)?BLE\s+(?:MR\.?|MRS\.?|MS\.?|DR\.?)?\s*(?:JUSTICE\s+)?", re.I)


def _tokens(name: Any) -> set[str]:
    words = re.findall(r"[a-z]{3,}", html.unescape(str(name or "")).lower())
    return {w for w in words if w not in _STOP}


def record_judges(record: dict[str, Any]) -> list[str]:
    """Judge names of a record's ``bench`` ("D.K. JAIN,CHANDRAMAULI KR. PRASAD, , , ")."""
    bench = html.unescape(str(record.get("bench") or ""))
    names = []
    for part in bench.split(","):
        name = re.sub(r"\s+", " ", _TITLE.sub("", part)).strip(" .")
        if name and name.upper() != "THE CHIEF JUSTICE":
            names.append(name.title())
        elif name:
            names.append("The Chief Justice")
    return names


def _date(value: str) -> dt.date | None:
    try:
        return dt.datetime.strptime(value.strip(), "%d-%m-%Y").date()
    except (ValueError, AttributeError):
        return None


class ScIndex:
    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.by_date: dict[dt.date, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            day = _date(str(record.get("judgment_dates") or ""))
            if day:
                self.by_date[day].append(record)
        self.n_records = len(records)

    def match(self, day: dt.date | None, petitioner: str | None,
              respondent: str | None) -> dict[str, Any] | None:
        if day is None:
            return None
        pet, res = _tokens(petitioner), _tokens(respondent)
        if not pet and not res:
            return None
        scored = []
        for record in self.by_date.get(day, ()):
            rp, rr = _tokens(record.get("pet")), _tokens(record.get("res"))
            overlap = len(pet & rp) + len(res & rr)
            if overlap and (not pet or pet & rp) and (not res or res & rr or not rr):
                scored.append((overlap, record))
        if not scored:
            return None
        scored.sort(key=lambda pair: -pair[0])
        if len(scored) > 1 and scored[1][0] == scored[0][0]:
            return None  # two records agree equally: do not guess
        return scored[0][1]


def load_sc_index(directory: str | Path) -> ScIndex:
    records: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("*.json*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            payload = json.load(handle)
        records += payload.get("data", []) if isinstance(payload, dict) else payload
    return ScIndex(records)

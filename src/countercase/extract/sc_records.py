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
_TITLE = re.compile(r"HON(?:'|&#39;|’)?BLE\s+(?:MRS\.?|MR\.?|MS\.?|DR\.?)?\s*(?:JUSTICE\s+)?", re.I)


def _tokens(name: Any) -> set[str]:
    words = re.findall(r"[a-z]{3,}", html.unescape(str(name or "")).lower())
    return {w for w in words if w not in _STOP}


_ROLE = re.compile(r"\(+\s*(?:CJI?|J)\s*\)|\bC\.?\s?J\.?\s?I\.?(?=\s|$)", re.I)
_INITIALS_ONLY = re.compile(r"^(?:[A-Z]\.\s?)*[A-Z]\.?$", re.I)
_CHIEF = re.compile(r"^(?:THE\s+)?(?:HON'?BLE\s+)?(?:THE\s+)?CHIEF\s+JUSTICE(?:\s+OF\s+INDIA)?$|^C\.?\s?J\.?\s?I\.?$",
                    re.I)


def _tidy(name: str) -> str:
    name = re.sub(r"\s+", " ", _TITLE.sub("", name)).strip(" .,")
    return "The Chief Justice" if _CHIEF.match(name) else name.title()


def record_bench(record: dict[str, Any]) -> tuple[list[str], bool]:
    """Judge names of a record's ``bench``, and whether the list is complete (not truncated).

    The field comes in several layouts, by period: "HON'BLE MR. JUSTICE A, HON'BLE MS. JUSTICE B";
    "D.K. JAIN,CHANDRAMAULI KR. PRASAD, , , "; surname first, pairs joined by "," or "&":
    "SIKRI, S.M. (CJ),SHELAT, J.M.,MITTER, G.K."; one surname-first name "KOSHAL,A.D.". Old
    records are cut at a fixed length, which leaves a last part of bare initials ("...,J.C."):
    such a list is marked incomplete.
    """
    bench = html.unescape(str(record.get("bench") or "")).replace("\t", " ").strip(" ,")
    if not bench:
        return [], False
    complete = True
    if re.search(r"BLE", bench, re.I):
        parts = [p for p in bench.split(",")]
    elif re.search(r"[A-Za-z.)], +[A-Z]", bench) and not re.search(r"\s,", bench):
        # surname-first pairs: "SURNAME, GIVEN" joined by "," (no space) or "&"
        parts = []
        for entry in re.split(r",(?=\S)|\s*&\s*", bench):
            surname, _, given = entry.partition(", ")
            given = _ROLE.sub("", given).strip()
            if not given and _INITIALS_ONLY.match(surname.strip()):
                complete = False  # a truncated tail
                continue
            parts.append(f"{given} {surname}" if given else surname)
    else:
        parts = [p for p in re.split(r"\s*,\s*|\s+CJI\s+(?=[A-Z])", bench) if p.strip()]
        if len(parts) == 2 and re.fullmatch(r"[A-Za-z]+", parts[0].strip()) and \
                not _CHIEF.match(parts[0].strip()):
            parts = [f"{parts[1]} {parts[0]}"]  # "KOSHAL,A.D.", "REDDY,O. CHINNAPPA (J)": one judge
    names = []
    for i, part in enumerate(parts):
        part = _ROLE.sub(" ", part)
        if not part.strip(" .,"):
            continue
        if _INITIALS_ONLY.match(part.strip()) and i == len(parts) - 1:
            complete = False  # "...,K.C. DAS GUPTA,J.C." was cut off
            continue
        names.append(_tidy(part))
    return names, complete


def record_judges(record: dict[str, Any]) -> list[str]:
    """Judge names of a record's ``bench`` ("D.K. JAIN,CHANDRAMAULI KR. PRASAD, , , ")."""
    return record_bench(record)[0]


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

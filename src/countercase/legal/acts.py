"""The registry of acts the project knows: one place for act codes, names and dates.

Canonical section ids are ``<CODE>-<number>`` (``IPC-302``, ``IPC-498A``, ``CrPC-439``,
``BNS-103``); the Constitution uses ``Constitution-Article-<n>``. Every extractor, the statute
table and the retrieval filters speak these ids and nothing else.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Act:
    code: str
    title: str
    year: int
    aliases: tuple[str, ...] = field(default_factory=tuple)
    unit: str = "Section"  # what a numbered provision is called ("Section" or "Article")
    effective_from: dt.date | None = None
    effective_to: dt.date | None = None


# Repealed on 2024-07-01 by the three new criminal codes (BNS, BNSS, BSA).
OLD_CRIMINAL_END = dt.date(2024, 6, 30)
NEW_CRIMINAL_START = dt.date(2024, 7, 1)

ACTS: tuple[Act, ...] = (
    Act("IPC", "Indian Penal Code", 1860,
        ("indian penal code", "penal code", "i.p.c.", "ipc"),
        effective_from=dt.date(1862, 1, 1), effective_to=OLD_CRIMINAL_END),
    Act("CrPC", "Code of Criminal Procedure", 1973,
        ("code of criminal procedure", "criminal procedure code", "cr.p.c.", "crpc", "cr. p.c.",
         "cr.p.c", "criminal p.c."),
        effective_from=dt.date(1974, 4, 1), effective_to=OLD_CRIMINAL_END),
    Act("CPC", "Code of Civil Procedure", 1908,
        ("code of civil procedure", "civil procedure code", "c.p.c.", "cpc", "civil p.c."),
        effective_from=dt.date(1909, 1, 1)),
    Act("IEA", "Indian Evidence Act", 1872,
        ("indian evidence act", "evidence act", "i.e.a."),
        effective_from=dt.date(1872, 9, 1), effective_to=OLD_CRIMINAL_END),
    Act("HMA", "Hindu Marriage Act", 1955, ("hindu marriage act",),
        effective_from=dt.date(1955, 5, 18)),
    Act("IDA", "Indian Divorce Act", 1869, ("indian divorce act", "divorce act"),
        effective_from=dt.date(1869, 4, 1)),
    Act("NIA", "Negotiable Instruments Act", 1881,
        ("negotiable instruments act", "n.i. act", "ni act"),
        effective_from=dt.date(1882, 3, 1)),
    Act("MVA", "Motor Vehicles Act", 1988, ("motor vehicles act", "m.v. act", "mv act"),
        effective_from=dt.date(1989, 7, 1)),
    Act("BNS", "Bharatiya Nyaya Sanhita", 2023, ("bharatiya nyaya sanhita", "bns"),
        effective_from=NEW_CRIMINAL_START),
    Act("BNSS", "Bharatiya Nagarik Suraksha Sanhita", 2023,
        ("bharatiya nagarik suraksha sanhita", "bnss"), effective_from=NEW_CRIMINAL_START),
    Act("BSA", "Bharatiya Sakshya Adhiniyam", 2023, ("bharatiya sakshya adhiniyam", "bsa"),
        effective_from=NEW_CRIMINAL_START),
    Act("Constitution", "Constitution of India", 1950,
        ("constitution of india", "constitution"), unit="Article",
        effective_from=dt.date(1950, 1, 26)),
)

ACTS_BY_CODE: dict[str, Act] = {act.code: act for act in ACTS}


def section_id(act_code: str, number: str) -> str:
    """Canonical id of one provision: ``section_id("IPC", "498a") == "IPC-498A"``."""
    act = ACTS_BY_CODE[act_code]
    number = number.strip().upper()
    if act.unit == "Article":
        return f"{act.code}-Article-{number}"
    return f"{act.code}-{number}"

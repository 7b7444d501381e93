"""The legal domains of a case (:data:`CASE_CATEGORIES`): which boundaries,
party axes and evidence toggles can apply to it.

A case may belong to several (a dowry death is criminal; a cheque dishonour criminal and
commercial; a criminal appeal that invokes Article 21, criminal and constitutional). Read from
the acts and sections the fact sheet cites, then from words of the case's text that name the
domain. A case that shows none is ``civil``: the residual domain of the Supreme Court's appeals.
"""

from __future__ import annotations

import re
from typing import Iterable

# The legal domains a case belongs to (a case may belong to several): a boundary of
# thresholds.yaml, a party axis or an evidence toggle applies only in the categories it names.
CASE_CATEGORIES: tuple[str, ...] = (
    "criminal", "civil", "service", "tax", "constitutional", "family", "motor_accident",
    "commercial", "consumer")

CRIMINAL_ACTS = frozenset({"IPC", "CrPC", "BNS", "BNSS", "IEA", "BSA"})
# Articles of the Constitution whose invocation makes a case constitutional: the fundamental
# rights (Part III) and the writ jurisdictions; Article 136 (special leave) and the appeal
# articles do not, as every kind of case comes by them.
CONSTITUTIONAL_ARTICLES = frozenset(
    {str(n) for n in range(12, 36)} | {"31A", "31B", "31C", "21A", "32", "226", "227"})
SERVICE_ARTICLES = frozenset({"16", "309", "310", "311", "312", "320"})
_WORDS: dict[str, re.Pattern] = {
    category: re.compile(rf"\b(?:{pattern})\b", re.I) for category, pattern in {
        "criminal": r"accused|prosecution|convicted|acquitt\w+|F\.?I\.?R\.?|charge.?sheet",
        "service": r"superannuation|seniority|promotion|disciplinary (?:proceedings|enquiry)|"
                   r"dismiss\w* from service|pension|pay scale",
        "tax": r"income.?tax|sales.?tax|excise|customs duty|assessee|assessment year|"
               r"service tax|GST",
        "family": r"divorce|maintenance|custody of the (?:child|minor)|matrimonial|"
                  r"restitution of conjugal|Hindu Marriage Act",
        "motor_accident": r"Motor Accidents? Claims? Tribunal|M\.?A\.?C\.?T|Motor Vehicles Act|"
                          r"accident claim",
        "commercial": r"arbitra\w+|commercial (?:suit|dispute|court)|debentures?|"
                      r"partnership firm|dishono\w+ of (?:the )?cheque",
        "consumer": r"Consumer (?:Protection|Disputes|Forum|Commission)|deficiency in service",
        "constitutional": r"writ petition|fundamental right\w*|ultra vires the Constitution",
    }.items()}
_ARTICLE = re.compile(r"^Constitution-Article-(\w+)$")


def categories(section_ids: Iterable[str], text: str = "") -> frozenset[str]:
    """The domains of a case citing ``section_ids`` (canonical ids) whose text is ``text``."""
    found: set[str] = set()
    for section_id in section_ids:
        act = section_id.split("-")[0]
        if act in CRIMINAL_ACTS:
            found.add("criminal")
        elif act == "NIA":
            found |= {"criminal", "commercial"}
        elif act == "MVA":
            found.add("motor_accident")
        elif act in ("HMA", "IDA"):
            found.add("family")
        elif act == "CPC":
            found.add("civil")
        article = _ARTICLE.match(section_id)
        if article:
            if article.group(1) in CONSTITUTIONAL_ARTICLES:
                found.add("constitutional")
            if article.group(1) in SERVICE_ARTICLES:
                found.add("service")
    for category, pattern in _WORDS.items():
        if pattern.search(text):
            found.add(category)
    return frozenset(found or {"civil"})

"""Metadata of one judgment (plan section 4), from its text, and from the Supreme Court's
metadata record where the judgment can be linked to one (see :mod:`sc_records`).

Two header layouts are read: the AILA text header (title, court, date, case number,
"The Judgment was delivered by: X, J.") and the court's own PDF layout (cause title with
"APPELLANT(S)"/"VERSUS"/"RESPONDENT(S)", judges' signature blocks "(A.K. SIKRI)" and
"NEW DELHI; APRIL 10, 2018." at the end); reporter PDFs ("Decided On: 13.04.2007",
"Hon'ble Judges/Coram:") are read too. Every field has a ``sources`` entry saying where it came
from; a field that cannot be read is None or "Unknown", never a guess.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from countercase.extract.act_sections import normalise_sections
from countercase.extract.sc_records import ScIndex, record_judges
from countercase.ingest.document import Document
from countercase.vocab import bench_type_for

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\s*,?\s+(\d{{4}})\b", re.I)
_DATE_MDY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})\s*,\s*(\d{{4}})\b", re.I)
_DATE_NUM = re.compile(r"\b(\d{1,2})[./-](\d{1,2})[./-](\d{4})\b")
_DELIVERED = re.compile(r"delivered\s+by\s*:?\s*(?P<name>[^\n]+?)\s*,?\s*(?:C\.\s*)?J\.?\s*$", re.I | re.M)
_CASE_NO = re.compile(
    r"^(?P<type>[A-Za-z][A-Za-z.() ]{2,60}?)\s*No(?:s)?\.?\s*(?:\(S\))?\.?\s*(?P<num>\d[\d\-/ ,&]*?)\s+of\s+(?P<year>\d{4})",
    re.I | re.M)
_TITLE_SPLIT = re.compile(r"\s+(?:v\.?|vs\.?|versus)\s+", re.I)
_SIGNATURE = re.compile(r"^\s*[\(\[](?P<name>[A-Z][A-Za-z.\s'’-]{2,40})[\)\]]\s*$", re.M)
_CORAM = re.compile(r"Hon'?ble\s+Judges/Coram:\s*\n(?P<names>[^\n]+)", re.I)
_CITATION = re.compile(
    r"(?:AIR\s+\d{4}\s+SC\s+\d+|\(\d{4}\)\s+\d+\s+SCC\s+\d+|\[\d{4}\]\s+\d+\s+S\.?C\.?R\.?\s+\d+"
    r"|\d{4}\s+SCR\s+\(\d+\)\s+\d+|\d{4}\s+INSC\s+\d+|\d{4}\s+\(\d+\)\s+SCALE\s+\d+|JT\s+\d{4}\s+\(\d+\)\s+SC\s+\d+)")
_BODY_START = re.compile(r"^\s*(?:1\.\s|JUDGMENT\b|ORDER\b|The Judgment was delivered)", re.M | re.I)
_SUBJECT = (r"(?:appeals?|petitions?|writ\s+petitions?|special\s+leave\s+petitions?|slps?|applications?"
            r"|references?|suits?|matters?|cases?|reviews?|transfer\s+petitions?)")
_OUTCOME = re.compile(
    rf"\b{_SUBJECT}\b[^.\n]{{0,60}}?\b(?:is|are|stands?|shall\s+stand|be|must\s+be|fails?\s+and\s+(?:is|are))?\s*"
    r"(?:accordingly\s+|hereby\s+|partly\s+|partially\s+|therefore\s+|also\s+)*"
    r"(?P<verb>allowed|dismissed|disposed\s+of|rejected)"
    r"|\bwe\s+(?:accordingly\s+)?(?P<verb2>allow|dismiss|dispose\s+of)\b"
    rf"|^\s*(?P<short>{_SUBJECT})\s+(?P<verb3>allowed|dismissed|disposed\s+of)\.?\s*$",
    re.I | re.M)
_VERB = {"allowed": "Allowed", "allow": "Allowed", "dismissed": "Dismissed", "dismiss": "Dismissed",
         "rejected": "Dismissed", "disposed of": "Disposed", "dispose of": "Disposed"}


@dataclass
class JudgmentMetadata:
    doc_id: str
    case_id: str | None = None
    court: str = "Supreme Court of India"
    bench_type: str = "Unknown"
    bench_size: int | None = None
    date: str | None = None
    year: int | None = None
    month: int | None = None
    act_sections: list[str] = field(default_factory=list)
    citation_string: str | None = None
    judge_names: list[str] = field(default_factory=list)
    author_judge: str | None = None
    petitioner: str | None = None
    respondent: str | None = None
    outcome_label: str = "Unknown"
    source_path: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _month(name: str) -> int | None:
    key = name.lower().rstrip(".")
    return next((n for m, n in MONTHS.items() if m.startswith(key[:3])), None)


def _safe_date(year: int, month: int | None, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day) if month else None
    except ValueError:
        return None


def parse_date(text: str) -> dt.date | None:
    """The first date in ``text``: "26 September 1973", "APRIL 10, 2018", "13.04.2007"."""
    candidates = []
    for m in _DATE_DMY.finditer(text):
        candidates.append((m.start(), _safe_date(int(m.group(3)), _month(m.group(2)), int(m.group(1)))))
    for m in _DATE_MDY.finditer(text):
        candidates.append((m.start(), _safe_date(int(m.group(3)), _month(m.group(1)), int(m.group(2)))))
    for m in _DATE_NUM.finditer(text):
        candidates.append((m.start(), _safe_date(int(m.group(3)), int(m.group(2)), int(m.group(1)))))
    valid = sorted((pos, d) for pos, d in candidates if d and 1947 <= d.year <= 2100)
    return valid[0][1] if valid else None


def _clean_name(name: str) -> str:
    name = re.sub(r"\s+", " ", name).strip(" .,:;")
    return re.sub(r"^(?:HON'?BLE\s+)?(?:MR\.?|MRS\.?|MS\.?|DR\.?)?\s*(?:JUSTICE\s+)?", "", name, flags=re.I)


def _case_id(text: str) -> str | None:
    match = _CASE_NO.search(text)
    if not match:
        return None
    kind = re.sub(r"\s+", " ", match.group("type")).strip(" .").title()
    number = re.sub(r"\s+", "", match.group("num")).strip(",&")
    return f"{kind} {number}/{match.group('year')}"


def _outcome(text: str) -> str:
    tail = text[int(len(text) * 0.85):] if len(text) > 4000 else text[-4000:]
    last = None
    for match in _OUTCOME.finditer(tail):
        verb = match.group("verb") or match.group("verb2") or match.group("verb3")
        last = _VERB[re.sub(r"\s+", " ", verb.lower())]
    return last or "Unknown"


def _aila_header(lines: list[str], meta: JudgmentMetadata) -> None:
    title = lines[0].strip() if lines else ""
    parts = _TITLE_SPLIT.split(title, maxsplit=1)
    if len(parts) == 2:
        meta.petitioner, meta.respondent = parts[0].strip(), parts[1].strip()
        meta.sources.update(petitioner="text", respondent="text")


def _pdf_parties(text: str, meta: JudgmentMetadata) -> None:
    head = text[:3000]
    title = re.search(r"^(?P<pet>[^\n]+?)\s+(?:Vs\.?|v\.)\s+(?P<res>[^\n]+?)\s*$", head, re.M)
    appellant = re.search(r"(?P<pet>(?:[^\n]+\n){1,3}?)[^\n]*?\.{2,}\s*(?:APPELLANT|PETITIONER)", head, re.I)
    respondent = re.search(r"VERSUS\s*\n(?P<res>(?:[^\n]+\n){0,2}?[^\n]*?)\s*\.{2,}\s*RESPONDENT", head, re.I)
    if appellant:
        lines = [l for l in appellant.group("pet").splitlines() if l.strip()]
        lines = [l for l in lines if not re.search(r"\bNO\.|\bNOS\.|JURISDICTION|COURT OF INDIA", l, re.I)]
        meta.petitioner = re.sub(r"\s+", " ", " ".join(lines)).strip() or None
    if respondent:
        meta.respondent = re.sub(r"\s+", " ", respondent.group("res")).strip() or None
    if not (appellant or respondent) and title:
        meta.petitioner, meta.respondent = title.group("pet").strip(), title.group("res").strip()
    for name in ("petitioner", "respondent"):
        if getattr(meta, name):
            setattr(meta, name, re.sub(r"\s*(?:AND\s+(?:OTHERS|ANOTHER|ORS\.?)|&\s*ORS\.?)\s*$", "",
                                       getattr(meta, name), flags=re.I))
            meta.sources[name] = "text"


def _pdf_judges(text: str) -> list[str]:
    coram = _CORAM.search(text[:4000])
    if coram:
        names = re.split(r",\s*|\s+and\s+", re.sub(r",?\s*(?:C\.\s*)?JJ?\.?\s*$", "", coram.group("names")))
        return [_clean_name(n) for n in names if _clean_name(n)]
    tail = text[-2500:]
    names = [_clean_name(m.group("name")) for m in _SIGNATURE.finditer(tail)]
    return [n for n in names if n and not re.search(r"\d", n)]


def extract_metadata(doc: Document, sc_index: ScIndex | None = None) -> JudgmentMetadata:
    text = doc.text
    meta = JudgmentMetadata(doc_id=doc.doc_id, source_path=doc.source_path)
    head = text[:3000]
    lines = head.splitlines()
    aila = doc.source == "aila_text" or (len(lines) > 1 and lines[1].strip() == "Supreme Court of India")
    court = re.search(r"IN THE (SUPREME COURT OF INDIA|HIGH COURT OF [A-Z ]+?)(?:\s+AT\s+[A-Z]+)?\s*$", head,
                      re.M | re.I)
    if court and not aila:
        meta.court = court.group(1).strip().title().replace(" Of ", " of ")
    meta.sources["court"] = "text" if court or aila else "default"

    if aila:
        _aila_header(lines, meta)
        day = parse_date("\n".join(lines[1:6]))
    else:
        _pdf_parties(text, meta)
        decided = re.search(r"Decided\s+On\s*:\s*([^\n]+)", head, re.I)
        signed = re.search(r"NEW\s+DELHI\s*[;,.:]?\s*\n?\s*(?P<date>[^\n]{6,30})", text[-1500:], re.I)
        day = parse_date(decided.group(1)) if decided else None
        day = day or (parse_date(signed.group("date")) if signed else None)
    if day:
        meta.date, meta.year, meta.month = day.isoformat(), day.year, day.month
        meta.sources["date"] = "text"
    meta.case_id = _case_id(head)
    # Only the header can carry this judgment's own citation; the body cites other cases.
    body = _BODY_START.search(head)
    citation = _CITATION.search(head[:body.start() if body else 1500])
    meta.citation_string = citation.group(0) if citation else None

    delivered = _DELIVERED.search(head)
    if delivered:
        meta.author_judge = _clean_name(delivered.group("name"))
        meta.judge_names = [meta.author_judge]
        meta.sources["judge_names"] = "text"
    elif not aila:
        meta.judge_names = _pdf_judges(text)
        if meta.judge_names:
            meta.bench_size = len(meta.judge_names)
            meta.sources.update(judge_names="text", bench_size="text")

    record = sc_index.match(day, meta.petitioner, meta.respondent) if sc_index else None
    if record:
        judges = record_judges(record)
        if judges:
            meta.judge_names, meta.bench_size = judges, len(judges)
            meta.sources.update(judge_names="sc_metadata", bench_size="sc_metadata")
        meta.sources["sc_record"] = str(record.get("diary_no"))
    meta.bench_type = bench_type_for(meta.bench_size)
    meta.act_sections = normalise_sections(text)
    meta.outcome_label = _outcome(text)
    return meta

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
from countercase.extract.sc_records import (
    ScIndex, case_numbers, names_agree, record_bench, record_case_number,
)
from countercase.ingest.document import Document
from countercase.legal.vocab import bench_type_for

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\s*,?\s+(\d{{4}})\b", re.I)
_DATE_MDY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})\s*,\s*(\d{{4}})\b", re.I)
_DATE_NUM = re.compile(r"\b(\d{1,2})[./-](\d{1,2})[./-](\d{4})\b")
# "The Judgment was delivered by : A. Alagiriswami, J." (also "Judgement", "of the Court",
# "The Order of the Court was delivered by:", a "(Non-Reportable)" prefix, the typo "wag").
_DELIVERED = re.compile(
    r"^[^\n]{0,40}?\b(?:judge?ment|order)\b[^\n]{0,25}?\bw\w{1,3}\s+delivered\s+by\s*:?\s*"
    r"(?P<names>[^\n]{2,160}?)\s*$", re.I | re.M)
# Joint authors: "M. K. Mukherjee, J. and S.P. Kurdukar, J.", "A. N. Ray, Mathew ... and Beg, JJ."
_AUTHOR_SPLIT = re.compile(r"\s*,?\s*\b(?:C\.\s?)?JJ?\.?\s*(?:and|&|,)\s+|\s+(?:and|&)\s+", re.I)
_JUDGE_SUFFIX = re.compile(r"[\s,]*(?:\b(?:C\.\s?)?JJ?\b\.?|\bC\.?\s?J\.?\s?I\b\.?)?[\s.,:;\-]*$", re.I)
# " v " (lower case: an upper-case "V." is an initial, as in "T. V. Vatheeswaran v State")
_TITLE_SPLIT = re.compile(r"\s+(?:v\.?|vs\.?|Vs\.?|VS\.?|versus|Versus|VERSUS|V/[sS]\.?)\s+")
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
    rf"|^[ \t]*(?P<short>{_SUBJECT})\s+(?P<verb3>allowed|dismissed|disposed\s+of)\.?[ \t]*$",
    re.I | re.M)
# Line-level anchors are "^[ \t]*", not "^\s*": under re.M the latter runs on across every blank line
# from each line start, quadratic in the newlines of a page (100,000 of them took 27.6 s).
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


_HONORIFIC = re.compile(r"^(?:HON(?:'|’)?BLE\s+)?(?:THE\s+)?(?:MRS?\.?\s+|MS\.?\s+|DR\.?\s+)?(?:JUSTICE\s+)?"
                        r"(?:DR\.?\s+)?", re.I)


def _clean_name(name: str) -> str:
    """A judge's name as printed, tidied: honorifics and a trailing "J." dropped, "A.K.SIKRI"
    spaced to "A.K. Sikri", all-capital names title-cased."""
    name = re.sub(r"\s+", " ", name or "").strip(" .,:;[]()")
    name = _HONORIFIC.sub("", name)
    name = _JUDGE_SUFFIX.sub("", name).strip(" .,:;")
    name = re.sub(r"\.(?=[A-Za-z]{2,})", ". ", name)
    if name and not re.search(r"[a-z]", name):
        name = name.title()
    return name


def _authors(names: str) -> list[str]:
    """The judges a "delivered by" line names, in order (usually one)."""
    names = _JUDGE_SUFFIX.sub("", names)
    parts = [p for p in _AUTHOR_SPLIT.split(names) if p and p.strip()]
    if len(parts) > 1 or "," in names:
        # "A. N. Ray, Mathew Isaacs": a comma separates full names, never "Surname, Initials"
        split = []
        for part in parts:
            pieces = [q for q in part.split(",") if q.strip()]
            if len(pieces) > 1 and all(re.search(r"[A-Za-z]{2,}", q) and len(q.split()) >= 2
                                       for q in pieces):
                split += pieces
            else:
                split.append(part)
        parts = split
    cleaned = [_clean_name(p) for p in parts]
    return [n for n in cleaned if re.search(r"[A-Za-z]{2,}", n) and len(n) <= 60]


def _case_header(text: str, aila: bool) -> str:
    """Where a judgment's own case number is printed: the AILA header lines between the title
    and the first paragraph, or the PDF cause title before "JUDGMENT"."""
    lines = text[:3000].splitlines()
    if aila:
        region = []
        for line in lines[1:10]:
            if re.match(r"\s*1\.\s", line):
                break
            region.append(line)
        return "\n".join(region)
    head = "\n".join(lines[:45])
    body = re.search(r"^\s*(?:J\s?U\s?D\s?G\s?M\s?E\s?N\s?T|O\s?R\s?D\s?E\s?R)\s*$", head, re.M)
    return head[:body.start()] if body else head


def _case_id(header: str) -> tuple[str | None, list[tuple[str, int, int, str]]]:
    """The first case number of the header as "Criminal Appeal 168/2008", and all of them."""
    numbers = case_numbers(header)
    if not numbers:
        return None, []
    name, _, year, printed = numbers[0]
    return f"{name} {printed}/{year}", numbers


def _outcome(text: str) -> str:
    """The Court's own order in the final paragraphs: the last "appeal(s) ... allowed/dismissed";
    "disposed of" only where no allowed/dismissed wording is there (a footer "Petitions disposed
    of." after "the petitions are dismissed" stays Dismissed)."""
    tail = text[int(len(text) * 0.85):] if len(text) > 4000 else text[-4000:]
    labels = []
    for match in _OUTCOME.finditer(tail):
        verb = match.group("verb") or match.group("verb2") or match.group("verb3")
        labels.append(_VERB[re.sub(r"\s+", " ", verb.lower())])
    decisive = [label for label in labels if label != "Disposed"]
    if decisive:
        return decisive[-1]
    return labels[-1] if labels else "Unknown"


def _link_judges(meta: JudgmentMetadata, record: dict[str, Any]) -> bool:
    """Fill judges and bench size from a linked record; False if the record contradicts the text
    (a judge the text names is not on the record's bench), so the link is refused."""
    names, complete = record_bench(record)
    if not names:
        return True
    known = meta.judge_names or ([meta.author_judge] if meta.author_judge else [])
    if any(not names_agree(judge, names) for judge in known):
        return False
    others = [n for n in names if not any(names_agree(n, [judge]) for judge in known)]
    if others:
        meta.judge_names = known + others
        meta.sources["judge_names"] = "sc_metadata"  # the author (if any) is first, from the text
    # One name is what the older records give for the author alone; a cut-off list is no count.
    if complete and len(names) >= 2 and len(names) >= len(meta.judge_names):
        meta.bench_size = len(names)
        meta.sources["bench_size"] = "sc_metadata"
    elif not complete and len(names) + 1 >= 5:
        # a cut-off list of four names and a fragment: at least five judges, whatever the count
        meta.bench_type = "Constitution"
        meta.sources["bench_type"] = "sc_metadata"
    return True


def _aila_header(lines: list[str], meta: JudgmentMetadata) -> None:
    title = lines[0].strip() if lines else ""
    parts = _TITLE_SPLIT.split(title, maxsplit=1)
    if len(parts) == 2:
        meta.petitioner, meta.respondent = parts[0].strip(), parts[1].strip()
        meta.sources.update(petitioner="text", respondent="text")


# The side a cause-title line ends with; the dot leaders before it are skipped by _party_mark, not
# by the regex (a leader pattern before the word backtracked cubically over a line of dots).
_PARTY_SIDE = re.compile(r"\b(?P<side>APPELLANTS?|PETITIONERS?|RESPONDENTS?)\b(?:\s*\(S\))?[\s.:]*$", re.I)
_NOT_PARTY = re.compile(r"\bNOS?\s*\.|\bNO\(S\)|JURISDICTION|COURT\s+OF\s+INDIA|^\s*REPORTABLE|INSC\s+\d|"
                        r"^\s*(?:WITH|VERSUS|VS\.?|AND|J\s?U\s?D\s?G\s?M\s?E\s?N\s?T|ORDER)\s*$|\bOF\s+\d{4}\b|"
                        r"^\s*\(.*\)\s*$|Diary\s+No", re.I)
_OTHERS = re.compile(r"\s*(?:,\s*)?(?:AND\s+(?:OTHERS|ANOTHER|ORS\.?|ANR\.?)|&\s*(?:ORS|ANR)\.?|ETC\.?)\s*$",
                     re.I)


def _party_mark(line: str) -> tuple[int, str] | None:
    """Where the party text of a line ends and which side it names ("STATE ....APPELLANT(S)"):
    the side word at the line's end, less the leaders before it (dots, ellipses, white space, or
    a run of two or more underscores with white space before it)."""
    mark = _PARTY_SIDE.search(line)
    if not mark:
        return None
    start = mark.start()
    while start and (line[start - 1] in ".…" or line[start - 1].isspace()):
        start -= 1
    underscores = start
    while underscores and line[underscores - 1] == "_":
        underscores -= 1
    if start - underscores >= 2:
        start = underscores
        while start and line[start - 1].isspace():
            start -= 1
    return start, mark.group("side").upper()


def _party_block(lines: list[str]) -> str | None:
    text = re.sub(r"\s+", " ", " ".join(line.strip() for line in lines)).strip(" .,:")
    text = _OTHERS.sub("", text).strip(" .,:")
    return text or None


def _pdf_parties(text: str, meta: JudgmentMetadata) -> None:
    """The cause title: lines up to "...APPELLANT(S)", then after VERSUS up to "...RESPONDENT(S)"."""
    lines = text[:4000].splitlines()[:80]
    pet = res = None
    for i, line in enumerate(lines):
        mark = _party_mark(line)
        if not mark:
            continue
        end, side = mark
        block = [line[:end]]
        j = i - 1
        while j >= 0 and len(block) < 4 and lines[j].strip() and not _NOT_PARTY.search(lines[j]) \
                and not _PARTY_SIDE.search(lines[j]):
            block.insert(0, lines[j])
            j -= 1
        if side.startswith(("APPELLANT", "PETITIONER")) and pet is None:
            pet = _party_block(block)
        elif side.startswith("RESPONDENT") and res is None and pet is not None:
            res = _party_block(block)
            break
    if pet is None:
        in_re = re.search(r"^\s*(In\s+Re\b.*)$", "\n".join(lines), re.M | re.I)
        if in_re:
            start = lines.index(next(l for l in lines if l.strip() == in_re.group(1).strip()))
            block = []
            for line in lines[start:start + 6]:
                if not line.strip() or re.match(r"\s*(?:with|versus|JUDGMENT|ORDER|\()", line, re.I) \
                        and block:
                    break
                block.append(line)
            pet = _party_block(block)
    if pet is None and res is None:
        title = re.search(r"^(?P<pet>[^\n]{3,120}?)\s+(?:Vs\.?|v\.)\s+(?P<res>[^\n]{3,120}?)\s*$",
                          "\n".join(lines[:40]), re.M)
        if title:
            pet, res = _party_block([title.group("pet")]), _party_block([title.group("res")])
    meta.petitioner, meta.respondent = pet, res
    for name in ("petitioner", "respondent"):
        if getattr(meta, name):
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
    """Metadata of one judgment. Never raises: a field that cannot be read stays None/"Unknown".

    Each step (header, judges, record link, sections, outcome) runs on its own; an unexpected
    error in one keeps what the others read and is noted in ``sources["error"]``.
    """
    meta = JudgmentMetadata(doc_id=str(getattr(doc, "doc_id", "")),
                            source_path=str(getattr(doc, "source_path", "")))
    try:
        text = doc.text or ""
    except Exception as error:  # pages that are not text
        meta.sources["error"] = f"text: {type(error).__name__}: {error}"
        return meta
    state = _State(text=text, aila=_is_aila(doc, text))
    for step in (_header_step, _judges_step, _link_step, _sections_step, _outcome_step):
        try:
            step(state, meta, sc_index)
        except Exception as error:  # tolerant by contract
            meta.sources.setdefault("error", f"{step.__name__}: {type(error).__name__}: {error}")
    if meta.bench_size or "bench_type" not in meta.sources:
        meta.bench_type = bench_type_for(meta.bench_size)
        if meta.bench_size:
            meta.sources["bench_type"] = meta.sources.get("bench_size", "text")
    return meta


@dataclass
class _State:
    text: str
    aila: bool
    day: dt.date | None = None
    case_keys: list[tuple[str, int, int, str]] = field(default_factory=list)


def _is_aila(doc: Document, text: str) -> bool:
    lines = text[:300].splitlines()
    return getattr(doc, "source", None) == "aila_text" or \
        (len(lines) > 1 and lines[1].strip() == "Supreme Court of India")


def _header_step(state: _State, meta: JudgmentMetadata, _: ScIndex | None) -> None:
    text, aila = state.text, state.aila
    head = text[:3000]
    lines = head.splitlines()
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
        state.day = day
        meta.date, meta.year, meta.month = day.isoformat(), day.year, day.month
        meta.sources.update(date="text", year="text", month="text")
    meta.case_id, state.case_keys = _case_id(_case_header(text, aila))
    if meta.case_id:
        meta.sources["case_id"] = "text"
    # Only the header can carry this judgment's own citation; the body cites other cases.
    body = _BODY_START.search(head)
    citation = _CITATION.search(head[:body.start() if body else 1500])
    meta.citation_string = citation.group(0) if citation else None
    if citation:
        meta.sources["citation_string"] = "text"


def _judges_step(state: _State, meta: JudgmentMetadata, _: ScIndex | None) -> None:
    head = state.text[:3000]
    delivered = _DELIVERED.search(head[:1500] if state.aila else head)
    authors = _authors(delivered.group("names")) if delivered else []
    if authors:
        meta.author_judge = authors[0]
        meta.judge_names = authors  # joint authors are all on the bench; the bench may be larger
        meta.sources.update(judge_names="text", author_judge="text")
    elif not state.aila:
        author = re.search(r"^\s*J\s?U\s?D\s?G\s?M\s?E\s?N\s?T\s*\n\s*(?P<name>[A-Z][A-Za-z.\s]{2,40}?),\s*"
                           r"(?:C\.\s?)?J\.?I?\.?\s*$", head, re.M)
        if author:
            meta.author_judge = _clean_name(author.group("name"))
            meta.sources["author_judge"] = "text"
        meta.judge_names = _pdf_judges(state.text)
        if meta.judge_names:
            meta.bench_size = len(meta.judge_names)
            meta.sources.update(judge_names="text", bench_size="text")


def _link_step(state: _State, meta: JudgmentMetadata, sc_index: ScIndex | None) -> None:
    """Link to the Supreme Court record of the same date (parties or case number agree)."""
    if sc_index is None or meta.bench_size:
        return
    keys = [key[:3] for key in state.case_keys]
    record = sc_index.match(state.day, meta.petitioner, meta.respondent, author=meta.author_judge,
                            case_keys=keys)
    if not record or not _link_judges(meta, record):
        return
    meta.sources["sc_record"] = str(record.get("diary_no"))
    if meta.case_id is None:
        number = record_case_number(record)
        if number:
            name, first, last, year = number
            meta.case_id = f"{name} {first if first == last else f'{first}-{last}'}/{year}"
            meta.sources["case_id"] = "sc_metadata"


def _sections_step(state: _State, meta: JudgmentMetadata, _: ScIndex | None) -> None:
    meta.act_sections = normalise_sections(state.text)
    meta.sources["act_sections"] = "text"


def _outcome_step(state: _State, meta: JudgmentMetadata, _: ScIndex | None) -> None:
    meta.outcome_label = _outcome(state.text)
    if meta.outcome_label != "Unknown":
        meta.sources["outcome_label"] = "text"

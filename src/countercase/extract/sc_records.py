"""The Supreme Court open dataset's metadata records, indexed by judgment date, for linking;
and the case-number vocabulary shared by the text headers and the records.

The AILA texts name only the author of a judgment; the records list the bench. A judgment is
linked to a record only on the same judgment date, and only when

* the record's case number is one the judgment's header prints ("Cr.A. No. 168 of 2008" and
  "Crl.A. No.-000168-000168 - 2008"), or
* the party names agree: on both sides where both the text and the record name the side, and
  with at least two distinctive matching words where only one side can be compared.

Party words are compared fuzzily (spelling slips such as "RAJASHTAN", names run together such as
"SADA NAND"/"Sadanand"). Where several records agree equally, the one whose bench has the
author of the judgment is taken if it is the only one; otherwise nothing is linked: ambiguity
links nothing, and nothing is guessed.
"""

from __future__ import annotations

import datetime as dt
import difflib
import gzip
import html
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

# ----------------------------------------------------------------------------------------------
# Case numbers: "Cr.A. No. 168 of 2008", "Appeal (crl.) 1289 of 1999", "C.A. No.-004292 - 2002"
# ----------------------------------------------------------------------------------------------

# canonical case type -> how it is printed (abbreviations of the court and of the reporters)
_CASE_TYPES: dict[str, str] = {
    "SMWP": r"Suo\s+Mot[ou]\s+Writ\s+Pet(?:itions?|n)\.?|SMW",
    "CrA": r"Cr(?:l|i)?\.?\s*As?\.|Crl\.?\s*A\b|Criminal\s+Appeals?|Cr(?:l|i)?\.?\s+Appeals?",
    "CA": r"C\.\s?As?\.|Civil\s+Appeals?",
    "WP": r"W\.\s?Ps?\.?|Writ\s+Pet(?:itions?|ns?)\.?",
    "SLP": r"S\.\s?L\.\s?Ps?\.?|SLPs?|Special\s+Leave\s+Pet(?:itions?|n)\.?"
           r"|Petitions?\s*(?:\(s\))?\s+for\s+Special\s+Leave\s+to\s+Appeal",
    "TP": r"T\.\s?P\.|Transfer\s+Petitions?",
    "RP": r"R\.\s?P\.|Review\s+Petitions?",
    "ContP": r"CONMT\.?\s*PET\.?|Contempt\s+Pet(?:itions?|n)\.?",
    "TC": r"T\.\s?C\.|Transfer\s+Cases?",
    "ArbP": r"ARBIT\.?\s*PETITI?ON|Arbitration\s+Petitions?",
    "OS": r"Original\s+Suits?|O\.\s?S\.",
    "EP": r"Election\s+Petitions?",
    "Ref": r"(?:Special\s+)?References?",
    "MA": r"Misc(?:ellaneous)?\.?\s+Applications?|M\.\s?A\.|MA",
    "Appeal": r"Appeals?",
    "Petition": r"Petitions?",
}
_CASE_NAMES = {
    "SMWP": "Suo Motu Writ Petition", "CrA": "Criminal Appeal", "CA": "Civil Appeal",
    "WP": "Writ Petition", "SLP": "Special Leave Petition", "TP": "Transfer Petition",
    "RP": "Review Petition", "ContP": "Contempt Petition", "TC": "Transfer Case",
    "ArbP": "Arbitration Petition", "OS": "Original Suit", "EP": "Election Petition",
    "Ref": "Reference", "MA": "Miscellaneous Application", "Appeal": "Appeal",
    "Petition": "Petition",
}
# Types that carry a civil/criminal qualifier in their canonical name.
_QUALIFIED = {"SMWP", "WP", "SLP", "TP", "RP", "ContP", "TC"}
_TYPE_ALT = "|".join(f"(?P<{code}>{pattern})" for code, pattern in _CASE_TYPES.items())
_QUAL = r"\(\s*(?P<qual>C|Civ|Civil|Cr|Crl|Cri|Crim|Criminal)\s*\.?\s*\)"
_NUMS = (r"(?P<nums>(?P<num>\d{1,6})(?:\s*(?:-|to|and|&|,)\s*\d{1,6})*)"
         r"(?:\s*\(\s*[A-Za-z0-9]{1,4}\s*\))?")  # "C.A. No. 1234(NM) of 1990"
CASE_NUMBER = re.compile(
    rf"(?<![A-Za-z.])(?:{_TYPE_ALT})\s*(?:{_QUAL})?\s*(?:Nos?\s*[.,]?|No\s*\(\s*s\s*\)\s*\.?)?"
    rf"\s*[.:-]?\s*{_NUMS}\s*(?:\bof\b|/|-)\s*(?P<year>(?:18|19|20)\d{{2}})\b", re.I)
_RECORD_CASE = re.compile(
    rf"^\s*(?:{_TYPE_ALT})\s*(?:{_QUAL})?\s*(?:No\.?)?\s*-\s*(?P<first>\d{{1,6}})(?:-(?P<last>\d{{1,6}}))?"
    r"\s*-\s*(?P<year>(?:18|19|20)\d{2})\s*$", re.I)


def _case_code(match: re.Match) -> str:
    return next(code for code in _CASE_TYPES if match.group(code))


def _case_name(code: str, qual: str | None) -> str:
    criminal = qual.lower().startswith("cr") if qual else None
    if code == "Appeal" and qual:
        return "Criminal Appeal" if criminal else "Civil Appeal"
    name = _CASE_NAMES[code]
    if code in _QUALIFIED and qual:
        name += " (Criminal)" if criminal else " (Civil)"
    return name


def case_numbers(text: str) -> list[tuple[str, int, int, str]]:
    """Every case number in ``text``: (canonical type, first number, year, printed numbers).

    ``"Cr.A. Nos. 1247-1248 of 2006"`` gives ``("Criminal Appeal", 1247, 2006, "1247-1248")``.
    Numbers without a year ("Criminal Appeal No. of 2026") are not case numbers.
    """
    found = []
    for match in CASE_NUMBER.finditer(text or ""):
        name = _case_name(_case_code(match), match.group("qual"))
        printed = re.sub(r"\s*(?:-|\bto\b)\s*", "-", match.group("nums"))
        printed = re.sub(r"\s*(?:,|&|\band\b)\s*", ",", printed)
        found.append((name, int(match.group("num")), int(match.group("year")), printed))
    return found


def record_case_number(record: dict[str, Any]) -> tuple[str, int, int, int] | None:
    """A record's ``case_no`` ("Crl.A. No.-001157-001158 - 2016") as
    (canonical type, first number, last number, year); None where it is blank or unread."""
    match = _RECORD_CASE.match(html.unescape(str(record.get("case_no") or "")))
    if not match:
        return None
    first = int(match.group("first"))
    last = int(match.group("last") or first)
    return (_case_name(_case_code(match), match.group("qual")), first, max(first, last),
            int(match.group("year")))


def _case_agrees(record: dict[str, Any], keys: Iterable[tuple[str, int, int]]) -> bool:
    number = record_case_number(record)
    if not number:
        return False
    name, first, last, year = number
    base = name.split(" (")[0]
    return any(k_year == year and k_name.split(" (")[0] == base and first <= k_num <= last
               for k_name, k_num, k_year in keys)


# ----------------------------------------------------------------------------------------------
# Party and judge names
# ----------------------------------------------------------------------------------------------

_STOP = {"the", "and", "ors", "others", "anr", "another", "of", "state", "through", "thr", "by",
         "its", "etc", "smt", "shri", "sri", "mr", "mrs", "ltd", "limited", "pvt", "co", "m/s",
         "union", "india", "secretary", "govt", "government", "lrs", "dead", "deceased", "since",
         "his", "her", "legal", "representatives", "alias", "vice", "versa", "appellant",
         "respondent", "petitioner"}
# Place words: they agree on both sides of many unrelated cases, so they never count as
# distinctive evidence where only one side can be compared.
_WEAK = {"uttar", "pradesh", "madhya", "andhra", "himachal", "arunachal", "maharashtra", "gujarat",
         "rajasthan", "punjab", "haryana", "bihar", "west", "bengal", "kerala", "karnataka",
         "mysore", "madras", "tamil", "nadu", "orissa", "odisha", "assam", "jammu", "kashmir",
         "goa", "delhi", "sikkim", "manipur", "meghalaya", "mizoram", "nagaland", "tripura",
         "telangana", "jharkhand", "chhattisgarh", "uttarakhand", "uttaranchal", "bombay",
         "calcutta", "administration", "territory", "municipal", "corporation", "commissioner",
         "income", "tax", "collector", "director", "general", "chief", "officer", "district",
         "board", "new", "central", "kumar", "singh", "lal", "ram", "prasad"}
# State abbreviations as printed in cause titles ("State of U.P.", "STATE OF U. P.", "THE GOVT.
# OF A.P.", "J&K").
_ABBREVIATIONS = {"up": "uttar pradesh", "mp": "madhya pradesh", "ap": "andhra pradesh",
                  "hp": "himachal pradesh", "wb": "west bengal", "tn": "tamil nadu",
                  "jk": "jammu kashmir"}
_ABBREVIATION_RE = re.compile(
    r"(?<![a-z])(?:(?P<a>[umahwt])\s?\.\s?(?P<b>[pbn])(?![a-z])\.?|(?P<j>j)\s?\.?\s?&\s?(?P<k>k)(?![a-z])\.?)")


def _spell_out(match: re.Match) -> str:
    key = (match.group("a") or match.group("j")) + (match.group("b") or match.group("k"))
    return f" {_ABBREVIATIONS[key]} " if key in _ABBREVIATIONS else match.group(0)


_TITLE = re.compile(r"HON(?:'|&#39;|’)?BLE\s+(?:THE\s+)?(?:MRS\.?|MR\.?|MS\.?|DR\.?)?\s*(?:JUSTICE\s+)?(?:DR\.?\s+)?",
                    re.I)


def _words(name: Any) -> list[str]:
    """Distinctive words of a name, in order (state abbreviations spelt out)."""
    text = html.unescape(str(name or "")).lower()
    text = _ABBREVIATION_RE.sub(_spell_out, text)
    return [w for w in re.findall(r"[a-z]{3,}", text) if w not in _STOP]


def _tokens(name: Any) -> set[str]:
    return set(_words(name))


def _similar(a: str, b: str) -> bool:
    """Same word, a spelling slip ("rajasthan"/"rajashtan", "thomas"/"thoms"), or one long word
    inside the other ("krishnaiyer"/"krishna")."""
    if a == b:
        return True
    if len(a) >= 6 and len(b) >= 6 and (a in b or b in a):
        return True
    return len(a) >= 5 and len(b) >= 5 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


def _matched(ours: Iterable[str], theirs: Iterable[str]) -> set[str]:
    """Our words that the other side has, allowing spelling slips and names run together or
    split ("Sadanand"/"SADA NAND", "Fazal Ali"/"FAZALALI")."""
    theirs = list(theirs)
    ours = list(ours)
    squashed_theirs, squashed_ours = "".join(theirs), "".join(ours)
    found = {w for w in ours
             if any(_similar(w, t) for t in theirs) or (len(w) >= 6 and w in squashed_theirs)}
    # one of their words made of several of ours: credit the parts
    for t in theirs:
        if len(t) >= 6 and t not in ours and t in squashed_ours:
            found |= {w for w in ours if w in t}
    return found


def _initials_and_surname(name: str) -> tuple[str, str]:
    words = re.findall(r"[a-z]+", _TITLE.sub("", html.unescape(name or "")).lower())
    if len(words) < 2:
        return "", ""
    return "".join(w[0] for w in words[:-1] if len(w) == 1), words[-1]


def names_agree(name: str | None, names: Iterable[str]) -> bool:
    """Whether ``name`` (a judge as the text prints it) is one of ``names`` (fuzzy on words:
    "V. R. Krishna Iyer" ~ "V.R. Krishnaiyer", "P. N. Shinghal" ~ "P.N. Shingal", and a one-letter
    slip in a short surname with the same initials: "G. N. Ray" ~ "G.N. RAV")."""
    ours = _words(name)
    if not ours:
        return False
    initials, surname = _initials_and_surname(name or "")
    for other in names:
        if _matched(ours, _words(other)):
            return True
        their_initials, their_surname = _initials_and_surname(other)
        if initials and initials == their_initials and len(surname) == len(their_surname) >= 3 \
                and sum(a != b for a, b in zip(surname, their_surname)) == 1:
            return True
    return False


_ROLE = re.compile(r"\(+\s*(?:CJI?|J)\s*\)|\bC\.?\s?J\.?\s?I\.?(?=\s|$)|\bJJ\.?$", re.I)
_ROLE_ONLY = re.compile(r"^\s*(?:C\.?\s?J\.?\s?I?\.?|JJ?\.?)\s*$", re.I)
_INITIALS_ONLY = re.compile(r"^(?:[A-Z]\.\s?)*[A-Z]\.?$", re.I)
_CHIEF = re.compile(r"^(?:THE\s+)?(?:HON'?BLE\s+)?(?:THE\s+)?CHIEF\s+JUSTICE(?:\s+OF\s+INDIA)?$|^C\.?\s?J\.?\s?I\.?$",
                    re.I)


def _tidy(name: str) -> str:
    name = re.sub(r"\s+", " ", _TITLE.sub("", name)).strip(" .,[]")
    return "The Chief Justice" if _CHIEF.match(name) else name.title()


def record_bench(record: dict[str, Any]) -> tuple[list[str], bool]:
    """Judge names of a record's ``bench``, and whether the list is complete (not truncated).

    The field comes in several layouts, by period: "HON'BLE MR. JUSTICE A, HON'BLE MS. JUSTICE B";
    "D.K. JAIN,CHANDRAMAULI KR. PRASAD, , , "; surname first, pairs joined by "," or "&":
    "SIKRI, S.M. (CJ),SHELAT, J.M.,MITTER, G.K."; one surname-first name "KOSHAL,A.D."; "[KULDIP
    SINGH AND N.M. KASLIWAL,JJ.]". Old records are cut at a fixed length, which leaves a last part
    of bare initials ("...,J.C."): such a list is marked incomplete.
    """
    bench = html.unescape(str(record.get("bench") or "")).replace("\t", " ").strip(" ,[]")
    bench = re.sub(r",?\s*JJ\.?$", "", bench).strip(" ,")
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
        parts = [p for p in re.split(r"\s*,\s*|\s+AND\s+|\s+CJI\s+(?=[A-Z])", bench) if p.strip()]
        second = _ROLE.sub(" ", parts[1]).strip() if len(parts) == 2 else ""
        if len(parts) == 2 and not _CHIEF.match(parts[0].strip()) and (
                re.fullmatch(r"[A-Za-z]+", parts[0].strip()) or _INITIALS_ONLY.match(second)):
            # "KOSHAL,A.D.", "REDDY,O. CHINNAPPA (J)", "JEEVAN REDDY,B.P. (J)": one judge
            parts = [f"{second} {parts[0]}"]
    names = []
    for i, part in enumerate(parts):
        part = _ROLE.sub(" ", part)
        if not part.strip(" .,") or _ROLE_ONLY.match(part):
            continue  # "CJ." of "[M.H. KANIA,CJ.,N.M. KASLIWAL AND N.P. SINGH,JJ.]"
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


# ----------------------------------------------------------------------------------------------
# The index
# ----------------------------------------------------------------------------------------------

class ScIndex:
    """Records by judgment date; :meth:`match` links one judgment to at most one record."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.by_date: dict[dt.date, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            if not isinstance(record, dict):
                continue
            day = _date(str(record.get("judgment_dates") or ""))
            if day:
                self.by_date[day].append(record)
        self.n_records = len(records)

    @staticmethod
    def _party_score(pet: list[str], res: list[str], record: dict[str, Any],
                     author: str | None = None) -> int:
        """Matching party words, or 0 where the parties disagree or agree too weakly.

        Both sides named on both: each side must share a word. Only one side comparable: it must
        share two distinctive words (not place names), or one where the rest of both titles
        agrees word for word or the record's bench has the judgment's author.
        """
        rp, rr = _words(record.get("pet")), _words(record.get("res"))
        sides = [(ours, theirs) for ours, theirs in ((pet, rp), (res, rr)) if ours and theirs]
        if not sides:
            return 0
        matched = [_matched(ours, theirs) for ours, theirs in sides]
        if not all(matched):
            return 0  # a side both name differently: another case
        total = sum(len(m) for m in matched)
        if len(sides) == 2:
            return total
        distinctive = matched[0] - _WEAK
        if len(distinctive) >= 2:
            return total
        if not distinctive:
            return 0
        same_titles = (bool(pet) == bool(rp) and bool(res) == bool(rr)
                       and len(_matched(*sides[0])) == len(set(sides[0][0]))
                       and len(_matched(sides[0][1], sides[0][0])) == len(set(sides[0][1])))
        if same_titles or (author and names_agree(author, record_judges(record))):
            return total
        return 0

    def match(self, day: dt.date | None, petitioner: str | None, respondent: str | None,
              author: str | None = None,
              case_keys: Iterable[tuple[str, int, int]] = ()) -> dict[str, Any] | None:
        """The one record of ``day`` for this judgment, or None (see the module rules).

        ``case_keys`` are (canonical type, number, year) from the judgment's header; ``author``
        breaks a tie between records that agree equally.
        """
        if day is None:
            return None
        keys = [tuple(k[:3]) for k in case_keys]
        pet, res = _words(petitioner), _words(respondent)
        scored = []
        for record in self.by_date.get(day, ()):
            by_case = _case_agrees(record, keys) if keys else False
            score = self._party_score(pet, res, record, author)
            if by_case or score:
                scored.append(((by_case, score), record))
        if not scored:
            return None
        best = max(rank for rank, _ in scored)
        top = [record for rank, record in scored if rank == best]
        if len(top) > 1 and author:
            top = [r for r in top if names_agree(author, record_judges(r))]
        return top[0] if len(top) == 1 else None


def load_sc_index(directory: str | Path) -> ScIndex:
    """All ``*.json`` / ``*.json.gz`` record files of a folder (a list, or ``{"data": [...]}``)."""
    records: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("*.json*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            payload = json.load(handle)
        records += payload.get("data", []) if isinstance(payload, dict) else payload
    return ScIndex(records)

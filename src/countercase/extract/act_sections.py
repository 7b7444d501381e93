"""Statutory references in judgment text, normalised to canonical ids (``IPC-302``,
``Constitution-Article-21``; see :mod:`countercase.legal.acts`).

Rules, in order:

1. A mention is a keyword ("Section", "Sec.", "S.", "Ss.", "u/s", "Article", "Art.") followed by a
   list of numbers ("120B, 148, 341 and 302", "301 to 307": the printed numbers only, ranges are
   not expanded); sub-clauses ("14(1)(b)") are dropped, letter suffixes kept ("498A", "304-A").
2. The act is the one named right after the list ("Section 302 IPC", "s. 302 of the Indian Penal
   Code", "Section 439 Cr.P.C.", "Section 103 BNS"), or a short name the judgment defined for it
   ("the Indian Penal Code (in short 'IPC')", "... (hereinafter 'the Code')").
3. A list joined to the next mention by "read with", "r/w", "and" or a comma takes that
   mention's act ("Sections 120B, 148 read with Ss. 149 and 109, IPC").
4. Articles with no act named belong to the Constitution.
5. Anything else (an act outside the registry, "the said Act", no act at all) is dropped, never
   guessed: a section of the Tamil Nadu Rent Act must not become an IPC section.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from countercase.legal.acts import ACTS, ACTS_BY_CODE, section_id
from countercase.errors import CountercaseError

# Act names as printed, by act code. Most specific first where one contains another.
_ACT_PATTERNS: dict[str, str] = {
    "IPC": r"[Il]\.?\s?P\.?\s?C\.?|Indian\s+Penal\s+Code|Penal\s+Code",
    "CrPC": r"Cr(?:l|iminal)?\.?\s?P\.?\s?C\.?|Code\s+of\s+Criminal\s+Procedure|Criminal\s+Procedure\s+Code",
    "CPC": r"C\.\s?P\.\s?C\.?|CPC|Code\s+of\s+Civil\s+Procedure|Civil\s+Procedure\s+Code",
    "IEA": r"(?:Indian\s+)?Evidence\s+Act",
    "HMA": r"Hindu\s+Marriage\s+Act",
    "IDA": r"(?:Indian\s+)?Divorce\s+Act",
    "NIA": r"Negotiable\s+Instruments?\s+Act|N\.\s?I\.\s?Act|NI\s+Act",
    "MVA": r"Motor\s+Vehicles?\s+Act|M\.\s?V\.\s?Act|MV\s+Act",
    "BNSS": r"Bharatiya\s+Nagarik\s+Suraksha\s+Sanhita|BNSS",
    "BNS": r"Bharatiya\s+Nyaya\s+Sanhita|BNS",
    "BSA": r"Bharatiya\s+Sakshya\s+Adhiniyam|BSA",
    "Constitution": r"(?:Indian\s+)?Constitution(?:\s+of\s+India)?",
}
_ACT_ALT = "|".join(f"(?P<{code}>{pattern})" for code, pattern in _ACT_PATTERNS.items())
_ACT_RE = re.compile(rf"(?:{_ACT_ALT})(?![A-Za-z])", re.I)

_NUM = r"[0-9]{1,4}(?:\s?-\s?[A-Z]{1,2}|[A-Z]{1,2})?(?![A-Za-z0-9])"
_SUB = r"(?:\s?\(\s?[0-9A-Za-z]{1,5}\s?\))*(?:\s*-?\s*Part[\s-]*I{1,3}\b)?"
_SEP = r"\s*(?:,|\band\b|&|/|\bor\b|\bto\b|\bread\s+with\b|\br/w\.?)\s*"
_KEYWORD = (r"(?P<kw>\bsections?\b|\bsecs?\.|\bss?\.|\bu/ss?\.?|\bunder\s+sections?\b"
            r"|\barticles?\b|\barts?\.)")
_MENTION = re.compile(rf"{_KEYWORD}\s*(?P<nums>{_NUM}{_SUB}(?:{_SEP}{_NUM}{_SUB})*)", re.I)
_NUMBER = re.compile(_NUM, re.I)
# What may stand between a number list and the act that owns it.
_ACT_AFTER = re.compile(rf"\s*,?\s*(?:of\s+(?:the\s+)?|under\s+(?:the\s+)?|the\s+)?(?:{_ACT_ALT})(?![A-Za-z])",
                        re.I)
_OF_OTHER = re.compile(r"\s*,?\s*of\s+the\s+(?P<name>[A-Z][\w.()'’,\- ]{2,80}?(?:Act|Code|Rules|Order|Regulations?|Declaration|Covenant|Convention|Charter|Treaty|Agreement|Ordinance)\b)")
_JOIN = re.compile(r"^\s*(?:,|\band\b|\bor\b|&|/|read\s+with|r/w\.?|with)?\s*(?:,|\band\b|\bor\b|&|read\s+with|r/w\.?|with)?\s*$",
                   re.I)
# "(in short 'IPC')", "hereinafter called "the Code"": the act named just before defines the name.
_DEFINITION = re.compile(
    r"(?:in\s+short|for\s+short|for\s+brevity|hereinafter(?:\s+(?:referred\s+to\s+as|called))?)"
    r"\s*[,:]?\s*(?:as\s+)?['\"‘“]+\s*(?:the\s+)?(?P<short>[A-Za-z.\s]{1,25}?)\s*['\"’”]+", re.I)
# "Article 6 of the Convention", "Article 5 of the Universal Declaration ...": an article of
# something named that is not the Constitution.
_OF_NAMED = re.compile(r"\s*,?\s*of\s+(?:the\s+)?(?!(?:Indian\s+)?Constitution\b|Part\b|Schedule\b)[A-Z]")
# A sub-clause "(1)(b)" inside a number list; its digits are not section numbers.
_SUBCLAUSE = re.compile(r"\(\s?[0-9A-Za-z]{1,5}\s?\)|\bPart[\s-]*I{1,3}\b", re.I)
# More numbers after an act ("Sections 147 IPC, 302 IPC, 395 IPC and 436 IPC").
_CHAIN = re.compile(rf"\s*(?:,|\band\b|&|/)\s*(?P<nums>{_NUM}{_SUB}(?:{_SEP}{_NUM}{_SUB})*)", re.I)


class UnknownSectionError(CountercaseError, ValueError):
    """A section string that does not name a provision of a known act."""


@dataclass(frozen=True)
class SectionMention:
    section_id: str
    start: int
    end: int
    matched: str


def _act_of(match: re.Match) -> str:
    return next(code for code in _ACT_PATTERNS if match.group(code))


def _clean_number(number: str) -> str:
    return re.sub(r"[\s-]", "", number).upper()


def _definitions(text: str) -> dict[str, str]:
    """Short names a judgment defines for an act: {"code": "CrPC", "ipc": "IPC"}.

    The definition phrase is found first (cheap), then the last act name in the 90 characters
    before it; a later definition of the same short name wins for the whole text.
    """
    found = {}
    for match in _DEFINITION.finditer(text):
        acts = list(_ACT_RE.finditer(text, max(0, match.start() - 90), match.start()))
        short = re.sub(r"\s+", " ", match.group("short")).strip().lower()
        if acts and short:
            found[short] = _act_of(acts[-1])
    return found


def _defined_after(text: str, end: int, defined: dict[str, str]) -> str | None:
    if not defined:
        return None
    tail = text[end:end + 40].lower()
    match = re.match(r"\s*,?\s*(?:of\s+)?(?:the\s+)?([a-z.\s]{1,25})", tail)
    if not match:
        return None
    words = match.group(1)
    for short, code in defined.items():
        if re.match(rf"{re.escape(short)}(?![a-z])", words):
            return code
    return None


def _is_article(match: re.Match) -> bool:
    return match.group("kw").lower().startswith("art")


def _numbers(nums: str) -> list[str]:
    return _NUMBER.findall(_SUBCLAUSE.sub(" ", nums))


@dataclass(frozen=True)
class UnresolvedMention:
    """A section/article number whose act could not be determined (dropped, never guessed)."""

    number: str
    start: int
    end: int
    matched: str


def find_sections(text: str) -> list[SectionMention]:
    """Every mention of a provision of a registry act, in text order (see the module rules)."""
    return _scan(text)[0]


def unresolved_sections(text: str) -> list[UnresolvedMention]:
    """The mentions :func:`find_sections` drops: an act outside the registry ("Section 14 of
    the Tamil Nadu Rent Act"), "the said Act", or no act named at all ("Sec. 302")."""
    return _scan(text)[1]


def ascii_digits(text: str) -> str:
    """Other scripts' decimal digits as ASCII ones ("३०२", "３０２" -> "302"), character for
    character, so offsets into the text still hold."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if not c.isascii() and c.isdecimal() else c
                   for c in text)


def _scan(original: str) -> tuple[list[SectionMention], list[UnresolvedMention]]:
    if not original:
        return [], []
    text = ascii_digits(original)
    defined = _definitions(text)
    raw: list[tuple[re.Match, str | None, bool]] = []  # (match, act, blocked by another act)
    chained: list[tuple[int, int, str, str]] = []  # (start, end, nums, act) after an act name
    for match in _MENTION.finditer(text):
        act_match = _ACT_AFTER.match(text, match.end())
        act = _act_of(act_match) if act_match else _defined_after(text, match.end(), defined)
        blocked = act is None and (bool(_OF_OTHER.match(text, match.end())) or (
            _is_article(match) and bool(_OF_NAMED.match(text, match.end()))))
        raw.append((match, act, blocked))
        position = act_match.end() if act_match else None
        while position is not None:
            more = _CHAIN.match(text, position)
            after = _ACT_AFTER.match(text, more.end()) if more else None
            if not after or _act_of(after) != act:
                break
            chained.append((more.start("nums"), more.end("nums"), more.group("nums"), act))
            position = after.end()
    # A list joined to the next mention ("... read with Ss. 149 and 109, IPC") takes its act.
    resolved: list[str | None] = [act for _, act, _ in raw]
    for i in range(len(raw) - 2, -1, -1):
        match, act, blocked = raw[i]
        same_unit = _is_article(match) == _is_article(raw[i + 1][0])
        if act is None and not blocked and resolved[i + 1] and same_unit:
            if _JOIN.match(text[match.end():raw[i + 1][0].start()]):
                resolved[i] = resolved[i + 1]
    found: list[tuple[int, int, str, str]] = []
    unresolved: list[UnresolvedMention] = []
    for (match, _, blocked), act in zip(raw, resolved):
        is_article = _is_article(match)
        if act is None and is_article and not blocked:
            act = "Constitution"
        if act is None:
            matched = original[match.start():match.end()]  # one string per mention
            unresolved += [UnresolvedMention(_clean_number(number), match.start(), match.end(),
                                             matched) for number in _numbers(match.group("nums"))]
            continue
        if is_article != (ACTS_BY_CODE[act].unit == "Article"):
            continue  # "Article 5 of the IPC" or "Section 21 of the Constitution": not ours
        found.append((match.start(), match.end(), match.group("nums"), act))
    found += chained
    mentions = []
    for start, end, nums, act in sorted(found):
        # One string per mention, shared by its numbers: a copy per number made a list of n
        # numbers cost n times its length ("Sections 1, 2, ..., 20000 IPC" took 2.3 GB).
        matched = original[start:end]
        mentions.extend(SectionMention(section_id(act, _clean_number(number)), start, end, matched)
                        for number in _numbers(nums))
    return mentions, unresolved


_ORDER = {act.code: i for i, act in enumerate(ACTS)}


def sort_key(canonical: str) -> tuple:
    code, _, rest = canonical.partition("-")
    number = rest.removeprefix("Article-")
    digits = re.match(r"[0-9]+", number)
    return (_ORDER.get(code, 99), int(digits.group()) if digits else 10**9, number)


def normalise_sections(text: str) -> list[str]:
    return sorted({m.section_id for m in find_sections(text)}, key=sort_key)


_USER_ID = re.compile(r"^(?P<code>[A-Za-z]+)-(?:(?i:article)-)?(?P<num>[0-9]{1,4}[A-Za-z]{0,2})$")


def parse_section_id(value: str) -> str:
    """A user's section string ("IPC 302", "ipc-302", "Section 302 IPC", "Art. 21") -> canonical id."""
    text = ascii_digits((value or "").strip())
    if not text:
        raise UnknownSectionError("empty section id: give e.g. 'IPC-302' or 'Constitution-Article-21'")
    by_lower = {code.lower(): code for code in ACTS_BY_CODE}
    match = _USER_ID.match(text)
    if match and match.group("code").lower() in by_lower:
        return section_id(by_lower[match.group("code").lower()], match.group("num"))
    compact = re.match(r"^(?P<code>[A-Za-z.]+)\s*(?P<num>[0-9]{1,4}[A-Za-z]{0,2})$", text)
    if compact:
        act = _ACT_RE.fullmatch(compact.group("code"))
        if act:
            return section_id(_act_of(act), compact.group("num"))
    mentions = find_sections(text if re.match(r"(?i)\s*(?:s|sec|section|art|article)", text)
                             else f"Section {text}")
    if len(mentions) == 1 and mentions[0].end >= len(text.rstrip(". ")) - 40:
        return mentions[0].section_id
    raise UnknownSectionError(f"unknown section id {value!r}: expected an act of "
                              f"{', '.join(ACTS_BY_CODE)} and a number, e.g. 'IPC-302'")

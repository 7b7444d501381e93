"""The rule-based fact sheet extractor: fast enough for the whole corpus, every value grounded.

- facts: a judgment's Facts segments (:func:`countercase.extract.segment.segment`: headings, cue
  sentences, then the plan's first-20 % fallback); a query or short text is read whole;
- sections: the extract stage's normaliser (:func:`~countercase.extract.act_sections.find_sections`)
  on the facts only, so a masked query ("Section S of Act A1") yields none rather than a guess;
- ages ("aged about 25 years", "a girl of 14 years", "25 years old"), amounts ("Rs. 5,000",
  "Rs. 2 lakhs", "Rs 1.5 crore", "₹ 10,000"), durations ("for 3 years", "after 6 months", not
  the years of an age);
- party types: from the parties' names (State of ..., Union of India, ... Ltd.) and role words
  next to "appellant"/"petitioner"/"respondent" in the facts ("the appellant, a tenant");
- evidence types: a lexicon of phrases, each item described by its sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from countercase.extract.act_sections import find_sections
from countercase.extract.segment import Segment, segment
from countercase.factsheet.categories import categories
from countercase.factsheet.roles import read_role
from countercase.factsheet.schema import (MAX_AMOUNT, MAX_DURATION, Age, Amount, Duration,
                                         EvidenceItem, FactSheet, FactSheetError, Parties, Party,
                                         SectionCited, Span)

_NUMBER = r"\d{1,3}(?:,\d{2,3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
                 "twenty": 20, "thirty": 30}
_QUANTITY = rf"(?P<n>{_NUMBER}|{'|'.join(_WORD_NUMBERS)})"
_Q = rf"({_NUMBER}|{'|'.join(_WORD_NUMBERS)})"  # unnamed: the age pattern has four of them

_AGE = re.compile(
    rf"\baged?\s+(?:about\s+|around\s+|nearly\s+)?{_Q}\s*(?:years?|yrs?\.?)?"
    rf"|\bage\s+of\s+(?:about\s+)?{_Q}\s*(?:years?|yrs?\.?)?"
    rf"|\b{_Q}\s*(?:years?|yrs?\.?)\s+(?:old|of\s+age)\b"
    rf"|\b(?:girl|boy|child|woman|man|daughter|son|lady|minor)\s+(?:of|aged)\s+(?:about\s+)?"
    rf"{_Q}\s*(?:years?|yrs?\.?)", re.I)
_MULTIPLIER = {"lakh": 1e5, "lakhs": 1e5, "lac": 1e5, "lacs": 1e5, "crore": 1e7, "crores": 1e7,
               "thousand": 1e3, "million": 1e6}
_AMOUNT = re.compile(
    rf"(?:\bRs\.?|₹|\bRupees|\bINR)\s*(?P<n>{_NUMBER})\s*(?:/-)?\s*"
    rf"(?P<mult>lakhs?|lacs?|crores?|thousand|million)?\b", re.I)
_DURATION = re.compile(
    rf"\b{_QUANTITY}\s*(?P<unit>years?|months?|weeks?|days?|hours?)\b", re.I)

_ROLE_WORDS = {
    "tenant": "Tenant", "licensee": "Licensee", "landlord": "Landlord", "minor": "Minor",
    "employee": "Employee", "workman": "Employee", "servant": "Employee", "contractor": "Contractor",
    "company": "Corporation", "partnership firm": "Partnership", "firm": "Partnership",
    "foreign national": "ForeignNational", "foreigner": "ForeignNational",
}
_ROLE = re.compile(
    r"\b(?P<who>appellants?|petitioners?|respondents?|plaintiffs?|defendants?)\s*(?:no\.\s*\d+\s*)?"
    r"(?:,\s*|\s+(?:is|was|being|who\s+(?:is|was))\s+)(?:an?\s+|the\s+)?(?P<role>"
    + "|".join(sorted(_ROLE_WORDS, key=len, reverse=True)) + r")\b", re.I)
_SIDE = {"appellant": "petitioner", "petitioner": "petitioner", "plaintiff": "petitioner",
         "respondent": "respondent", "defendant": "respondent"}

_NAME_TYPES = [  # (pattern over a party's name, type); first match wins
    (re.compile(r"\bunion\s+of\s+india\b", re.I), "UnionOfIndia"),
    (re.compile(r"^\s*(?:the\s+)?state\s+of\b|\bgovernment\s+of\b|\bstate\b\s*$", re.I), "State"),
    (re.compile(r"\b(?:corporation|board|authority|municipal|commission|university|"
                r"nigam|council|bank\s+of\s+india|state\s+bank)\b", re.I), "PublicSector"),
    (re.compile(r"\b(?:ltd|limited|pvt|private|inc|company|co\.)\b", re.I), "Corporation"),
    (re.compile(r"\b(?:firm|partners|associates)\b", re.I), "Partnership"),
]

_EVIDENCE = [(re.compile(pattern, re.I), kind) for pattern, kind in (
    (r"dying\s+declarations?", "DyingDeclaration"),
    (r"extra[-\s]?judicial\s+confessions?", "ExtraJudicialConfession"),
    (r"(?<!extra-judicial )(?<!extra judicial )\bconfessions?(?:al\s+statement)?\b", "Confession"),
    (r"post[-\s]?mortem|autopsy", "PostMortemReport"),
    (r"medical\s+(?:report|evidence|certificate|examination)|injury\s+report|medico[-\s]?legal",
     "MedicalReport"),
    (r"eye[-\s]?witness(?:es)?", "EyeWitness"),
    (r"\brecover(?:ed|y)\b", "Recovery"),
    (r"\b(?:sale\s+deed|agreement\s+(?:to|for)\s+sale|will\s+deed|lease\s+deed|gift\s+deed|"
     r"receipts?|promissory\s+note)\b", "Document"),
    (r"(?:handwriting|ballistic|finger[-\s]?print|forensic)\s+experts?|\bexpert\s+(?:opinion|"
     r"evidence)", "Expert"),
    (r"\bF\.?I\.?R\.?\b|first\s+information\s+report", "FIR"),
    (r"last\s+seen", "LastSeen"),
    (r"circumstantial\s+evidence", "Circumstantial"),
)]
_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def _number(text: str) -> float:
    text = text.lower()
    return float(_WORD_NUMBERS[text]) if text in _WORD_NUMBERS else float(text.replace(",", ""))


def _span(text: str, start: int, end: int, offset: int) -> Span:
    return Span(start=start + offset, end=end + offset, text=text[start:end])


def facts_region(text: str, source: str, segments: list[Segment] | None = None,
                 facts_fraction: float = 0.2) -> tuple[int, int, str]:
    """``(start, end, located_by)`` of the facts: the first run of Facts segments of a judgment
    (the extract stage's segmenter), or the whole text of a query or short text."""
    if source != "judgment":
        return 0, len(text), "whole text"
    segments = segment(text, facts_fraction=facts_fraction) if segments is None else segments
    facts = [s for s in segments if s.section_type == "Facts"]
    if not facts:
        return 0, min(len(text), max(1, int(facts_fraction * len(text)))), "segmenter"
    start, end = facts[0].start, facts[0].end
    for s in facts[1:]:
        if s.start > end:
            break
        end = s.end
    return start, end, "segmenter"


def find_ages(facts: str, offset: int = 0, criminal: bool = False) -> list[Age]:
    ages = []
    for m in _AGE.finditer(facts):
        n = next(g for g in m.groups() if g)
        years = _number(n)
        if years > 120:
            continue
        descriptor = "minor" if years < 18 else "major"
        ages.append(Age(years=years, descriptor=descriptor,
                        role=read_role("ages", facts, m.start(), m.end(), criminal),
                        span=_span(facts, m.start(), m.end(), offset)))
    return ages


def find_amounts(facts: str, offset: int = 0) -> list[Amount]:
    amounts = []
    for m in _AMOUNT.finditer(facts):
        value = _number(m.group("n")) * _MULTIPLIER.get((m.group("mult") or "").lower(), 1)
        if value > MAX_AMOUNT:
            continue  # a run of digits no judgment means as a sum (the schema's bound)
        amounts.append(Amount(value=value, role=read_role("amounts", facts, m.start(), m.end()),
                              span=_span(facts, m.start(), m.end(), offset)))
    return amounts


def find_durations(facts: str, ages: Iterable[Age] = (), offset: int = 0) -> list[Duration]:
    taken = [(a.span.start - offset, a.span.end - offset) for a in ages if a.span]
    durations = []
    for m in _DURATION.finditer(facts):
        if any(s <= m.start() < e for s, e in taken):
            continue  # the years of an age
        after = facts[m.end():m.end() + 12].lower()
        if after.lstrip().startswith(("old", "of age")):
            continue
        unit = m.group("unit").lower().rstrip("s") + "s"
        if _number(m.group("n")) > MAX_DURATION:
            continue
        durations.append(Duration(value=_number(m.group("n")), unit=unit,
                                  role=read_role("durations", facts, m.start(), m.end()),
                                  span=_span(facts, m.start(), m.end(), offset)))
    return durations


def find_sections_cited(facts: str, offset: int = 0) -> list[SectionCited]:
    seen, cited = set(), []
    for mention in find_sections(facts):
        if mention.section_id in seen:
            continue
        seen.add(mention.section_id)
        cited.append(SectionCited(section_id=mention.section_id,
                                  span=_span(facts, mention.start, mention.end, offset)))
    return cited


def find_evidence(facts: str, offset: int = 0) -> list[EvidenceItem]:
    items, seen = [], set()
    bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(facts)] + [len(facts)]
    for pattern, kind in _EVIDENCE:
        m = pattern.search(facts)
        if not m or kind in seen:
            continue
        seen.add(kind)
        start = max(b for b in bounds if b <= m.start())
        end = min(b for b in bounds if b >= m.end())
        items.append(EvidenceItem(evidence_type=kind,
                                  description=" ".join(facts[start:end].split())[:240],
                                  span=_span(facts, m.start(), m.end(), offset)))
    return items


def party_from_name(name: str | None, text: str = "", offset: int | None = None) -> Party:
    """A party's type from its name ("State of Punjab": State); a person's name: Individual."""
    if not isinstance(name, str) or not name.strip():  # metadata has None/NaN for unread names
        return Party()
    kind = next((t for pattern, t in _NAME_TYPES if pattern.search(name)), "Individual")
    where = text.find(name) if text else -1
    span = Span(start=where + (offset or 0), end=where + (offset or 0) + len(name), text=name) \
        if where >= 0 else None
    return Party(type=kind, span=span, extractor="rules")


def parties(facts: str, offset: int, petitioner: str | None, respondent: str | None,
            text: str) -> Parties:
    sides = {"petitioner": party_from_name(petitioner, text),
             "respondent": party_from_name(respondent, text)}
    for m in _ROLE.finditer(facts):  # a role word in the facts is more specific than a name
        side = _SIDE[m.group("who").lower().rstrip("s")]
        role = _ROLE_WORDS[m.group("role").lower()]
        if sides[side].type in ("Unknown", "Individual") or role in ("Minor", "Tenant",
                                                                     "Licensee", "Employee"):
            sides[side] = Party(type=role, span=_span(facts, m.start(), m.end(), offset))
    return Parties(**sides)


def extract_rules(text: str, case_id: str, source: str, segments: list[Segment] | None = None,
                  petitioner: str | None = None, respondent: str | None = None,
                  outcome: str = "Unknown", facts_fraction: float = 0.2) -> FactSheet:
    """The rule fact sheet of one text. Raises ValueError for an empty text."""
    if not text or not text.strip():
        raise FactSheetError(f"{case_id}: empty text, no facts to read")
    letters = _LETTER.findall(text)
    latin = sum(1 for c in letters if c.isascii())
    if letters and latin < 0.5 * len(letters):
        raise FactSheetError(f"{case_id}: the text is not in English ({latin / len(letters):.0%} of "
                         "its letters are Latin); the extractors read English judgments only")
    start, end, located_by = facts_region(text, source, segments, facts_fraction)
    facts = text[start:end]
    sections = find_sections_cited(facts, start)
    cats = categories([c.section_id for c in sections], facts)
    ages = find_ages(facts, start, "criminal" in cats)
    return FactSheet(
        case_id=case_id, source=source,
        facts_span=Span(start=start, end=end, text=facts[:200]),
        facts_located_by=located_by,
        parties=parties(facts, start, petitioner, respondent, text),
        evidence_items=find_evidence(facts, start),
        sections_cited=sections, categories=sorted(cats),
        numerical_facts={"amounts": find_amounts(facts, start), "ages": ages,
                         "durations": find_durations(facts, ages, start)},
        outcome=outcome if outcome else "Unknown")


# Span tags for the entity tagger (countercase.ner.entities): every mention, not one per kind.
_ROLE_MENTION = re.compile(
    r"\b(?:" + "|".join(sorted(list(_SIDE) + ["accused", "complainant"] + [
        w for w in _ROLE_WORDS if w not in ("company", "firm", "minor", "servant")],
        key=len, reverse=True)) + r")s?\b", re.I)  # words too common in other senses left out


def evidence_mentions(facts: str) -> list[tuple[int, int, str]]:
    """``(start, end, evidence type)`` of every mention of the evidence lexicon, in text order."""
    found = [(m.start(), m.end(), kind) for pattern, kind in _EVIDENCE
             for m in pattern.finditer(facts)]
    return sorted(found)


def role_mentions(facts: str) -> list[tuple[int, int, str | None, str | None]]:
    """``(start, end, side, party type)`` of role words: "the appellant, a tenant" (side and
    type), then a lone word: a side ("respondent"), a type ("tenant") or neither ("accused")."""
    found = []
    for m in _ROLE.finditer(facts):
        found.append((m.start(), m.end(), _SIDE[m.group("who").lower().rstrip("s")],
                      _ROLE_WORDS[m.group("role").lower()]))
    taken = [(s, e) for s, e, *_ in found]
    for m in _ROLE_MENTION.finditer(facts):
        if any(s <= m.start() < e for s, e in taken):
            continue
        word = m.group().lower()
        word = word if word in _SIDE or word in _ROLE_WORDS else word[:-1]
        # the accused appeals as often as not, and a complainant is no party: no side for them
        found.append((m.start(), m.end(), _SIDE.get(word), _ROLE_WORDS.get(word)))
    return sorted(found)

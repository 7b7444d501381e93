"""Matched placebos (``docs/preregistration/validity_v2.md``, section 4): for an operative edit
of a case's text, legally null edits of the same operation, and the one whose IDF mass is
closest to the operative edit's.

The IDF mass of an edit is ``sum over analysed tokens t of |n_after(t) - n_before(t)| * idf(t)``
(the index's analyser and BM25 idf; a token the index lacks takes the idf of document frequency
0, the largest). The candidates of each operation:

- a section changed: each mention the operative edit changed renumbered to its 2023 counterpart,
  or restated in another surface form that keeps its number (:data:`SURFACE_FORMS`);
- a party's type changed at *n* mentions: a role word replaced by its synonym at *n* mentions;
- an evidence item removed: one contiguous run of whole words, holding no evidence, section,
  role or number mention and none of the removed text, taken out;
- a number moved across a threshold: the same number moved by the same amount the other way
  when that crosses no threshold of its kind, else by the largest move within its band.

Matching reads texts and document frequencies only, never a ranking.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from countercase.extract.act_sections import find_sections
from countercase.factsheet.rules import (evidence_mentions, find_ages, find_amounts,
                                         find_durations, role_mentions)
from countercase.factsheet.thresholds import crosses, load_thresholds
from countercase.legal.acts import ACTS_BY_CODE
from countercase.perturb.placebo import ROLE_WORDS, SYNONYMS, renamed
from countercase.perturb.query import apply_edits

OPERATIONS = ("section", "party", "evidence", "numerical")
# a section's mention restated, its number kept: "Section 302 IPC" -> "s. 302 of the Penal Code"
# the keyword alone restated, the number and what follows it kept: "Section 302" -> "Sec. 302"
KEYWORD_FORMS = {"Section": ("Sec. {number}", "S. {number}", "u/s. {number}",
                             "section No. {number}"),
                 "Article": ("Art. {number}", "Art {number}", "article No. {number}")}
SURFACE_FORMS = ("s. {number} of the {name}", "Sec. {number} {code}",
                 "Section {number} of the {name}", "Section {number} of the {name}, {year}",
                 "s. {number}, {name}, {year}", "section {number} of the {code}, {year}")


@dataclass(frozen=True)
class Candidate:
    description: str
    text: str  # the case text with the edit made


class Mass:
    """The IDF mass of edits of one case's text (``analyze``: the index's analyser; ``idf``:
    terms -> their BM25 idf)."""

    def __init__(self, analyze: Callable[[str], list[str]],
                 idf: Callable[[Iterable[str]], Mapping[str, float]]) -> None:
        self.analyze, self.idf = analyze, idf

    def of(self, before: str, after: str) -> float:
        a, b = Counter(self.analyze(before)), Counter(self.analyze(after))
        terms = sorted(set(a) | set(b))
        idf = self.idf(terms)
        return float(sum(abs(b[t] - a[t]) * idf[t] for t in terms))

    def words(self, text: str) -> list[tuple[int, int, float]]:
        """Each whitespace-delimited word of ``text``: (start, end, the mass of removing it)."""
        found = [(m.start(), m.end(), self.analyze(m.group())) for m in re.finditer(r"\S+", text)]
        idf = self.idf(sorted({t for _, _, tokens in found for t in tokens}))
        return [(a, b, float(sum(idf[t] for t in tokens))) for a, b, tokens in found]


def closest(mass: Mass, text: str, target: float, candidates: Iterable[Candidate],
            tolerance: float) -> tuple[Candidate, float] | None:
    """The candidate whose mass is closest to ``target`` (ties: the first), if within
    ``tolerance`` of it (a share: 0.25 is ±25 %); None: no candidate is."""
    best = None
    for candidate in candidates:
        found = mass.of(text, candidate.text)
        if best is None or abs(found - target) < abs(best[1] - target):
            best = (candidate, found)
    if best is None or abs(best[1] - target) > tolerance * target:
        return None
    return best


_KEYWORD = re.compile(r"(?:sections?|secs?\.?|s\.|u/s\.?|articles?|arts?\.?)\s*", re.I)


def _keyword(text: str, mention) -> int:
    """Where ``mention``'s own words start: its section keyword ("under Section 302": at
    "Section"), else its number."""
    words = text[mention.start:mention.end]
    number = mention.section_id.rpartition("-")[2]
    found = [m.start() for m in _KEYWORD.finditer(words) if m.end() <= words.find(number)]
    at = found[-1] if found else max(0, words.find(number))
    return mention.start + at


def _extent(text: str, mention, successor: str | None = None) -> list[tuple[int, int, str]]:
    """The edits renaming ``mention`` (its number, and the code named after it)."""
    return renamed(text, mention.start, mention.end, mention.section_id,
                   successor or mention.section_id)


def section_candidates(text: str, old: str, successor: str | None) -> list[Candidate]:
    """Each mention of section ``old`` renumbered to ``successor`` (its 2023 counterpart),
    restated whole (its number and the code named after it) in each form of
    :data:`SURFACE_FORMS`, and its keyword alone restated (:data:`KEYWORD_FORMS`), the number
    kept."""
    mentions = [m for m in find_sections(text) if m.section_id == old]
    if not mentions:
        return []
    found = []
    if successor is not None:
        edits = [e for m in mentions for e in _extent(text, m, successor)]
        if edits:
            found.append(Candidate(f"{old} renumbered {successor}", apply_edits(text, edits)))
    code, _, number = old.partition("-")  # "IPC-302", "Constitution-Article-21"
    number = number.removeprefix("Article-")
    act = ACTS_BY_CODE.get(code)
    if act is not None and act.unit == "Section":
        spans = [(_keyword(text, m), max(e for _, e, _ in _extent(text, m) or [(0, m.end, "")]))
                 for m in mentions]
        for form in SURFACE_FORMS:
            words = form.format(number=number, name=act.title, code=code, year=act.year)
            found.append(Candidate(f"{old} restated as {words!r}",
                                   apply_edits(text, [(a, b, words) for a, b in spans])))
    for form in KEYWORD_FORMS["Article" if act is not None and act.unit == "Article"
                              else "Section"]:
        words = form.format(number=number)
        found.append(Candidate(f"{old}'s keyword restated as {words!r}", apply_edits(
            text, [(_keyword(text, m), m.end, words) for m in mentions])))
    return found


def party_candidates(text: str, mentions: int) -> list[Candidate]:
    """A role word replaced by its synonym at ``mentions`` of its mentions, first ones first
    (one candidate per role word that has as many)."""
    by_word: dict[str, list[re.Match]] = {}
    for m in ROLE_WORDS.finditer(text):
        by_word.setdefault(m.group().lower(), []).append(m)
    found = []
    for word, matches in by_word.items():
        if len(matches) < mentions:
            continue
        new = SYNONYMS[word]
        edits = [(m.start(), m.end(), new.capitalize() if m.group()[0].isupper() else new)
                 for m in matches[:mentions]]
        found.append(Candidate(f"role word {word!r} -> {new!r} at {mentions} mention(s)",
                               apply_edits(text, edits)))
    return found


def _protected(text: str) -> list[tuple[int, int]]:
    """Where the legal facts are mentioned: evidence, sections, roles and numbers."""
    spans = [(a, b) for a, b, _ in evidence_mentions(text)]
    # a section's mention with the code named after it ("302 IPC": renamed's edits cover both)
    spans += [(a, b) for m in find_sections(text) for a, b, _ in _extent(text, m)
              or [(m.start, m.end, "")]]
    spans += [(a, b) for a, b, _, _ in role_mentions(text)]
    ages = find_ages(text)
    spans += [(x.span.start, x.span.end) for x in [*ages, *find_amounts(text),
                                                    *find_durations(text, ages)]]
    return spans


def removal_candidate(mass: Mass, text: str, removed: list[tuple[int, int]], target: float,
                      max_words: int) -> Candidate | None:
    """The run of at most ``max_words`` whole words whose removal's mass is closest to
    ``target`` (ties: the earliest), touching no protected span nor the ``removed`` ones."""
    words = mass.words(text)
    blocked = sorted([*_protected(text), *removed])
    free = [not any(a < e and s < b for s, e in blocked) for a, b, _ in words]
    best = None
    for i in range(len(words)):
        total = 0.0
        for j in range(i, min(len(words), i + max_words)):
            if not free[j]:
                break
            total += words[j][2]
            if best is None or abs(total - target) < abs(best[0] - target):
                best = (total, i, j)
    if best is None:
        return None
    _, i, j = best
    start, end = words[i][0], words[j][1]
    return Candidate(f"words {start}-{end} removed ({j - i + 1} words, no legal fact)",
                     apply_edits(text, [(start, end, "")]))


def number_move(kind: str, old: float, new: float) -> float | None:
    """The placebo's value: ``old`` moved by ``new - old`` the other way when that crosses no
    threshold of ``kind`` (and stays at or above 0), else by the largest move of at most that
    size within ``old``'s band (ages, amounts and durations count in whole years, rupees and
    days; ties: upwards); None: no move stays in the band."""
    thresholds = [t.value for t in load_thresholds()[kind]]
    mirror = old - (new - old)
    if mirror >= 0 and not any(crosses(old, mirror, t) for t in thresholds):
        return mirror
    step = abs(new - old)
    below = max((t for t in thresholds if t <= old), default=0.0)  # the band holds its floor
    above = min((t for t in thresholds if t > old), default=float("inf"))
    size, sign = max((min(step, old - below), -1.0), (min(step, above - 1 - old), 1.0))
    return old + sign * size if size > 0 else None

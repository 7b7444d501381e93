"""The legal tables the perturbation rules read: operative section swaps and the provisions that
are never a target (``section_swaps.yaml``), and where a party swap or an evidence toggle applies
(``applicability.yaml``). Each entry carries its reason and source, and a table entry without
them, or naming a category, party type or evidence type outside the vocabularies, is an error
naming its file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from countercase.errors import CountercaseError
from countercase.factsheet.schema import EVIDENCE_TYPES, PARTY_TYPES, SECTION_ID_PATTERN
from countercase.factsheet.categories import CASE_CATEGORIES

SWAPS_PATH = Path(__file__).with_name("section_swaps.yaml")
APPLICABILITY_PATH = Path(__file__).with_name("applicability.yaml")
_SECTION = re.compile(SECTION_ID_PATTERN)


class LegalTableError(CountercaseError, ValueError):
    """An entry of a legal table that cannot be used (the message names its file and line)."""


@dataclass(frozen=True)
class Swap:
    source_section: str
    target: str
    reason: str
    source: str  # the legal source of the swap
    words: re.Pattern | None = None  # the case's text must state what the target needs
    unless: frozenset[str] = frozenset()  # a case citing one of these is outside the swap
    # the case's text must not state what the target denies (a death, for an attempt)
    contradicted: re.Pattern | None = None


def _words(item: dict) -> re.Pattern | None:
    return _pattern(item["words"]) if item.get("words") else None


def _pattern(words: str) -> re.Pattern:
    return re.compile(rf"\b(?:{words})\b", re.I)


def _needs(path: Path, line: int, item: dict, a: str, b: str,
           key: str = "words") -> dict[str, re.Pattern | None]:
    """What the case's text must state for a swap into each section of the pair: ``words`` as
    a pattern is the second section's need (a dowry death needs a marriage; the first is
    reached without), as a mapping any section's of the pair; ``key`` ``not_words``: what it
    must not state, read the same way."""
    words = item.get(key)
    if not isinstance(words, dict):
        return {a: None, b: _pattern(words) if words else None}
    unknown = sorted(set(words) - {a, b})
    if unknown:
        raise LegalTableError(f"{path}:{line}: {key} name {unknown}, not a section of the swap")
    return {s: _pattern(words[s]) if words.get(s) else None for s in (a, b)}


@dataclass(frozen=True)
class PartyAxis:
    types: frozenset[str]
    name: str
    categories: frozenset[str]
    reason: str
    source: str
    words: re.Pattern | None = None  # the case's text must name the relation (a tenancy)
    sections: frozenset[str] = frozenset()  # one of them must be cited (where the axis decides)
    # the case's text must not state what the new type denies (an adult's status, for a minor)
    not_words: re.Pattern | None = None
    since: int | None = None  # the year the law the axis applies came into force


@dataclass(frozen=True)
class EvidenceRule:
    type: str
    offences: frozenset[str]  # offence groups whose proof uses it
    categories: frozenset[str]  # or case categories where it applies whatever the offence
    reason: str
    source: str


@dataclass(frozen=True)
class LegalTables:
    swaps: dict[str, tuple[Swap, ...]]  # cited section -> its operative alternatives
    repealed: dict[str, str]  # section -> why and source
    party_axes: tuple[PartyAxis, ...]
    offence_groups: dict[str, str]  # section -> offence group
    evidence: dict[str, EvidenceRule]  # evidence type -> where it applies
    offence_words: dict[str, re.Pattern]  # offence group -> words stating it
    enacted: dict[str, int] = field(default_factory=dict)  # section -> year it came into force

    def offences(self, section_ids: Iterable[str], text: str = "") -> frozenset[str]:
        """The offence groups of a case: by the sections it cites, else by its text's words."""
        found = frozenset(self.offence_groups[s] for s in section_ids if s in self.offence_groups)
        if found:
            return found
        return frozenset(g for g, words in self.offence_words.items() if words.search(text))

    def evidence_applies(self, kind: str, offences: frozenset[str],
                         categories: frozenset[str]) -> EvidenceRule | None:
        rule = self.evidence.get(kind)
        if rule is None or not (rule.offences & offences or rule.categories & categories):
            return None
        return rule


def _items(path: Path, text: str, key: str) -> list[tuple[Any, int]]:
    """The items of the list under ``key`` with their 1-based lines."""
    root = yaml.compose(text)
    data = yaml.safe_load(text) or {}
    lines: list[int] = []
    for k, value in (root.value if root is not None else []):
        if k.value == key and isinstance(value, yaml.SequenceNode):
            lines = [item.start_mark.line + 1 for item in value.value]
    items = data.get(key) or []
    if not isinstance(items, list):
        raise LegalTableError(f"{path}: {key} must be a list")
    return list(zip(items, lines))


def _need(path: Path, line: int, item: Any, fields: tuple[str, ...], what: str) -> None:
    if not isinstance(item, dict):
        raise LegalTableError(f"{path}:{line}: a {what} must be a mapping")
    missing = [f for f in fields if not item.get(f)]
    if missing:
        raise LegalTableError(f"{path}:{line}: a {what} without {', '.join(missing)}")


def _section(path: Path, line: int, section: str) -> str:
    if not isinstance(section, str) or not _SECTION.match(section):
        raise LegalTableError(f"{path}:{line}: {section!r} is not a canonical section id")
    return section


def _known(path: Path, line: int, values: Iterable[str], vocabulary: tuple[str, ...],
           what: str) -> frozenset[str]:
    values = frozenset(values)
    unknown = sorted(values - set(vocabulary))
    if unknown:
        raise LegalTableError(f"{path}:{line}: unknown {what} {', '.join(map(repr, unknown))}")
    return values


def load_enacted(path: Path) -> dict[str, int]:
    """Provisions a swap may target that came into force after 1950: section -> year."""
    text = path.read_text(encoding="utf-8")
    enacted = {}
    for item, line in _items(path, text, "enacted"):
        _need(path, line, item, ("section", "year", "source"), "enacted provision")
        if not isinstance(item["year"], int):
            raise LegalTableError(f"{path}:{line}: year {item['year']!r} is not a year")
        enacted[_section(path, line, item["section"])] = item["year"]
    return enacted


def load_swaps(path: Path) -> tuple[dict[str, tuple[Swap, ...]], dict[str, str]]:
    text = path.read_text(encoding="utf-8")
    repealed = {}
    for item, line in _items(path, text, "repealed"):
        _need(path, line, item, ("section", "why", "source"), "repealed provision")
        repealed[_section(path, line, item["section"])] = f"{item['why']} ({item['source']})"
    swaps: dict[str, list[Swap]] = {}
    for item, line in _items(path, text, "swaps"):
        _need(path, line, item, ("between", "reason", "source"), "swap")
        pair = item["between"]
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise LegalTableError(f"{path}:{line}: a swap is between two different sections")
        a, b = (_section(path, line, s) for s in pair)
        for s in (a, b):
            if s in repealed:
                raise LegalTableError(f"{path}:{line}: {s} is repealed ({repealed[s]}) and "
                                      "is never a target")
        needs = _needs(path, line, item, a, b)
        denies = _needs(path, line, item, a, b, "not_words")
        unless = frozenset(_section(path, line, x) for x in item.get("unless") or ())
        for old, new in ((a, b), (b, a)):
            swaps.setdefault(old, []).append(Swap(old, new, item["reason"], item["source"],
                                                  needs[new], unless, denies[new]))
    return {k: tuple(v) for k, v in swaps.items()}, repealed


def load_applicability(path: Path) -> tuple[tuple[PartyAxis, ...], dict[str, str],
                                            dict[str, EvidenceRule], dict[str, re.Pattern]]:
    text = path.read_text(encoding="utf-8")
    axes = []
    for item, line in _items(path, text, "party_axes"):
        _need(path, line, item, ("types", "name", "categories", "reason", "source"),
              "party axis")
        types = _known(path, line, item["types"], PARTY_TYPES, "party type")
        if len(types) != 2:
            raise LegalTableError(f"{path}:{line}: a party axis joins two types")
        axes.append(PartyAxis(types, item["name"],
                              _known(path, line, item["categories"], CASE_CATEGORIES,
                                     "case category"), item["reason"], item["source"],
                              _words(item),
                              frozenset(_section(path, line, x)
                                        for x in item.get("sections") or ()),
                              _pattern(item["not_words"]) if item.get("not_words") else None,
                              item.get("since")))
    data = yaml.safe_load(text) or {}
    groups: dict[str, str] = {}
    for group, sections in (data.get("offences") or {}).items():
        for section in sections:
            groups[_section(path, 0, section)] = group
    evidence = {}
    for item, line in _items(path, text, "evidence"):
        _need(path, line, item, ("type", "reason", "source"), "evidence rule")
        (kind,) = _known(path, line, [item["type"]], EVIDENCE_TYPES, "evidence type")
        offences = frozenset(item.get("offences") or ())
        unknown = sorted(offences - set(groups.values()))
        if unknown:
            raise LegalTableError(f"{path}:{line}: unknown offence group(s) {unknown}")
        categories = _known(path, line, item.get("categories") or (), CASE_CATEGORIES,
                            "case category")
        if not offences and not categories:
            raise LegalTableError(f"{path}:{line}: evidence rule {kind} applies nowhere "
                                  "(give offences or categories)")
        evidence[kind] = EvidenceRule(kind, offences, categories, item["reason"], item["source"])
    words = data.get("offence_words") or {}
    unknown = sorted(set(words) - set(groups.values()))
    if unknown:
        raise LegalTableError(f"{path}: offence_words names unknown offence group(s) {unknown}")
    return tuple(axes), groups, evidence, {g: _words({"words": w}) for g, w in words.items()}


@lru_cache(maxsize=4)
def load_tables(swaps: Path = SWAPS_PATH, applicability: Path = APPLICABILITY_PATH) -> LegalTables:
    swap_table, repealed = load_swaps(Path(swaps))
    axes, groups, evidence, words = load_applicability(Path(applicability))
    return LegalTables(swap_table, repealed, axes, groups, evidence, words,
                       load_enacted(Path(swaps)))

"""Masking a judgment's facts the way AILA 2019 masks its queries.

The AILA queries name no person (parties and witnesses are ``P1``, ``P2``, ... in order of first
mention) and almost no statute: the few provisions left read "Section S of Act A1". A corpus
judgment used as a query (the citation collection) is masked the same way, so that it cannot be
matched to what it cites by a shared party name or by the statute it applies, as an AILA query
cannot:

- **statutes**: every section or article mention the statute reader finds (resolved to an act
  or not) becomes "Section S" or "Article S", and every name of a known act "A1", "A2", ... in
  order of first mention;
- **parties**: a party named in the judgment's title (its first line, "X v. Y") becomes ``P1``
  (petitioner) or ``P2`` (respondent), the whole name first, then each of its distinctive words
  (a surname mentioned alone: every person of that surname is masked with the party, where AILA
  would number them apart). A party that is the State, a government or an organisation keeps
  its name, as AILA keeps "the Bank" and "the State of Haryana".

Witnesses and other persons not in the title keep their names (AILA masks them too; finding them
needs the entity tagger, which is not run over the whole corpus).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from countercase.extract.act_sections import _ACT_RE, _MENTION, _OF_OTHER

# a title side naming one of these is an institution, not a person
_INSTITUTION = re.compile(
    r"\b(?:state|union|government|govt|corporation|company|co|bank|ltd|limited|board|authority|"
    r"commissioner|collector|municipal|municipality|society|university|council|committee|"
    r"department|india|republic|trust|officer|secretary|registrar|tribunal|court|commission|"
    r"industries|mills|association|federation|pvt|private|nct|administration|territory)\b", re.I)
_NAME_WORD = re.compile(r"[A-Za-z]{3,}")
_TITLE_WORD = re.compile(r"^(?:[A-Z(0-9]|of$|and$|the$|for$|in$|on$|to$|&$)")


@dataclass(frozen=True)
class Masked:
    text: str
    statutes: int  # section or article mentions masked
    acts: int  # act names masked
    parties: int  # party name mentions masked


def _act_label(labels: dict[str, str], key: str) -> str:
    return labels.setdefault(key, f"A{len(labels) + 1}")


def mask_statutes(text: str) -> tuple[str, int, int]:
    """``text`` with every provision number and act name masked; the counts of each."""
    labels: dict[str, str] = {}
    spans: list[tuple[int, int, str]] = []
    for match in _MENTION.finditer(text):
        unit = "Article" if match.group("kw").lower().startswith("art") else "Section"
        spans.append((match.start(), match.end(), f"{unit} S"))
    for match in _ACT_RE.finditer(text):
        key = next(code for code, value in match.groupdict().items() if value)
        spans.append((match.start(), match.end(), key))
    for match in _OF_OTHER.finditer(text):  # "of the Tamil Nadu Rent Act": an act we do not know
        name = match.group("name").split()
        if all(_TITLE_WORD.match(word) for word in name):  # not "High Court under ... the Code"
            spans.append((match.start("name"), match.end("name"), " ".join(name).lower()))
    out, position, mentions, acts = [], 0, 0, 0
    for start, end, what in sorted(spans):
        if start < position:  # overlapping readings of one mention: the first wins
            continue
        out.append(text[position:start])
        if what.endswith(" S"):
            out.append(what)
            mentions += 1
        else:
            out.append(_act_label(labels, what))
            acts += 1
        position = end
    out.append(text[position:])
    return "".join(out), mentions, acts


def person_names(title: str) -> list[str]:
    """The title's two sides (petitioner first) that name persons; "" for an institution."""
    parts = re.split(r"\s(?:v\.?|vs\.?|versus)\s", f" {title.strip()} ", maxsplit=1, flags=re.I)
    if len(parts) != 2:
        return []
    return ["" if _INSTITUTION.search(side.replace(".", "")) else
            re.sub(r"\s+(?:and\s+(?:others|another|ors|anr)|&\s*(?:ors|anr))\.?\s*$", "",
                   side.strip(" .,"), flags=re.I) for side in parts]


def mask_parties(text: str, title: str) -> tuple[str, int]:
    """``text`` with the title's person parties masked as P1 and P2; the mentions masked."""
    count = 0
    for label, name in zip(("P1", "P2"), person_names(title)):
        words = [w for w in _NAME_WORD.findall(name) if w.lower() not in {"and", "the", "others"}]
        if not words:
            continue
        whole = r"\W+".join(map(re.escape, words))
        for pattern in [whole, *map(re.escape, words)]:
            text, n = re.subn(rf"(?<![A-Za-z]){pattern}(?![A-Za-z])", label, text, flags=re.I)
            count += n
    return text, count


def mask(text: str, title: str) -> Masked:
    """``text`` masked as the module docstring says (statutes first: an act's name can hold a
    word of a party's name, never the other way round)."""
    masked, statutes, acts = mask_statutes(text)
    masked, parties = mask_parties(masked, title)
    return Masked(masked, statutes, acts, parties)

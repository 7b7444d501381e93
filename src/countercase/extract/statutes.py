"""The statute table: every section or article of the shipped acts, under its canonical id.

Sources (``data/raw/statutes``, see ``data/README.md``): the civictech JSON of eight central
acts, the BNS and BNSS JSON, the current Constitution JSON, and the 1950 Constitution's Markdown
(used for each article's Part and the article-to-article cross-reference graph only, since its
text stops at 1982).

Known defects of the sources, handled here and reported, never silently:

- ``bns_bnss_bsa/bsa.json`` is not the Bharatiya Sakshya Adhiniyam: its section 1 reads "This Act
  may be called the Bharatiya Nyaya Sanhita, 2023" and it has 356 sections, the numbering of the
  withdrawn August 2023 BNS bill (the enacted BNS has 358). It is skipped; no BSA text is shipped.
- ``hma.json`` packs each row as one CSV string under the key "chapter,section,section_title,
  section_desc"; multi-line texts were cut into separate rows upstream, many of them empty, so
  HMA texts are partial (37 sections): continuation rows are joined back to their section.
- ``bns.json`` lists sections 186 and 195 twice with different texts; the first is kept.
- BNS and BNSS come without chapter numbers or section titles: those columns are empty there.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from countercase.legal.acts import ACTS, ACTS_BY_CODE, section_id

log = logging.getLogger(__name__)

CIVICTECH = {  # act code -> file stem in central_acts_civictech/
    "IPC": "ipc", "CrPC": "crpc", "CPC": "cpc", "IEA": "iea", "HMA": "hma", "IDA": "ida",
    "NIA": "nia", "MVA": "MVA",
}
NEW_CODES = {"BNS": "bns", "BNSS": "bnss"}  # bsa.json is skipped: see the module docstring
SKIPPED_SOURCES = {"bns_bnss_bsa/bsa.json": "holds the withdrawn 2023 BNS bill (356 sections), "
                                            "not the Bharatiya Sakshya Adhiniyam"}
_OMITTED = re.compile(r"^\W*(?:omitted|repealed|rep\.|\[repealed\])", re.I)
_NUMBER = re.compile(r"^(\d+)([A-Z]*)$")


@dataclass(frozen=True)
class StatuteSection:
    section_id: str
    act: str
    act_title: str
    number: str
    chapter: str | None
    chapter_title: str | None
    title: str | None
    text: str
    omitted: bool
    effective_from: str | None
    effective_to: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _load_json(path: Path) -> Any:
    if not path.exists() and Path(str(path) + ".gz").exists():
        path = Path(str(path) + ".gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _clean(text: Any) -> str:
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in str(text or "").splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _number(value: Any) -> str:
    return re.sub(r"\s+", "", str(value)).upper()


def _number_key(number: str) -> tuple[int, str]:
    match = _NUMBER.match(number)
    return (int(match.group(1)), match.group(2)) if match else (10**9, number)


_HMA_ROW = re.compile(r"^\d+,\d+[A-Z]*,")


def _hma_entries(raw: list[dict[str, str]]) -> list[dict[str, str]]:
    """Rebuild HMA rows: a line that does not start "chapter,section," continues the last row."""
    entries: list[dict[str, str]] = []
    for line in (next(iter(entry.values()), "") for entry in raw):
        if not line.strip():
            continue
        if _HMA_ROW.match(line) or not entries:
            chapter, section, title, desc = (next(csv.reader([line])) + ["", "", "", ""])[:4]
            entries.append({"chapter": chapter, "section": section, "section_title": title,
                            "section_desc": desc})
        else:
            entries[-1]["section_desc"] += "\n" + line.strip().strip('"')
    return entries


def _civictech_rows(code: str, path: Path) -> Iterator[dict[str, Any]]:
    raw = _load_json(path)
    for entry in _hma_entries(raw) if code == "HMA" else raw:
        yield {
            "number": entry.get("Section", entry.get("section")),
            "chapter": entry.get("chapter"),
            "chapter_title": entry.get("chapter_title"),
            "title": entry.get("section_title", entry.get("title")),
            "text": entry.get("section_desc", entry.get("description")),
        }


def _new_code_rows(path: Path) -> Iterator[dict[str, Any]]:
    for entry in _load_json(path):
        number = re.sub(r"(?i)^section\s+", "", entry["section_name"].strip())
        yield {"number": number, "chapter": None, "chapter_title": None, "title": None,
               "text": entry["content"].lstrip(".\n ")}


def _constitution_parts(directory: Path) -> dict[str, tuple[str, str]]:
    """Article number -> (Part, Part title), from the 1950 Markdown's per-Part front matter."""
    parts = {}
    for path in sorted((directory / "parts").glob("part-*.md")):
        front = path.read_text(encoding="utf-8").split("---")[1]
        part = re.search(r"^part:\s*(\S+)", front, re.M)
        title = re.search(r'^title:\s*"?(.*?)"?\s*$', front, re.M)
        articles = re.search(r"^articles:\s*\[(.*)\]", front, re.M)
        if not (part and articles):
            continue
        for article in articles.group(1).split(","):
            parts[_number(article.strip().strip('"'))] = (part.group(1),
                                                           title.group(1) if title else None)
    return parts


def _constitution_rows(statutes_dir: Path) -> Iterator[dict[str, Any]]:
    parts = _constitution_parts(statutes_dir / "constitution_1950_crossrefs")
    for entry in _load_json(statutes_dir / "constitution_current" / "constitution_of_india.json"):
        number = _number(entry["article"])
        part, part_title = parts.get(number, (None, None))
        yield {"number": number, "chapter": part, "chapter_title": part_title,
               "title": entry.get("title"), "text": entry.get("description")}


def _rows(statutes_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for code, stem in CIVICTECH.items():
        for row in _civictech_rows(code, statutes_dir / "central_acts_civictech" / f"{stem}.json"):
            yield code, row
    for code, stem in NEW_CODES.items():
        for row in _new_code_rows(statutes_dir / "bns_bnss_bsa" / f"{stem}.json"):
            yield code, row
    for row in _constitution_rows(statutes_dir):
        yield "Constitution", row


def build_statute_table(statutes_dir: str | Path) -> list[StatuteSection]:
    """One row per provision, sorted by the registry's act order, then number, then suffix.

    A provision listed twice in a source keeps its first, non-empty entry; the duplicates are
    counted and logged. The Constitution's Preamble (article 0 in the source) gets the id
    ``Constitution-Preamble``.
    """
    statutes_dir = Path(statutes_dir)
    for source, why in SKIPPED_SOURCES.items():
        log.info("statute table: skipping %s: %s", source, why)
    table: dict[str, StatuteSection] = {}
    duplicates = 0
    for code, row in _rows(statutes_dir):
        act = ACTS_BY_CODE[code]
        number = _number(row["number"])
        if not number:
            continue
        sid = "Constitution-Preamble" if code == "Constitution" and number == "0" else section_id(code, number)
        text = _clean(row["text"])
        if sid in table:
            duplicates += 1
            if table[sid].text or not text:
                continue
        chapter = row["chapter"]
        table[sid] = StatuteSection(
            section_id=sid, act=code, act_title=act.title, number=number,
            chapter=None if chapter in (None, "") else str(chapter),
            chapter_title=_clean(row["chapter_title"]).title() or None if row["chapter_title"] else None,
            title=_clean(row["title"]) or None, text=text,
            omitted=bool(_OMITTED.match(text)) or not text,
            effective_from=act.effective_from.isoformat() if act.effective_from else None,
            effective_to=act.effective_to.isoformat() if act.effective_to else None,
        )
    if duplicates:
        log.warning("statute table: %d duplicate provisions in the sources (first kept)", duplicates)
    order = {act.code: i for i, act in enumerate(ACTS)}
    return sorted(table.values(), key=lambda s: (order[s.act], s.number == "0" and s.act != "Constitution",
                                                 _number_key(s.number)))


def statute_frame(statutes_dir: str | Path) -> pd.DataFrame:
    return pd.DataFrame([row.to_dict() for row in build_statute_table(statutes_dir)])


def _crossref_id(node: str) -> str | None:
    match = re.fullmatch(r"article-0*(\d+[A-Za-z]*)", node)
    return section_id("Constitution", match.group(1)) if match else None


def build_constitution_crossrefs(statutes_dir: str | Path) -> list[dict[str, str]]:
    """Article-to-article citation edges (source cites target) of the 1950 Constitution graph.

    Edges to schedules and parts are left out: the table holds articles only.
    """
    graph = _load_json(Path(statutes_dir) / "constitution_1950_crossrefs" / "metadata"
                       / "cross-references.json")
    edges = set()
    for node, links in graph.items():
        source = _crossref_id(node)
        for target_node in links.get("outbound", []):
            target = _crossref_id(target_node)
            if source and target and source != target:
                edges.add((source, target))
    return [{"source": s, "target": t} for s, t in sorted(edges)]

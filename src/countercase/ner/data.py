"""InLegalNER in token-TAB-BIO form: reading it (with counts and damaged lines reported), the
label set, and cutting sentences into windows that fit the encoder.

A file holds one ``token<TAB>tag`` line per word and a blank line between sentences; tokens are the
text split on whitespace (punctuation stays attached: ``book,``), so tagging new text splits it
the same way. Files may be gzipped.
"""

from __future__ import annotations

import gzip
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)

ENTITY_TYPES = ("COURT", "PETITIONER", "RESPONDENT", "JUDGE", "LAWYER", "DATE", "ORG", "GPE",
                "STATUTE", "PROVISION", "PRECEDENT", "CASE_NUMBER", "WITNESS", "OTHER_PERSON")
LABELS = ("O",) + tuple(f"{p}-{t}" for t in ENTITY_TYPES for p in ("B", "I"))
SPLITS = ("JUDGEMENT", "PREAMBLE")


class NerDataError(CountercaseError, FileNotFoundError):
    """An InLegalNER file that is missing."""


@dataclass
class Sentence:
    tokens: list[str]
    tags: list[str]


@dataclass
class BioFile:
    path: Path
    sentences: list[Sentence] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "path:line: why", the line skipped

    def counts(self) -> dict:
        entities = Counter(t[2:] for s in self.sentences for t in s.tags if t.startswith("B-"))
        return {"sentences": len(self.sentences),
                "tokens": sum(len(s.tokens) for s in self.sentences),
                "entities": dict(sorted(entities.items())),
                "damaged_lines": len(self.problems)}


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else \
        path.open(encoding="utf-8")


def read_bio(path: Path) -> BioFile:
    """Every sentence of a BIO file. A damaged line (not ``token<TAB>tag``, or a tag outside
    :data:`LABELS`) is skipped and reported with its line number; the rest is read."""
    path = Path(path)
    if not path.exists():
        raise NerDataError(f"BIO file not found: {path}")
    result = BioFile(path)
    tokens: list[str] = []
    tags: list[str] = []
    known = set(LABELS)
    with _open(path) as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                if tokens:
                    result.sentences.append(Sentence(tokens, tags))
                tokens, tags = [], []
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or parts[1] not in known:
                result.problems.append(f"{path}:{number}: expected token<TAB>BIO tag, got "
                                       f"{line[:60]!r}")
                continue
            tokens.append(parts[0].strip())
            tags.append(parts[1])
    if tokens:
        result.sentences.append(Sentence(tokens, tags))
    for problem in result.problems[:5]:
        log.warning("skipped %s", problem)
    if len(result.problems) > 5:
        log.warning("... and %d more damaged lines in %s", len(result.problems) - 5, path)
    return result


def split_files(data_dir: Path, split: str) -> list[Path]:
    """``NER_{split}_{JUDGEMENT,PREAMBLE}.txt`` (or ``.txt.gz``) in ``data_dir``."""
    paths = []
    for part in SPLITS:
        plain = Path(data_dir) / f"NER_{split}_{part}.txt"
        zipped = plain.with_name(plain.name + ".gz")
        path = plain if plain.exists() else zipped
        if not path.exists():
            raise NerDataError(f"InLegalNER file not found: {plain} (or {zipped.name})")
        paths.append(path)
    return paths


def word_windows(piece_counts: list[int], budget: int, overlap: int = 0) -> list[tuple[int, int]]:
    """``[start, end)`` word ranges whose word pieces fit ``budget``; consecutive windows share up
    to ``overlap`` words. A single word longer than the budget is a window of its own (cut by
    the tokenizer's truncation)."""
    windows, start, n = [], 0, len(piece_counts)
    while start < n:
        end, used = start, 0
        while end < n and (end == start or used + piece_counts[end] <= budget):
            used += piece_counts[end]
            end += 1
        windows.append((start, end))
        if end >= n:
            break
        start = max(start + 1, end - overlap)
    return windows

"""What a confirmatory run reads: the indexes, the citation collection and the corpus cases'
texts; each test's own inputs extend it (confirm.run.Inputs, confirm.v3.Inputs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from countercase import layout
from countercase.layout import IndexPaths


@dataclass(frozen=True)
class CorpusInputs:
    paths: IndexPaths
    citations: Path = layout.CITATIONS
    documents: Path = layout.DOCUMENTS
    sheets: Path = layout.JUDGMENT_SHEETS
    edges: Path = layout.SECTION_EDGES

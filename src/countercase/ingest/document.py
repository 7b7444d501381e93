"""What every ingest source yields: a document with text per page and its provenance."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterator, Protocol


@dataclass
class Page:
    index: int  # 0-based page index from the PDF's own page tree; shown to users as index + 1
    text: str


@dataclass
class Document:
    doc_id: str
    source: str  # "aila_text" | "pdf" | "sc_tar"
    source_path: str  # file path, or "archive.tar!member.pdf" for a tar member
    pages: list[Page]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(page.text for page in self.pages)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> "Document":
        pages = [Page(**page) for page in record["pages"]]
        return cls(record["doc_id"], record["source"], record["source_path"], pages,
                   record.get("provenance", {}))


@dataclass
class IngestFailure:
    """An input that could not be read; recorded in the failures file, never raised."""

    source_path: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Source(Protocol):
    """A source of judgments. Iterating yields documents, and failures for unreadable inputs."""

    def __iter__(self) -> Iterator[Document | IngestFailure]: ...

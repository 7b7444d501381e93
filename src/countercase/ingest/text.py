"""Plain-text judgments (the AILA documents): a folder of ``.txt`` or a ``.tar.gz`` of them.

A tar is streamed member by member, never unpacked to disk. Each file is one page (index 0).
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path
from typing import Iterator

from countercase.ingest.document import Document, IngestFailure, Page


def _natural_key(name: str) -> tuple:
    """C2 before C10: digits compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8, never failing: undecodable bytes become U+FFFD and are flagged."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def text_document(doc_id: str, data: bytes, source_path: str) -> Document:
    text, replaced = decode(data)
    return Document(doc_id, "aila_text", source_path, [Page(0, text.strip("\ufeff"))],
                    {"reader": "text", "n_pages": 1, "decode_replaced": replaced})


class TextSource:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        if self.path.is_dir():
            for file in sorted(self.path.glob("*.txt"), key=lambda p: _natural_key(p.name)):
                try:
                    yield text_document(file.stem, file.read_bytes(), str(file))
                except OSError as error:
                    yield IngestFailure(str(file), f"cannot read: {error.strerror}")
            return
        try:
            archive = tarfile.open(self.path)
        except (OSError, tarfile.TarError) as error:
            yield IngestFailure(str(self.path), f"not a readable tar archive: {error}")
            return
        with archive:
            try:
                members = [m for m in archive.getmembers()
                           if m.isfile() and m.name.endswith(".txt")]
            except (OSError, tarfile.TarError, EOFError) as error:
                yield IngestFailure(str(self.path), f"damaged tar archive: {error}")
                return
            for member in sorted(members, key=lambda m: _natural_key(Path(m.name).name)):
                where = f"{self.path}!{member.name}"
                try:
                    data = archive.extractfile(member).read()
                except (OSError, tarfile.TarError, EOFError) as error:
                    yield IngestFailure(where, f"cannot read tar member: {error}")
                    continue
                yield text_document(Path(member.name).stem, data, where)

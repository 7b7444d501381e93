"""Plain-text judgments (the AILA documents): a folder of ``.txt`` files or a tar of them.

A tar (``.tar``, ``.tar.gz``, ...) is read in one streaming pass, never unpacked to disk.
Each file becomes one document of one page (index 0); doc_id is the file stem ("C1").
Documents come in the numeric order of their ids (C1, C2, ..., C10), whatever the order of
the folder listing or of the tar members.
"""

from __future__ import annotations

import logging
import tarfile
from pathlib import Path
from typing import Iterator

from countercase.datasets.ids import natural_key
from countercase.errors import CountercaseError
from countercase.ingest.document import Document, IngestFailure, Page

log = logging.getLogger(__name__)

SOURCE = "aila_text"


def decode(data: bytes) -> tuple[str, int]:
    """UTF-8 that never fails: undecodable bytes become U+FFFD. Returns (text, n replaced)."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        strict_part = data.decode("utf-8", errors="ignore").count("\ufffd")
        text = data.decode("utf-8", errors="replace")
        return text, text.count("\ufffd") - strict_part


def text_document(doc_id: str, data: bytes, source_path: str) -> Document:
    text, replaced = decode(data)
    if replaced:
        log.warning("%s is not valid UTF-8: %d character(s) replaced", source_path, replaced)
    return Document(doc_id, SOURCE, source_path, [Page(0, text.removeprefix("\ufeff"))], {
        "reader": "text/utf-8", "n_pages": 1, "n_bytes": len(data),
        "decode_replaced": replaced > 0, "n_replaced_chars": replaced,
    })


class TextInputError(CountercaseError, ValueError):
    """Judgments that cannot all be read: the message names the input and what is wrong."""


def count_judgments(path: Path) -> int:
    """The ``.txt`` judgments of a folder or a tar archive, read through once before any is
    ingested: a damaged or truncated archive, a file that is no archive, or an input with no
    judgment is an error, never a partial corpus."""
    path = Path(path)
    if path.is_dir():
        found = sum(1 for p in path.iterdir() if p.suffix.lower() == ".txt" and p.is_file())
    elif not tarfile.is_tarfile(path):
        raise TextInputError(f"{path} is neither a folder of .txt judgments nor a tar archive")
    else:
        found = 0
        try:
            with tarfile.open(path, "r|*") as archive:
                for member in archive:
                    if member.isfile() and member.name.lower().endswith(".txt"):
                        archive.extractfile(member).read()  # a short read raises here
                        found += 1
        except (OSError, tarfile.TarError, EOFError) as error:
            raise TextInputError(f"{path}: damaged or truncated archive after {found} "
                                 f"judgment(s) ({error}); nothing was ingested") from None
    if not found:
        raise TextInputError(f"{path} holds no .txt judgment")
    return found


class TextSource:
    """``.txt`` judgments from a folder or a tar archive (see the module docstring)."""

    name = SOURCE

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        if self.path.is_dir():
            yield from self._folder()
        else:
            yield from self._tar()

    def _folder(self) -> Iterator[Document | IngestFailure]:
        files = [p for p in self.path.iterdir() if p.suffix.lower() == ".txt" and p.is_file()]
        for file in sorted(files, key=lambda p: natural_key(p.name)):
            try:
                data = file.read_bytes()
            except OSError as error:
                yield IngestFailure(str(file), f"cannot read: {error.strerror or error}")
                continue
            yield text_document(file.stem, data, str(file))

    def _tar(self) -> Iterator[Document | IngestFailure]:
        # One sequential pass ("r|*": no seeking), then sort: reading members in id order
        # straight from a .tar.gz would seek backwards, i.e. decompress again from the start.
        files: list[tuple[str, bytes]] = []
        try:
            with tarfile.open(self.path, "r|*") as archive:
                for member in archive:
                    if member.isfile() and member.name.lower().endswith(".txt"):
                        files.append((member.name, archive.extractfile(member).read()))
        except (OSError, tarfile.TarError, EOFError) as error:
            # Members read before the damage are kept; the archive is reported.
            yield IngestFailure(str(self.path), f"unreadable or damaged tar archive: {error}")
        for name, data in sorted(files, key=lambda item: natural_key(Path(item[0]).name)):
            yield text_document(Path(name).stem, data, f"{self.path}!{name}")

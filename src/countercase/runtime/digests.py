"""The SHA-256 of files, read in blocks: the embedded data's checksums, the LLM's model file, an
encoder's weights. One loop, so every checksum the project states is taken the same way."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_files(*paths: Path) -> str:
    """The hex SHA-256 of the files' bytes, one after another (one file: its own checksum)."""
    digest = hashlib.sha256()
    for path in paths:
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()

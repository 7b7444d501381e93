"""Stage ``embed`` in parts (``parts`` in ``countercase/dag/stages.yaml``): part ``i`` of ``N``
encodes a share of whole batches of the precedents' chunks into
:func:`countercase.layout.part` of the stage's folder; the stage then joins the shares into its
folder. Each batch holds the texts it holds in one pass, and a text's vector depends only on its
batch, so the joined vectors are byte-identical to one pass's.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from countercase import layout
from countercase.errors import PartMissing
from countercase.index.dense import (EMBEDDINGS_FILE, read_meta, store_embeddings,
                                     stored_is_current, texts_sha256)
from countercase.runtime.models import canonical_name

log = logging.getLogger(__name__)


def share(count: int, batch_size: int, number: int, parts: int) -> tuple[int, int]:
    """The rows [begin, end) of part ``number`` of ``parts``: whole batches of ``batch_size``."""
    batches = -(-count // batch_size)
    begin = (number - 1) * batches // parts * batch_size
    return begin, min(count, number * batches // parts * batch_size)


def _digest(folder: Path) -> str:
    found = hashlib.sha256()
    for path in sorted(folder.glob("*")):
        if path.is_file():
            found.update(path.name.encode() + b"\0" + path.read_bytes())
    return found.hexdigest()


def join_int8(out: Path, parts: int) -> None:
    """The int8 model every part made (one calibration, so one model) copied into ``out/int8``,
    where the searches read it."""
    folders = [layout.part(out, i, parts) / "int8" for i in range(1, parts + 1)]
    digests = {_digest(folder) for folder in folders}
    if len(digests) != 1:
        raise PartMissing(f"the parts of {out} made different int8 models: run them again")
    if (out / "int8").is_dir() and _digest(out / "int8") in digests:
        return
    shutil.rmtree(out / "int8", ignore_errors=True)
    shutil.copytree(folders[0], out / "int8")


def join(ids: Sequence[str], texts: Sequence[str], out_dir: Path, task: str, parts: int,
         encoder_name: str, batch_size: int, precision: str, max_seq_length: int | None,
         int8_model: str | None) -> bool:
    """The parts' vectors of ``task`` joined into ``out_dir`` (that is ``out/task``), unless it
    already holds these texts' (False). Each part must hold its share's texts, embedded as
    asked."""
    name = canonical_name(encoder_name)
    digest = texts_sha256(texts)
    if stored_is_current(out_dir, read_meta(out_dir), name, len(texts), digest, precision,
                         max_seq_length, int8_model):
        log.info("embeddings in %s are current: reused", out_dir)
        return False
    rows, seconds = [], 0.0
    for i in range(1, parts + 1):
        folder = layout.part(out_dir.parent, i, parts) / task
        begin, end = share(len(texts), batch_size, i, parts)
        meta = read_meta(folder)
        asked = (name, precision, max_seq_length, batch_size, texts_sha256(texts[begin:end]))
        found = None if meta is None else (meta.get("encoder"), meta.get("precision"),
                                           meta.get("max_seq_length"), meta.get("batch_size"),
                                           meta.get("texts_sha256"))
        if found != asked:
            raise PartMissing(f"part {i} of {parts} ({folder}) does not hold texts "
                            f"{begin}..{end} of {task} embedded as asked: run "
                            f"`countercase embed --part {i}/{parts}` first")
        rows.append(np.load(folder / EMBEDDINGS_FILE))
        seconds += float(meta.get("seconds") or 0.0)
    store_embeddings(out_dir, ids, texts, np.concatenate(rows), name, batch_size, precision,
                     seconds, max_seq_length, int8_model)
    log.info("joined %d parts of %s into %s", parts, task, out_dir)
    return True

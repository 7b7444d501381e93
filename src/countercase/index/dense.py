"""Dense index: stored, L2-normalised embeddings searched exactly (inner product) with FAISS.

Storage (one folder per encoder and passage set), written by :func:`build_embeddings`:

- ``embeddings.npy``: float32, one L2-normalised row per passage, in the order of ``ids.json``;
- ``ids.json``: the passage ids (chunk ids), unique;
- ``meta.json``: ``encoder``, ``dim``, ``count``, ``texts_sha256`` (of the texts, in order),
  ``ids_sha256``, ``precision``, the batch size and the seconds the embedding took.

Embeddings are computed once per (encoder, precision, texts): when ``meta.json`` names the same
encoder and precision and the same texts hash, and ``embeddings.npy`` has the stated shape, nothing is re-embedded
(a changed id list alone only rewrites ``ids.json``). ``meta.json`` is deleted before anything
else is written and written last, so an interrupted build is never taken for a finished one.
What it had embedded is kept in ``partial/`` (parts of :data:`PART_TEXTS` texts, each written
whole, under a ``partial.json`` of the encoder, precision, batch size and texts hash) and a
build of the same texts goes on after the last whole part: its batches are the same, so are its
vectors (the precisions embed a text independently of its batch). ``partial/`` is removed once
the build is stored.

Search: :class:`DenseIndex` holds a FAISS ``IndexFlatIP`` (exact; at AILA's size an approximate
index is not faster and adds noise). A pre-filter is a set of allowed rows searched exactly by
the same FAISS scan restricted through ``SearchParameters(sel=IDSelectorBatch)``, so pre- and
post-filtering give the same hits with bit-identical scores. Hits are ordered by score, then id;
at the cut-off every row tied with the k-th score is fetched first, so which of several tied
rows make the top k depends on their ids only, never on FAISS's internal order. Scores are
cosines when the query is L2-normalised (:func:`countercase.index.encoders.embed` does that).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from countercase.index import encoders
from countercase.runtime.models import canonical_name

log = logging.getLogger(__name__)

EMBEDDINGS_FILE = "embeddings.npy"
IDS_FILE = "ids.json"
META_FILE = "meta.json"
PARTIAL_DIR = "partial"
STORAGE_FORMAT = 1
PART_TEXTS = 4096  # texts a saved part of an unfinished build holds, at least (whole batches)


def _sha256_of(strings: Sequence[str]) -> str:
    """SHA-256 of a list of strings, each length-prefixed (no two lists share a hash input)."""
    digest = hashlib.sha256()
    for text in strings:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def texts_sha256(texts: Sequence[str]) -> str:
    return _sha256_of(texts)


def read_meta(out_dir: Path) -> dict | None:
    path = Path(out_dir) / META_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _write_atomic(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _write_text(path: Path, text: str) -> None:
    _write_atomic(path, lambda tmp: tmp.write_text(text))


def stored_is_current(out_dir: Path, meta: dict | None, encoder: str, count: int,
                       digest: str, precision: str, max_seq_length: int | None = None,
                       int8_model: str | None = None) -> bool:
    if meta is None or meta.get("format") != STORAGE_FORMAT:
        return False
    if (meta.get("encoder"), meta.get("count"), meta.get("texts_sha256"),
            meta.get("precision", "float32"), meta.get("max_seq_length"),
            meta.get("int8_model")) != \
            (encoder, count, digest, precision, max_seq_length, int8_model):
        return False
    try:
        stored = np.load(out_dir / EMBEDDINGS_FILE, mmap_mode="r")
    except (OSError, ValueError):
        return False
    return stored.shape == (count, meta.get("dim")) and stored.dtype == np.float32


def build_embeddings(ids: Sequence[str], texts: Sequence[str], encoder_name: str,
                     out_dir: Path, batch_size: int = 32, *, encoder=None,
                     cache_dir: Path | None = None, show_progress: bool = True,
                     precision: str = "float32", max_seq_length: int | None = None,
                     int8_model: str | None = None) -> bool:
    """Embed ``texts`` into ``out_dir`` unless the stored embeddings are for the same texts.
    ``max_seq_length``: the word pieces the encoder reads of each text (None: its own limit);
    queries are then read with the same window (``meta.json``), and, in ``onnx-int8``, with the
    same ``int8_model`` (:func:`countercase.index.encoders.write_int8_model`).

    Returns True when it embedded, False when the stored embeddings were reused. ``encoder``
    (an already loaded model for ``encoder_name``) saves loading it again; it is loaded only
    when something has to be embedded.
    """
    ids, texts = list(ids), list(texts)
    if not ids:
        raise ValueError("nothing to embed: no ids")
    if len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids but {len(texts)} texts")
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    name = canonical_name(encoder_name)
    out_dir = Path(out_dir)
    digest = texts_sha256(texts)
    ids_digest = _sha256_of(ids)
    meta = read_meta(out_dir)
    if stored_is_current(out_dir, meta, name, len(texts), digest, precision, max_seq_length,
                          int8_model):
        if meta.get("ids_sha256") != ids_digest:
            log.info("same texts, new ids: rewriting %s only", out_dir / IDS_FILE)
            _write_text(out_dir / IDS_FILE, json.dumps(ids))
            _write_text(out_dir / META_FILE,
                        json.dumps({**meta, "ids_sha256": ids_digest}, indent=2))
        else:
            log.info("embeddings in %s are current (%s, %d texts): reused", out_dir, name,
                     len(texts))
        return False

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_FILE).unlink(missing_ok=True)  # whatever follows is not current until done
    if encoder is None:
        encoder = encoders.load_encoder(name, cache_dir, precision,
                                        max_seq_length=max_seq_length, int8_model=int8_model)
    partial = _Partial(out_dir / PARTIAL_DIR, {
        "encoder": name, "precision": precision, "batch_size": batch_size,
        "texts_sha256": digest, "count": len(texts), "max_seq_length": max_seq_length,
        "int8_model": int8_model})
    part = batch_size * max(1, PART_TEXTS // batch_size)
    matrix, done, earlier = partial.load()
    if done:
        log.info("going on after %d of %d texts embedded by an interrupted build", done,
                 len(texts))
    start = time.perf_counter()
    with tqdm(total=len(texts), initial=done, desc=f"embed {name}", unit="passage",
              disable=not show_progress) as bar:
        for begin in range(done, len(texts), batch_size):
            batch = encoders.embed(encoder, texts[begin:begin + batch_size],
                                   batch_size=batch_size, show_progress=False,
                                   precision=precision)
            if matrix is None:
                matrix = np.empty((len(texts), batch.shape[1]), dtype=np.float32)
            matrix[begin:begin + len(batch)] = batch
            bar.update(len(batch))
            end = begin + len(batch)
            if end % part == 0 and end < len(texts):
                partial.save(matrix[end - part:end], end,
                             earlier + time.perf_counter() - start)
    seconds = earlier + time.perf_counter() - start
    assert matrix is not None
    store_embeddings(out_dir, ids, texts, matrix, name, batch_size, precision, seconds,
                     max_seq_length, int8_model)
    partial.clear()
    log.info("embedded %d texts with %s in %.1f s", len(ids), name, seconds)
    return True


class _Partial:
    """The parts of an unfinished build (see the module docstring)."""

    def __init__(self, folder: Path, key: dict) -> None:
        self.folder, self.key = folder, key
        self.ends: list[int] = []

    def load(self) -> tuple[np.ndarray | None, int, float]:
        """(the matrix with the saved parts filled in, how many texts they hold, the seconds
        they took); (None, 0, 0.0) when there are none of this build. A part that cannot be
        read ends what is taken up: the build goes on from the part before it."""
        try:
            state = json.loads((self.folder / "partial.json").read_text(encoding="utf-8"))
            ends, seconds = [int(end) for end in state["ends"]], float(state["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            return None, 0, 0.0
        if state.get("key") != self.key:
            log.info("the parts in %s are of another build: embedding from the start",
                     self.folder)
            self.clear()
            return None, 0, 0.0
        matrix, begin = None, 0
        for end in ends:
            path = self.folder / f"upto-{end:08d}.npy"
            try:
                rows = np.load(path)
                if rows.ndim != 2 or len(rows) != end - begin:
                    raise ValueError(f"{rows.shape} rows for texts {begin}..{end}")
            except (OSError, ValueError) as error:
                log.warning("cannot read the saved part %s (%s): embedding again from text %d",
                            path, error, begin)
                break
            if matrix is None:
                matrix = np.empty((self.key["count"], rows.shape[1]), dtype=np.float32)
            matrix[begin:end] = rows
            self.ends.append(end)
            begin = end
        return matrix, begin, seconds * begin / ends[-1] if begin else 0.0

    def save(self, rows: np.ndarray, end: int, seconds: float) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

        def save_rows(tmp: Path) -> None:
            with tmp.open("wb") as handle:
                np.save(handle, rows)

        _write_atomic(self.folder / f"upto-{end:08d}.npy", save_rows)
        self.ends.append(end)
        _write_text(self.folder / "partial.json", json.dumps(
            {"key": self.key, "ends": self.ends, "seconds": round(seconds, 3)}))

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def store_embeddings(out_dir: Path, ids: Sequence[str], texts: Sequence[str], matrix: np.ndarray,
                     encoder_name: str, batch_size: int, precision: str,
                     seconds: float, max_seq_length: int | None = None,
                     int8_model: str | None = None) -> None:
    """Write the storage of the module docstring (``meta.json`` last, so that it marks a
    complete build); also the end of a distributed build (:mod:`countercase.scaleout`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_FILE).unlink(missing_ok=True)
    ids = list(ids)

    def save_matrix(tmp: Path) -> None:
        with tmp.open("wb") as handle:
            np.save(handle, matrix)

    _write_atomic(out_dir / EMBEDDINGS_FILE, save_matrix)
    _write_text(out_dir / IDS_FILE, json.dumps(ids))
    _write_text(out_dir / META_FILE, json.dumps({
        "format": STORAGE_FORMAT,
        "encoder": canonical_name(encoder_name),
        "dim": int(matrix.shape[1]),
        "count": len(ids),
        "texts_sha256": texts_sha256(texts),
        "ids_sha256": _sha256_of(ids),
        "dtype": "float32",
        "normalized": True,
        "batch_size": batch_size,
        "precision": precision,
        "max_seq_length": max_seq_length,
        **({"int8_model": int8_model} if int8_model else {}),
        "seconds": round(seconds, 3),
        "passages_per_second": round(len(ids) / seconds, 2) if seconds > 0 else None,
    }, indent=2))


class DenseIndex:
    """Exact inner-product search over stored embeddings (see the module docstring)."""

    def __init__(self, ids: Sequence[str], matrix: np.ndarray, threads: int = 1,
                 encoder: str | None = None) -> None:
        import faiss

        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids but embeddings of shape {matrix.shape}")
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        faiss.omp_set_num_threads(threads)  # process-wide FAISS setting
        self.ids: list[str] = list(ids)
        self.matrix = matrix
        self.encoder = encoder
        self._row = {doc_id: i for i, doc_id in enumerate(self.ids)}
        self._index = faiss.IndexFlatIP(matrix.shape[1])
        self._index.add(matrix)

    @classmethod
    def load(cls, out_dir: Path, threads: int = 1) -> "DenseIndex":
        out_dir = Path(out_dir)
        meta = read_meta(out_dir)
        if meta is None:
            raise FileNotFoundError(f"no readable {META_FILE} in {out_dir}: embeddings not built "
                                    "or the build was interrupted")
        ids = json.loads((out_dir / IDS_FILE).read_text())
        matrix = np.load(out_dir / EMBEDDINGS_FILE)
        if matrix.shape != (meta["count"], meta["dim"]) or len(ids) != meta["count"]:
            raise ValueError(f"{out_dir}: {len(ids)} ids and embeddings {matrix.shape} do not "
                             f"match meta.json (count {meta['count']}, dim {meta['dim']})")
        return cls(ids, matrix, threads=threads, encoder=meta.get("encoder"))

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def row_of(self, doc_id: str) -> int:
        try:
            return self._row[doc_id]
        except KeyError:
            raise KeyError(f"id {doc_id!r} is not in the dense index") from None

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        return np.array([self.row_of(i) for i in ids], dtype=np.int64)

    def rows_or_missing(self, ids: Sequence[str]) -> np.ndarray:
        """The rows of ``ids``, -1 for an id the index does not hold."""
        return np.array([self._row.get(i, -1) for i in ids], dtype=np.int64)

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored rows of ``ids``, in that order (a copy, float32, shape (len(ids), dim))."""
        return self.matrix[self.rows_of(ids)].reshape(len(ids), self.dim)

    def _allowed(self, allowed_rows: np.ndarray) -> np.ndarray:
        """``allowed_rows`` as a boolean mask over the rows."""
        rows = np.asarray(allowed_rows)
        if rows.dtype == bool:
            if rows.shape != (len(self.ids),):
                raise ValueError(f"a boolean row mask needs {len(self.ids)} entries, "
                                 f"got shape {rows.shape}")
            return rows
        if rows.size and not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"allowed_rows must be row numbers or a boolean mask, "
                             f"got dtype {rows.dtype}")
        rows = rows.astype(np.int64).ravel()
        if rows.size and (rows.min() < 0 or rows.max() >= len(self.ids)):
            raise ValueError(f"allowed_rows out of range 0..{len(self.ids) - 1}")
        mask = np.zeros(len(self.ids), dtype=bool)
        mask[rows] = True
        return mask

    def search(self, query_vec: np.ndarray, k: int,
               allowed_rows: np.ndarray | None = None) -> list[tuple[str, float]]:
        """The ``k`` best rows for one query vector: ``[(id, score)]``, score desc, then id.

        ``allowed_rows`` (row numbers, or a boolean mask over the rows) restricts the exact
        scan to those rows: the result equals the full search post-filtered to them.
        """
        import faiss

        query = np.ascontiguousarray(query_vec, dtype=np.float32).reshape(1, -1)
        if query.shape[1] != self.dim:
            raise ValueError(f"query has {query.shape[1]} dimensions, the index {self.dim}")
        if not np.all(np.isfinite(query)):
            raise ValueError("query vector has NaN or infinite values")
        params = None
        available = len(self.ids)
        if allowed_rows is not None:
            allowed = self._allowed(allowed_rows)
            available = int(allowed.sum())
            if available:  # a bitmap: building a hashed id set per query cost more than the scan
                bits = np.packbits(allowed, bitorder="little")
                params = faiss.SearchParameters(
                    sel=faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits)))
        k = min(int(k), available)
        if k <= 0:
            return []
        # Fetch past the cut until the last fetched score is below the k-th (or all rows are
        # fetched), so every row tied with the k-th is in hand before ties are broken by id.
        depth = min(k + 1, available)
        while True:
            scores, rows_found = self._index.search(query, depth, params=params)
            scores, rows_found = scores[0], rows_found[0]
            if depth >= available or scores[depth - 1] < scores[k - 1]:
                break
            depth = min(depth * 2, available)
        hits = [(self.ids[r], float(s)) for r, s in zip(rows_found, scores) if r >= 0]
        if any(math.isnan(s) for _, s in hits):
            raise ValueError("NaN scores: the stored embeddings are corrupt")
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

"""Dense index: stored, normalised embeddings searched exactly (inner product) with FAISS.

Embeddings are computed once per (encoder, texts) and stored; a later parameter change never
re-embeds. A pre-filter is a set of allowed rows searched exactly, so pre- and post-filtering
return the same ranking of the rows they share.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


def texts_hash(texts: list[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def build_embeddings(ids: list[str], texts: list[str], encoder_name: str, out_dir: Path,
                     batch_size: int = 32, encoder=None) -> bool:
    """Embed ``texts`` into ``out_dir``; returns False when the stored embeddings were reused."""
    from countercase.index.encoders import embed, load_encoder

    if len(ids) != len(texts) or len(set(ids)) != len(ids):
        raise ValueError("ids must be unique and as many as the texts")
    out_dir = Path(out_dir)
    meta_path = out_dir / "meta.json"
    wanted = {"encoder": encoder_name, "count": len(ids), "texts_sha256": texts_hash(texts)}
    if meta_path.exists() and (out_dir / "embeddings.npy").exists():
        stored = json.loads(meta_path.read_text())
        if all(stored.get(k) == v for k, v in wanted.items()):
            log.info("embeddings in %s are up to date: not re-embedding", out_dir)
            return False
    encoder = encoder or load_encoder(encoder_name)
    vectors = embed(encoder, texts, batch_size=batch_size)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.save(out_dir / "embeddings.npy", vectors)
    (out_dir / "ids.json").write_text(json.dumps(ids))
    meta_path.write_text(json.dumps({**wanted, "dim": int(vectors.shape[1])}, indent=2))
    return True


class DenseIndex:
    def __init__(self, ids: list[str], vectors: np.ndarray, threads: int = 1) -> None:
        import faiss

        faiss.omp_set_num_threads(threads)
        self.ids = ids
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._row = {doc_id: i for i, doc_id in enumerate(ids)}
        self._index = faiss.IndexFlatIP(self.vectors.shape[1])
        self._index.add(self.vectors)

    @classmethod
    def load(cls, directory: Path, threads: int = 1) -> "DenseIndex":
        directory = Path(directory)
        ids = json.loads((directory / "ids.json").read_text())
        return cls(ids, np.load(directory / "embeddings.npy"), threads)

    def row_of(self, doc_id: str) -> int:
        return self._row[doc_id]

    def vectors_of(self, ids: list[str]) -> np.ndarray:
        return self.vectors[[self._row[i] for i in ids]]

    def search(self, query: np.ndarray, k: int,
               allowed_rows: np.ndarray | None = None) -> list[tuple[str, float]]:
        import faiss

        query = np.asarray(query, dtype=np.float32).reshape(1, -1)
        params = None
        if allowed_rows is not None:
            # The same exact scan, restricted to the allowed rows inside FAISS.
            allowed_rows = np.asarray(allowed_rows, dtype=np.int64)
            if len(allowed_rows) == 0:
                return []
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed_rows))
        # One extra hit so that a tie at the cut is broken by id, not by FAISS's order.
        depth = min(k + 1, len(self.ids))
        scores, rows = self._index.search(query, depth, params=params)
        pairs = [(int(r), float(s)) for r, s in zip(rows[0], scores[0]) if r >= 0]
        pairs.sort(key=lambda pair: (-pair[1], self.ids[pair[0]]))
        return [(self.ids[r], s) for r, s in pairs[:k]]

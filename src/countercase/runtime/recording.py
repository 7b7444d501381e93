"""The local LLM's answers, recorded once and replayed: no stage waits on the model twice.

Every call of the local LLM (the fact sheets, the LLM check, the LLM reranker) goes through a
:class:`Recording`, one committed file a stage under ``recordings/llm/``:

- An entry is one JSON line: its ``key`` (the hash of the request and the decoding settings),
  ``kind`` (``chat``: a chat completion, ``p_yes``: the reranker's P(yes) from the logits), the
  ``request`` itself (so an entry can be asked again without the pipeline), ``prompt_sha256``,
  ``model_sha256`` (the GGUF file's), ``settings`` (the decoding settings) and ``answer``. A
  kind that reads log-probabilities keeps them in its answer.
- ``mode: replay`` (the default) answers from the recording; a request that is missing, or whose
  entry was made by another model file, is asked live and counted (a mismatch is never silently
  reused). ``mode: live`` (``--live``) asks every request again.
- Live answers go first to a plain journal beside the recording (``*.journal.jsonl``, one line
  an answer), so a killed run keeps what it asked and the next run goes on from there;
  :meth:`Recording.close` folds the journal into the compressed file, sorted by key with a
  fixed gzip header, so the same entries give the same bytes.
- The model is loaded only when something has to be asked: a replayed stage needs neither
  llama-cpp-python nor the model packages.

A corrupt file is a :class:`RecordingError` naming the file and the line.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from countercase.errors import CountercaseError
from countercase.runtime.digests import sha256_files
from countercase.runtime.jsonl import objects

log = logging.getLogger(__name__)

Mode = Literal["replay", "live"]
KINDS = ("chat", "p_yes")
FIELDS = ("key", "kind", "request", "prompt_sha256", "model_sha256", "settings", "answer")


class RecordingError(CountercaseError, ValueError):
    """A recording file that cannot be read; the message names the file and the line."""


def canonical(value: Any) -> str:
    """Compact JSON in the value's own key order: llama.cpp builds its grammar from a JSON
    schema's properties in their order, so an order is part of what was asked (sorted, the
    same request got other answers)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(kind: str, request: dict, settings: dict) -> str:
    """An entry's key: what was asked and how it was decoded (not which model answered)."""
    return sha256_text(canonical({"kind": kind, "request": request, "settings": settings}))


def model_sha256(path: Path) -> str:
    """The model file's SHA-256, kept beside it (``<file>.sha256``, with its size and mtime) so a
    1 GB file is hashed once per copy."""
    path = Path(path)
    stat = path.stat()
    stamp = f"{stat.st_size} {stat.st_mtime_ns}"
    sidecar = path.with_name(path.name + ".sha256")
    try:
        found_stamp, digest = sidecar.read_text(encoding="utf-8").split("\n")[:2]
        if found_stamp == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    digest = sha256_files(path)
    try:
        sidecar.write_text(f"{stamp}\n{digest}\n", encoding="utf-8")
    except OSError:  # a read-only model folder: hashed again next time
        pass
    return digest


def _entries(lines: Iterator[str], where: str) -> Iterator[dict]:
    number = 0

    def bad(line: int, why: str) -> RecordingError:
        return RecordingError(f"{where}, line {line}: {why}")

    try:
        for number, entry in objects(lines, bad):
            if missing := [f for f in FIELDS if f not in entry]:
                raise bad(number, f"an entry needs {', '.join(FIELDS)}; missing "
                          f"{', '.join(missing)}")
            if entry["kind"] not in KINDS:
                raise bad(number, f"unknown kind {entry['kind']!r} (one of {', '.join(KINDS)})")
            if entry["key"] != request_key(entry["kind"], entry["request"], entry["settings"]):
                raise bad(number, "its key is not the hash of its request and settings (edited "
                          "by hand?)")
            yield entry
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as error:
        raise RecordingError(f"{where}, after line {number}: cannot be read "
                             f"({error.__class__.__name__}: {error})") from None


def read_entries(path: Path) -> list[dict]:
    """The entries of a recording file (``.gz``) or journal (plain JSON lines), in file order."""
    path = Path(path)
    if not path.exists():
        return []
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return list(_entries(handle, str(path)))
    with path.open(encoding="utf-8") as handle:
        return list(_entries(handle, str(path)))


def write_entries(path: Path, entries: list[dict]) -> None:
    """``entries`` sorted by key into a gzip file whose bytes depend on them alone."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        for entry in sorted(entries, key=lambda e: e["key"]):
            gz.write((canonical({f: entry[f] for f in sorted(entry)}) + "\n").encode("utf-8"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(buffer.getvalue())
    os.replace(tmp, path)


@dataclass
class Counts:
    replayed: int = 0  # answered from the recording
    replayed_unchecked: int = 0  # of them, with no installed model to check their model hash
    asked_missing: int = 0  # not in the recording: asked live
    asked_model_changed: int = 0  # recorded by another model file: asked live
    asked_live_mode: int = 0  # asked again because the run is live

    @property
    def asked(self) -> int:
        return self.asked_missing + self.asked_model_changed + self.asked_live_mode

    def as_dict(self) -> dict[str, int]:
        return {**vars(self), "asked": self.asked}


@dataclass
class Recording:
    """The recorded answers of one stage (see the module docstring). ``model``: a callable
    giving the installed model file's path, called only when the model is needed (it raises
    :class:`countercase.factsheet.llm.LlmUnavailableError` when the model is not installed)."""

    path: Path
    model: Callable[[], Path]
    mode: Mode = "replay"
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        if self.mode not in ("replay", "live"):
            raise ValueError(f"mode must be replay or live, got {self.mode!r}")
        self.path = Path(self.path)
        self.journal = self.path.with_name(self.path.name.removesuffix(".jsonl.gz")
                                           + ".journal.jsonl")
        self.entries = {e["key"]: e for e in read_entries(self.path)}
        self.entries.update({e["key"]: e for e in read_entries(self.journal)})
        self._model_sha: str | None = None
        self._no_model = False

    @property
    def model_sha(self) -> str:
        if self._model_sha is None:
            self._model_sha = model_sha256(self.model())
        return self._model_sha

    def _installed_sha(self) -> str | None:
        """The installed model's hash, or None where the model is not installed (then a
        recorded entry is replayed on its own word, counted in ``replayed_unchecked``)."""
        if self._no_model:
            return None
        try:
            return self.model_sha
        except CountercaseError:
            self._no_model = True
            return None

    def answer(self, kind: str, request: dict, settings: dict,
               ask: Callable[[dict, dict], Any]) -> Any:
        """The answer to ``request`` under ``settings``: replayed, or ``ask(request,
        settings)`` and recorded."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        key = request_key(kind, request, settings)
        entry = self.entries.get(key)
        if entry is not None and self.mode == "replay":
            installed = self._installed_sha()
            if installed is None or entry["model_sha256"] == installed:
                self.counts.replayed += 1
                self.counts.replayed_unchecked += installed is None
                return entry["answer"]
            self.counts.asked_model_changed += 1
        elif entry is None:
            self.counts.asked_missing += 1
        else:
            self.counts.asked_live_mode += 1
        answer = ask(request, settings)
        entry = {"key": key, "kind": kind, "request": request,
                 "prompt_sha256": sha256_text(canonical(request)),
                 "model_sha256": self.model_sha, "settings": settings, "answer": answer}
        self.entries[key] = entry
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        with self.journal.open("a", encoding="utf-8") as handle:
            handle.write(canonical(entry) + "\n")
        return answer

    def close(self) -> None:
        """Fold the journal into the recording (nothing to do when nothing was asked)."""
        if not self.journal.exists():
            return
        write_entries(self.path, list(self.entries.values()))
        self.journal.unlink()
        log.info("%s: %d entries (%d asked this run)", self.path, len(self.entries),
                 self.counts.asked)

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""The preregistration's guard: the confirmatory stage runs only on a final preregistration
committed before the commit being run, whose case list is the one it names, and which has not
changed since its hash was recorded."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from countercase.config import ConfigError
from countercase.errors import CountercaseError
from countercase.runtime.digests import sha256_files


class PreregistrationError(CountercaseError):
    """A preregistration the confirmatory stage may not run on (the message says why)."""


@dataclass(frozen=True)
class Preregistration:
    path: Path
    sha256: str  # of the file as committed
    commit: str  # the last commit that changed it
    cases: Path
    cases_sha256: str


def front_matter(path: Path) -> dict:
    """The YAML block between the file's first two ``---`` lines, every value a string (a
    hash of digits stays a hash)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PreregistrationError(f"cannot read the preregistration {path}: {error}") from None
    parts = text.split("---\n", 2)
    if len(parts) < 3 or parts[0].strip():
        raise PreregistrationError(f"{path}: no front matter (a --- block at the top)")
    try:
        found = yaml.load(parts[1], Loader=yaml.BaseLoader)
    except yaml.YAMLError as error:
        raise PreregistrationError(f"{path}: its front matter is not YAML: {error}") from None
    if not isinstance(found, dict):
        raise PreregistrationError(f"{path}: its front matter is no mapping")
    return found


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              check=False)
    except OSError as error:
        raise PreregistrationError(f"git cannot run here ({error}): the preregistration's "
                                   "commit cannot be checked") from None


def verify(path: Path, root: Path = Path("."), recorded: str | None = None) -> Preregistration:
    """The preregistration at ``path`` (relative to the git checkout ``root``), checked:
    final, committed as it is, its commit an ancestor of HEAD, its case list's hash the one it
    names; ``recorded``: its hash as an earlier run recorded it, which it must still have."""
    meta = front_matter(root / path)
    if meta.get("status") != "final":
        raise PreregistrationError(f"{path} is a draft (status: {meta.get('status')!r}): the "
                                   "confirmatory run waits for a committed final version")
    now = sha256_files(root / path)
    if recorded is not None and recorded != now:
        raise PreregistrationError(f"{path} changed after its hash was recorded: recorded "
                                   f"{recorded}, now {now}")
    commit = _git(root, "log", "-1", "--format=%H", "--", str(path)).stdout.strip()
    if not commit:
        raise PreregistrationError(f"{path} is not committed (or {root} is no git checkout): "
                                   "commit it before the confirmatory run")
    if _git(root, "diff", "--quiet", "HEAD", "--", str(path)).returncode != 0:
        was = hashlib.sha256(_git(root, "show", f"HEAD:{path}").stdout.encode()).hexdigest()
        raise PreregistrationError(f"{path} differs from its committed version: committed "
                                   f"{was}, now {now}")
    if _git(root, "merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
        raise PreregistrationError(f"{path}'s commit {commit} is not an ancestor of HEAD")
    cases = Path(str(meta.get("cases_file", "")))
    if not str(cases) or not (root / cases).is_file():
        raise PreregistrationError(f"{path}: its cases_file {str(cases)!r} is not a file")
    named, found = str(meta.get("cases_sha256", "")), sha256_files(root / cases)
    if named != found:
        raise PreregistrationError(f"{cases} is not the case list {path} names: it names "
                                   f"{named}, the file's is {found}")
    return Preregistration(Path(path), now, commit, cases, found)


def read_settings(path: Path, kinds: dict[str, type]) -> dict[str, Any]:
    """The preregistration's ``settings`` (its front matter), each of its type in ``kinds``."""
    found = front_matter(path).get("settings")
    if not isinstance(found, dict):
        raise ConfigError(f"{path}: no mapping 'settings' in its front matter")
    out = {}
    for key, kind in kinds.items():
        try:
            out[key] = kind(found[key])
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{path}: settings.{key} missing or not {kind.__name__}") from None
    return out


def recorded_hash(root: Path, metrics: Path, key: str | None = None) -> str | None:
    """The preregistration's hash as the last committed ``metrics`` file recorded it (under
    ``key`` when the summary is one part of it); None: none recorded."""
    shown = subprocess.run(["git", "show", f"HEAD:{metrics}"], cwd=root, capture_output=True,
                           text=True, check=False)
    try:
        found = json.loads(shown.stdout)
        found = found.get(key, {}) if key else found
        return found.get("preregistration_sha256") if isinstance(found, dict) else None
    except (json.JSONDecodeError, AttributeError):
        return None


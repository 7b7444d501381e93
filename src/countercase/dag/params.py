"""The ``params.yaml`` keys a stage's run read, against the keys its registry entry declares.

Under DVC (``DVC_STAGE`` set) the command line notes every key the run reads by attribute
(:func:`countercase.config.record_reads`) and, when the stage succeeds, writes them to
``data/interim/params_read/<stage>.json``. ``python -m countercase.dag --params-read`` then names
each stage that read a key no declared dep covers (a section declared whole covers its keys). A
key read only in a second process (``runtime.processes``) or only through ``model_dump`` is not
seen, so the record can miss a key; it never invents one."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from countercase import layout
from countercase.config import CHOICES, SYSTEM_KEYS, record_reads

READ = layout.INTERIM / "params_read"


def begin() -> set[str] | None:
    """Note the keys this process reads, if it runs a DVC stage."""
    return record_reads() if os.environ.get("DVC_STAGE") else None


def write(keys: set[str] | None, folder: Path = READ) -> Path | None:
    """The keys a successful stage read, as ``<folder>/<DVC_STAGE>.json``."""
    stage = os.environ.get("DVC_STAGE")
    if keys is None or not stage:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    # an opt-in stage is named with its file ("experiments/dvc.yaml:validity_v2")
    path = folder / f"{stage.rsplit(':', 1)[-1]}.json"
    path.write_text(json.dumps(sorted(keys), indent=1) + "\n", encoding="utf-8")
    return path


def undeclared(declared: tuple[str, ...] | None, read: list[str]) -> list[str]:
    """The keys of ``read`` that no declared key or section covers. A key a choice file sets
    (``config.CHOICES``) is not in ``params.yaml``: its file is the dependency, which
    ``tests/test_choices.py`` checks; nor is a key the system searched sets
    (``config.SYSTEM_KEYS``), whose registry is the dependency."""
    covered = set(declared or ())
    chosen = {key for choice in CHOICES.values() for key in choice.keys} | set(SYSTEM_KEYS)
    return sorted(key for key in read if key not in chosen
                  and key not in covered and key.split(".")[0] not in covered)


def check(stages: Mapping, folder: Path = READ) -> dict[str, list[str]]:
    """Each recorded stage's undeclared keys, against ``stages`` (the registry by name, which
    the command line's recorder does not read: it starts every command); stages with none
    left out."""
    found = {}
    for path in sorted(Path(folder).glob("*.json")):
        stage = stages.get(path.stem)
        if stage is None:
            continue
        missing = undeclared(stage.params, json.loads(path.read_text(encoding="utf-8")))
        if missing:
            found[stage.name] = missing
    return found

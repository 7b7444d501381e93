"""The pipeline's stages, by name, read from ``stages.yaml`` beside this module. ``dvc.yaml`` and
``experiments/dvc.yaml`` are written from them (``python -m countercase.dag``); a test fails when
a committed file differs.

A stage is its ``countercase`` command with the options that differ from the command's defaults,
what it reads besides code (``deps``: data, gold labels, choices, recordings; a dep may say why
it is read), the ``params.yaml`` keys it depends on, and why it runs. What it writes is
:data:`countercase.layout.STAGE_OUTPUTS`; its code deps are the modules its command imports
(:mod:`countercase.dag.code`). A path is named as :mod:`countercase.layout` names it, so no
path is typed twice.

A stage with ``parts: N`` runs as N part stages (``NAME_part1`` ...) and then itself: part ``i``
runs its command with ``--part i/N`` and writes :func:`countercase.layout.part` of the stage's
data output; the stage runs with ``--parts N`` and joins them. Parts keep a stage that would run
past the 15 minutes of the standard within it, and an interrupted build loses one part at most.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from countercase import layout as L
from countercase.errors import CountercaseError

STAGES_FILE = Path(__file__).with_name("stages.yaml")
DEFAULT, OPT_IN = L.PIPELINE, L.OPT_IN_PIPELINE  # `make repro`, `make repro-extended`
PIPELINES = {"default": DEFAULT, "opt_in": OPT_IN}
Dep = Path | str | tuple[Path | str, str]  # a path, or a path and why it is read
# a layout constant, with a path below it: INDEX, GOLD/metadata_gold_a.jsonl
_NAMED = re.compile(r"^([A-Z][A-Z0-9_]*)(?:/(.+))?$")
_MADE = ("metrics", "timing", "recording")  # metrics:NAME, as layout.metrics(NAME) makes it


class StageFileError(CountercaseError, ValueError):
    """``stages.yaml`` names a layout path, group or key that does not exist."""


@dataclass(frozen=True)
class Stage:
    name: str
    pipeline: Path
    command: str  # the `countercase` command it runs
    args: Mapping[str, Path | str | bool] = field(default_factory=dict)  # all but its defaults
    why: str = ""
    deps: tuple[Dep, ...] = ()
    params: tuple[str, ...] | None = None
    persist: bool = False  # DVC keeps its cached outputs while it runs (stage `embed`)
    part: tuple[int, int] | None = None  # (i, N): part i of N of the stage `whole`
    whole: str = ""  # the stage a part belongs to (its own name otherwise)

    @property
    def outputs(self) -> dict[str, tuple[Path, ...]]:
        """What it writes: ``outs`` (cached data) and ``metrics`` (layout.STAGE_OUTPUTS; a part,
        its share of the stage's data folders only)."""
        written = L.STAGE_OUTPUTS[self.whole or self.name]
        if self.part is None:
            return written
        return {"outs": tuple(L.part(out, *self.part) for out in written["outs"]
                              if L.PROCESSED in out.parents), "metrics": ()}

    @property
    def cmd(self) -> str:
        """The command line: the command and the options whose values are not its defaults
        (a flag by its name)."""
        words = ["countercase", self.command]
        for option, value in self.args.items():
            words += [option] if value is True else [option, str(value)]
        return " ".join(words)


def path(text: str) -> Path | str:
    """A path as ``stages.yaml`` writes it: a layout name (``INDEX``, ``GOLD/x.jsonl``,
    ``metrics:NAME``, ``timing:NAME``, ``recording:NAME``) as its path, any other text as the
    literal path it is."""
    kind, _, name = text.partition(":")
    if name and kind in _MADE:
        return getattr(L, kind)(name)
    named = _NAMED.match(text)
    if not named:
        return text
    if not isinstance(getattr(L, named.group(1), None), Path):
        raise StageFileError(f"{STAGES_FILE.name}: countercase.layout has no path "
                             f"{named.group(1)} ({text})")
    value = getattr(L, named.group(1))
    return value / named.group(2) if named.group(2) else value


def deps(items: list, groups: Mapping[str, tuple[Dep, ...]], where: str) -> tuple[Dep, ...]:
    """A list of deps: a path, ``PATH: why``, or ``+GROUP`` (the group's deps in order)."""
    found: list[Dep] = []
    for item in items or ():
        if isinstance(item, dict):
            found += [(path(key), why) for key, why in item.items()]
        elif item.startswith("+"):
            if item[1:] not in groups:
                raise StageFileError(f"{STAGES_FILE.name}: {where} names no group {item}")
            found += groups[item[1:]]
        else:
            found.append(path(item))
    return tuple(found)


KEYS = {"pipeline", "command", "args", "why", "deps", "params", "persist", "parts"}


def in_parts(stage: Stage, parts: int) -> list[Stage]:
    """``stage`` as its ``parts`` part stages and the stage that joins them (itself when
    ``parts`` is 1)."""
    if parts == 1:
        return [stage]
    found = []
    # a part writes no report (metrics, summaries, timings): the stage joining it does
    reports = {out for kind in ("outs", "metrics") for out in stage.outputs[kind]
               if L.PROCESSED not in out.parents}
    for i in range(1, parts + 1):
        args = {o: v for o, v in stage.args.items() if v not in reports}
        found.append(replace(stage, name=f"{stage.name}_part{i}",
                             args={**args, "--part": f"{i}/{parts}"}, part=(i, parts),
                             why=f"part {i} of {parts} of stage {stage.name}", whole=stage.name))
    shares = tuple((out, f"part {i} of {parts}")
                   for i, share in enumerate(found, 1) for out in share.outputs["outs"])
    return found + [replace(stage, args={**stage.args, "--parts": str(parts)},
                            deps=stage.deps + shares)]


def read(source: Path = STAGES_FILE) -> tuple[Stage, ...]:
    """The stages of ``source``, in its order."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    groups: dict[str, tuple[Dep, ...]] = {}
    for name, items in data["groups"].items():
        groups[name] = deps(items, groups, f"group {name}")
    stages = []
    for name, entry in data["stages"].items():
        unknown = set(entry) - KEYS
        if unknown or entry.get("pipeline") not in PIPELINES:
            raise StageFileError(f"{source.name}: stage {name}: unknown keys {sorted(unknown)} "
                                 f"or pipeline {entry.get('pipeline')!r} not one of "
                                 f"{', '.join(PIPELINES)}")
        args = {option: value if value is True else path(str(value))
                for option, value in (entry.get("args") or {}).items()}
        params, parts = entry.get("params"), entry.get("parts", 1)
        if not isinstance(parts, int) or isinstance(parts, bool) or not 1 <= parts <= 16:
            raise StageFileError(f"{source.name}: stage {name}: parts {parts!r} is not a whole "
                                 "number from 1 to 16")
        stages += in_parts(Stage(name, PIPELINES[entry["pipeline"]], entry["command"], args,
                                 entry.get("why", ""),
                                 deps(entry.get("deps"), groups, f"stage {name}"),
                                 tuple(params) if params is not None else None,
                                 bool(entry.get("persist", False))), parts)
    return tuple(stages)


STAGES: tuple[Stage, ...] = read()
BY_NAME: dict[str, Stage] = {stage.name: stage for stage in STAGES}

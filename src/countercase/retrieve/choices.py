"""The chosen values a system of the registry names instead of a number.

A step's setting in ``configs/systems.yaml`` may be ``{choice: "tuning.precedents.docs.k1"}``:
the value at ``precedents.docs.k1`` of the choice file ``tuning`` (``config.CHOICES``), which its
stage wrote before any test query was scored. ``above: 0`` adds that the system only runs when
the value is above it (at 0 it would be the system it varies). Nothing is copied by hand: the
registry names the value, the stage's file holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from countercase.config import CHOICES, ConfigError

_REF_KEYS = {"choice", "above"}


class ChoiceError(ConfigError):
    """A chosen value that cannot be read: its file is missing (its stage has not run) or does
    not hold it; the message names the file and the stage."""


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and "choice" in value


def check_ref(value: Any, where: str) -> None:
    """Refuse a malformed reference (in the registry, ``where``) before anything runs."""
    if not is_ref(value):
        return
    unknown = sorted(set(value) - _REF_KEYS)
    name = str(value["choice"]).split(".")[0]
    if unknown or name not in CHOICES or "." not in str(value["choice"]):
        raise ConfigError(f"{where}: a chosen value is {{choice: FILE.KEY..., above: N}} with "
                          f"FILE one of {', '.join(CHOICES)}; got {value}")
    if "above" in value and not isinstance(value["above"], (int, float)):
        raise ConfigError(f"{where}: 'above' of {value['choice']} is no number")


def refs(value: Any) -> list[dict]:
    """Every reference in ``value`` (a setting, or a mapping of them)."""
    if is_ref(value):
        return [value]
    if isinstance(value, dict):
        return [ref for inner in value.values() for ref in refs(inner)]
    return []


def placeholder(value: Any) -> Any:
    """``value`` with every reference as 0.0: what a setting's type is checked with."""
    if is_ref(value):
        return 0.0
    if isinstance(value, dict):
        return {key: placeholder(inner) for key, inner in value.items()}
    return value


class Choices:
    """The choice files' values, read once each; ``files`` replaces a file's path (a command's
    option), ``values`` sets a value outright (``{"tuning_ft.weight": 0.5}``: the stage that is
    choosing it scores a candidate)."""

    def __init__(self, files: Mapping[str, Path | None] | None = None,
                 values: Mapping[str, Any] | None = None) -> None:
        self.files = {name: choice.path for name, choice in CHOICES.items()} | dict(files or {})
        self.values = dict(values or {})
        self._read: dict[str, dict] = {}

    def with_values(self, **values: Any) -> "Choices":
        """These choices with ``values`` (dotted keys, ``.`` as ``__``) set outright."""
        return Choices(self.files, {**self.values,
                                    **{k.replace("__", "."): v for k, v in values.items()}})

    def _file(self, name: str) -> dict:
        if name not in self._read:
            path, stage = self.files.get(name), CHOICES[name].stage
            if path is None or not Path(path).is_file():
                raise ChoiceError(f"no choice file {path} (stage {stage} has not run)")
            try:
                found = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
                raise ChoiceError(f"cannot read the choice file {path}: {error} (rerun stage "
                                  f"{stage})") from None
            if not isinstance(found, dict):
                raise ChoiceError(f"{path}: not a mapping (rerun stage {stage})")
            self._read[name] = found
        return self._read[name]

    def get(self, ref: dict) -> Any:
        """The value ``ref`` names."""
        key = str(ref["choice"])
        if key in self.values:
            return self.values[key]
        name, *path = key.split(".")
        found: Any = self._file(name)
        for part in path:
            if not isinstance(found, dict) or part not in found:
                raise ChoiceError(f"{self.files[name]} holds no {'.'.join(path)} (rerun stage "
                                  f"{CHOICES[name].stage})")
            found = found[part]
        return found

    def resolve(self, value: Any, strict: bool = True) -> Any:
        """``value`` with every reference replaced by the value it names (not ``strict``: a
        reference whose file is not written yet stays as it is)."""
        if is_ref(value):
            try:
                return self.get(value)
            except ChoiceError:
                if strict:
                    raise
                return value
        if isinstance(value, dict):
            return {key: self.resolve(inner, strict) for key, inner in value.items()}
        return value

    def why_not(self, value: Any) -> str | None:
        """Why a system whose settings are ``value`` cannot run on these choices (None: it
        can)."""
        for ref in refs(value):
            try:
                found = self.get(ref)
            except ChoiceError as error:
                return str(error)
            if "above" in ref and not (isinstance(found, (int, float))
                                       and found > ref["above"]):
                name = str(ref["choice"]).split(".")[0]
                return (f"{ref['choice']} is {found}, not above {ref['above']} ({self.files[name]}"
                        f", stage {CHOICES[name].stage})")
        return None

"""Where torch computes: ``params.yaml`` ``device``. ``auto`` puts encoding, training and
reranking on CUDA when torch sees a GPU and on the CPU otherwise; nothing needs a GPU.

Imports torch only when asked, and only for ``auto`` and ``cuda``.
"""

from __future__ import annotations

from typing import Literal

from countercase.errors import CountercaseError

Setting = Literal["auto", "cpu", "cuda"]
SETTINGS = ("auto", "cpu", "cuda")


class DeviceError(CountercaseError, ValueError):
    """A device that cannot be used here; the message says what to set instead."""


def resolve(setting: str = "auto") -> str:
    """``cpu`` or ``cuda`` for a ``device`` setting."""
    if setting not in SETTINGS:
        raise DeviceError(f"unknown device {setting!r}: use one of {', '.join(SETTINGS)}")
    if setting == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if setting == "cuda":
        raise DeviceError("device: cuda, but torch sees no GPU (a CPU build of torch, or no "
                          "driver): set device: auto or cpu in params.yaml")
    return "cpu"

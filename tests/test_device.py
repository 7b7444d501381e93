"""params.yaml device: auto uses a GPU only where torch sees one; cuda without one is a clear
error; an unknown setting is named."""

from __future__ import annotations

import pytest

from countercase.runtime.device import DeviceError, resolve


def test_auto_follows_what_torch_sees(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve("auto") == "cpu" and resolve("cpu") == "cpu"
    with pytest.raises(DeviceError, match="torch sees no GPU"):
        resolve("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve("auto") == "cuda" and resolve("cuda") == "cuda"
    assert resolve("cpu") == "cpu"  # cpu is never overridden


def test_an_unknown_device_is_named():
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve("tpu")


def test_the_encoder_lands_where_resolve_says(monkeypatch):
    from countercase.index.encoders import load_encoder
    from countercase.runtime.models import MINILM

    model = load_encoder(MINILM, device="cpu")
    assert str(model.device) == "cpu"

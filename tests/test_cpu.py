"""The bfloat16 check: a stage is told, once, before it runs emulated bfloat16 for hours."""

from __future__ import annotations

import logging

from countercase import cpu


def test_the_cpu_is_described_as_torch_sees_it():
    found = cpu.facts()
    assert found["capability"] in {"DEFAULT", "AVX2", "AVX512", "ZVECTOR", "NEON", "SVE256",
                                   "SVE"}, found
    assert isinstance(found["native_bf16"], bool) and found["model"]


def test_emulated_bfloat16_is_named_with_the_setting_to_change(monkeypatch, caplog):
    monkeypatch.setattr(cpu, "native_bf16", lambda: False)
    with caplog.at_level(logging.WARNING, logger="countercase.cpu"):
        assert cpu.check_bf16("train_ner", True, "ner.bf16")
    (record,) = caplog.records
    assert "train_ner" in record.getMessage() and "ner.bf16" in record.getMessage()
    caplog.clear()
    assert not cpu.check_bf16("train_ner", False, "ner.bf16")  # float32 asked: nothing to say
    monkeypatch.setattr(cpu, "native_bf16", lambda: True)
    assert not cpu.check_bf16("embed", True, "index.precision")
    assert not caplog.records


def test_a_benchmark_of_no_steps_is_refused_with_a_message(capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_:
        cpu.main(["--steps", "0"])
    assert exit_.value.code == 2
    assert "'0' is not a whole number of at least 1" in capsys.readouterr().err

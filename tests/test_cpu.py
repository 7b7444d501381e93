"""The CPU as the timing files describe it, and the precision benchmark's input checks."""

from __future__ import annotations

from countercase.runtime import cpu


def test_the_cpu_is_described_as_torch_sees_it():
    found = cpu.facts()
    assert found["capability"] in {"DEFAULT", "AVX2", "AVX512", "ZVECTOR", "NEON", "SVE256",
                                   "SVE"}, found
    assert isinstance(found["native_bf16"], bool) and found["model"]


def test_a_benchmark_of_no_steps_is_refused_with_a_message(capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_:
        cpu.main(["--steps", "0"])
    assert exit_.value.code == 2
    assert "'0' is not a whole number of at least 1" in capsys.readouterr().err

"""The legal vocabulary: canonical section ids and the closed vocabularies."""

from __future__ import annotations

import pytest

from countercase.legal.acts import ACTS, ACTS_BY_CODE, section_id
from countercase.legal.vocab import BENCH_TYPES, bench_type_for


def test_section_ids_are_canonical():
    assert section_id("IPC", " 498a ") == "IPC-498A"
    assert section_id("CrPC", "439") == "CrPC-439"
    assert section_id("Constitution", "21") == "Constitution-Article-21"


def test_an_unknown_act_is_refused():
    with pytest.raises(KeyError):
        section_id("XYZ", "1")


def test_acts_are_unique_and_their_periods_ordered():
    assert len(ACTS_BY_CODE) == len(ACTS)
    for act in ACTS:
        if act.effective_from and act.effective_to:
            assert act.effective_from < act.effective_to, act.code
    # the new criminal codes start the day after the old ones end
    assert (ACTS_BY_CODE["BNS"].effective_from - ACTS_BY_CODE["IPC"].effective_to).days == 1


@pytest.mark.parametrize("judges,bench", [(None, "Unknown"), (0, "Unknown"), (1, "Single"),
                                          (2, "Division"), (3, "Three-Judge"), (4, "Larger"),
                                          (5, "Constitution"), (7, "Constitution")])
def test_bench_types_by_judge_count(judges, bench):
    assert bench_type_for(judges) == bench
    assert bench in BENCH_TYPES

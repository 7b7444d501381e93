"""The statute bridge (statutes through the precedents citing them) and the leakage guard, on
the real AILA statutes, statute table, queries and judgments."""

from __future__ import annotations

import pytest

from countercase.datasets.leakage import overlapping_documents
from countercase.extract.statutes import statute_frame
from countercase.index.statute_map import map_statutes
from countercase.retrieve.statute_bridge import StatuteBridge, fuse_statute_rankings


@pytest.fixture(scope="module")
def mapping(raw_dir, aila_files):
    statutes = aila_files.statutes()
    table = statute_frame(raw_dir / "statutes")
    return map_statutes(((s["statute_id"], s["title"], s["text"]) for s in statutes), table)


def test_statutes_map_to_the_provisions_they_are(mapping):
    assert mapping["S1"] == ["Constitution-Article-226"]  # "Power of High Courts to issue ..."
    assert mapping["S2"] == ["IPC-302"]  # "Punishment for murder"
    assert {"IPC-307", "BNS-109"} <= set(mapping["S13"])  # "Attempt to murder": IPC and its BNS twin
    assert "Constitution-Article-13" in mapping["S61"]  # found by its text, no title match


def test_statutes_of_acts_outside_the_table_stay_unmapped(mapping):
    assert "S124" not in mapping  # "Penalty for demanding dowry" (Dowry Prohibition Act)
    assert "S67" not in mapping  # "Definitions": thirteen provisions share the title, none the text
    assert 100 < len(mapping) < 197


def test_bridge_scores_are_reciprocal_ranks_of_the_citing_precedents():
    bridge = StatuteBridge({"S1": ["IPC-302"], "S2": ["IPC-307", "BNS-109"], "S3": ["CrPC-313"]},
                           {"d1": frozenset({"IPC-302"}), "d2": frozenset({"BNS-109", "IPC-302"}),
                            "d3": frozenset({"CrPC-313"}), "d4": frozenset({"CrPC-313"})},
                           depth=3, rank_offset=1.0)
    ranked = dict(bridge.rank(["d1", "d2", "d3", "d4"]))
    assert ranked == pytest.approx({"S1": 1 / 2 + 1 / 3, "S2": 1 / 3, "S3": 1 / 4})  # d4: too deep
    without_d1 = dict(bridge.rank(["d1", "d2", "d3", "d4"], exclude=["d1"]))
    assert without_d1 == pytest.approx({"S1": 1 / 2, "S2": 1 / 2, "S3": 1 / 3 + 1 / 4})


def test_a_zero_weight_drops_a_ranking_from_the_fusion():
    fused = fuse_statute_rankings(["S1", "S2"], ["S3"], {"direct": 0.0, "precedents": 1.0}, 60)
    assert [s for s, _ in fused] == ["S3"]
    both = fuse_statute_rankings(["S1", "S2"], ["S2"], {"direct": 1.0, "precedents": 1.0}, 60)
    assert both[0][0] == "S2"


def test_the_leakage_guard_finds_the_corpus_copy_of_a_query(aila_files):
    queries = aila_files.queries()
    names = ["C297", "C113", "C1", "C2", "C168"]
    texts = aila_files.casedocs(names)
    docs = [(n, texts[n]) for n in names]
    found = overlapping_documents({q: queries[q] for q in ("AILA_Q1", "AILA_Q15", "AILA_Q21")},
                                  docs)
    assert set(found) == {"AILA_Q15", "AILA_Q21"}
    assert [d for d, _ in found["AILA_Q15"]] == ["C297"] and found["AILA_Q15"][0][1] >= 0.5
    assert [d for d, _ in found["AILA_Q21"]] == ["C113"]


def test_the_leakage_audit_keeps_out_what_each_bar_reaches(aila_files):
    from countercase.evaluate.leakage_audit import copy_queries, kept_out

    queries = aila_files.queries()
    names = ["C297", "C113", "C1", "C2", "C168"]
    texts = aila_files.casedocs(names)
    shares = overlapping_documents({q: queries[q] for q in ("AILA_Q1", "AILA_Q15", "AILA_Q21")},
                                   [(n, texts[n]) for n in names], threshold=0.01)
    top = {q: docs[0][1] for q, docs in shares.items()}
    assert kept_out(shares, 0.5) == {"AILA_Q15": ["C297"], "AILA_Q21": ["C113"]}
    assert copy_queries(shares) == ["AILA_Q15", "AILA_Q21"]
    assert kept_out(shares, max(top.values()) + 0.01) == {}  # a bar above every share
    lowest = min(share for docs in shares.values() for _, share in docs)
    assert sum(map(len, kept_out(shares, lowest).values())) == sum(map(len, shares.values()))

"""Matched placebos (docs/preregistration/validity_v2.md, section 4) on real judgment text and
the small real index: each operation's candidates, the IDF mass by hand, the closest match
within the tolerance, and the number moves by the thresholds."""

from __future__ import annotations

import math

import pytest

from countercase.confirm.matching import (Candidate, Mass, closest, number_move,
                                          party_candidates, removal_candidate,
                                          section_candidates)

TEXT = ("The appellant was convicted under Section 302 IPC by the Sessions Judge. The "
        "deceased had made a dying declaration before the Magistrate. The appellant appealed "
        "and the High Court upheld the conviction under Section 302 IPC on 12 March 1999. The "
        "complainant, a farmer of the village, said the appellant came with a lathi at night.")


@pytest.fixture(scope="module")
def mass(indexed_corpus):
    from countercase.index.bm25 import Bm25Searcher

    paths, _, _ = indexed_corpus
    searcher = Bm25Searcher(paths.index_dir / "precedents_chunks")
    yield Mass(searcher.analyze, searcher.idf)
    searcher.close()


def test_the_mass_of_an_edit_by_hand(mass):
    after = TEXT.replace("dying declaration", "statement")
    idf = mass.idf(["dy", "declar", "statement"])
    assert idf["dy"] == max(idf.values()) or idf["dy"] > 0  # every idf is positive
    expected = sum(idf[t] for t in mass.analyze("dying declaration statement"))
    assert mass.of(TEXT, after) == pytest.approx(expected)
    assert mass.of(TEXT, TEXT) == 0.0


def test_section_candidates_keep_the_number_or_renumber(indexed_corpus):
    found = section_candidates(TEXT, "IPC-302", "BNS-103")
    texts = [c.text for c in found]
    assert texts[0].count("103 BNS") == 2 and "302" not in texts[0]  # both mentions renumbered
    assert all(t.count("302") == 2 for t in texts[1:]) and len(texts) == 1 + 6 + 4
    # each mention restated whole ("under" kept, the code named after the number replaced too)
    for candidate in found[1:7]:
        words = candidate.description.split(" restated as ")[1].strip("'")
        assert candidate.text.count(f"under {words} ") == 2, candidate.text
        assert "Section 302 IPC" not in candidate.text
    for candidate in found[7:]:  # the keyword alone: the code after the number stays
        words = candidate.description.split(" restated as ")[1].strip("'")
        assert candidate.text.count(f"under {words} IPC") == 2, candidate.text
    assert section_candidates(TEXT, "IPC-304", "BNS-105") == []  # never mentioned


def test_party_candidates_rewrite_as_many_mentions():
    once = party_candidates(TEXT, 1)
    assert {c.description.split("'")[1] for c in once} == {"appellant", "deceased",
                                                             "complainant"}
    thrice = party_candidates(TEXT, 3)
    assert len(thrice) == 1 and thrice[0].text.count("petitioner") == 3
    assert party_candidates(TEXT, 4) == []


def test_the_removal_touches_no_legal_fact_and_comes_closest(mass):
    removed = [(TEXT.index("The deceased"), TEXT.index("Magistrate.") + len("Magistrate."))]
    target = mass.of(TEXT, TEXT[:removed[0][0]] + TEXT[removed[0][1]:])
    found = removal_candidate(mass, TEXT, removed, target, max_words=12)
    gone = TEXT.replace(found.text, "") if found.text in TEXT else None
    assert found is not None and gone is None
    for kept in ("Section 302 IPC", "dying declaration", "appellant", "deceased"):
        assert found.text.count(kept) == TEXT.count(kept)
    match = closest(mass, TEXT, target, [found], tolerance=1.0)
    assert match is not None and match[0] == found
    assert closest(mass, TEXT, target, [Candidate("none", TEXT)], tolerance=0.25) is None


@pytest.mark.parametrize("kind, old, new, expected", [
    ("ages", 17, 18, 16),  # across 18: mirrored, 16 is inside the band
    # 21 is a boundary too: the mirror crosses it; inside [18, 21) one year each way, up on a tie
    ("ages", 19, 17, 20),
])
def test_a_number_moves_the_other_way_within_its_band(kind, old, new, expected):
    from countercase.factsheet.thresholds import load_thresholds

    assert {18, 21} <= {t.value for t in load_thresholds()["ages"]}
    assert number_move(kind, old, new) == expected


def test_a_number_whose_mirror_crosses_moves_as_far_as_its_band_allows():
    from countercase.factsheet.thresholds import crosses, load_thresholds

    bounds = [t.value for t in load_thresholds()["ages"]]
    # just above a boundary, moved far across the next one up: the mirror crosses the one below
    low = min(b for b in bounds if b > 1)
    moved = number_move("ages", low, low + 30)
    assert moved is not None and not any(crosses(low, moved, b) for b in bounds)
    assert not math.isclose(moved, low)

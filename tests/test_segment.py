"""Section segmentation on real AILA judgments (data/raw/aila2019/Object_casedocs.tar.gz)."""

from __future__ import annotations

import re

import pytest

from countercase.extract.segment import (
    BASELINE,
    FINAL,
    PLAN,
    SECTION_TYPES,
    Segment,
    facts_text,
    section_at,
    section_of_span,
    segment,
)

@pytest.fixture(scope="module")
def aila(aila_files) -> dict[str, str]:
    """AILA judgments by id ("C17"), read from the project's own copy of the archive."""
    return aila_files.casedocs()


def check_cover(text: str, segments: list[Segment]) -> None:
    assert segments, "a non-empty text has segments"
    assert segments[0].start == 0 and segments[-1].end == len(text)
    for a, b in zip(segments, segments[1:]):
        assert a.end == b.start, "contiguous"
        assert a.section_type != b.section_type, "adjacent segments of one type are merged"
    for s in segments:
        assert s.start < s.end
        assert s.section_type in SECTION_TYPES


def test_all_aila_judgments_segment_and_cover_their_text(aila: dict[str, str]) -> None:
    assert len(aila) == 2914
    results = {doc_id: segment(text) for doc_id, text in aila.items()}
    for doc_id, segments in results.items():
        check_cover(aila[doc_id], segments)
    # every AILA judgment opens with its header (title, court, date, case number) as Unknown
    with_header = sum(1 for s in results.values() if s[0].section_type == "Unknown")
    assert with_header == len(aila)
    # and nearly all of them say how they were disposed of in their last lines
    with_held = sum(1 for s in results.values() if any(x.section_type == "Held" for x in s))
    assert with_held / len(aila) > 0.95


def test_headings_give_facts_before_submissions(aila: dict[str, str]) -> None:
    # C17 has the headings INTRODUCTION, BACKGROUND FACTS, Submissions, Analysis, Conclusions
    text = aila["C17"]
    for heading in ("BACKGROUND FACTS:", "Submissions:", "Analysis:", "Conclusions:"):
        assert re.search(rf"^{heading}$", text, re.M), heading
    segments = segment(text)
    check_cover(text, segments)
    types = [s.section_type for s in segments]
    assert types[0] == "Unknown"  # the header
    assert types[1] == "Facts"
    assert types.index("Facts") < types.index("Submissions") < types.index("Ratio")
    submissions = next(s for s in segments if s.section_type == "Submissions")
    assert text[submissions.start:].startswith("Submissions:")
    analysis = next(s for s in segments if s.start > submissions.start and s.section_type == "Ratio")
    assert text[analysis.start:].startswith("Analysis:")
    assert types[-1] == "Held"
    assert "These appeals are disposed of accordingly" in text[segments[-1].start:]
    facts = facts_text(text, segments)
    assert facts.startswith("INTRODUCTION:")
    assert "BACKGROUND FACTS:" in facts and "Submissions:" not in facts


def test_capital_headings_end_a_headed_section(aila: dict[str, str]) -> None:
    # C1387: "SUBMISSIONS :" and then the topic "RES JUDICATA :" where the court's discussion starts
    text = aila["C1387"]
    segments = segment(text)
    sub = next(s for s in segments if s.section_type == "Submissions")
    assert text[sub.start:].startswith("SUBMISSIONS :")
    assert text[sub.end:].startswith("RES JUDICATA :")
    assert section_at(segments, sub.end) == "Ratio"


def test_fallback_on_a_judgment_without_headings(aila: dict[str, str]) -> None:
    # C1011 has numbered paragraphs only, and no cue that ends its facts early
    text = aila["C1011"]
    assert not re.search(r"^[A-Z][A-Z ]{3,}:?\s*$", text, re.M)
    # the plan's fallback alone: the first 20 % are Facts, the rest Unknown
    plan = segment(text, PLAN)
    assert [s.section_type for s in plan] == ["Facts", "Unknown"]
    cut = plan[0].end
    assert 0.2 * len(text) <= cut < 0.2 * len(text) + 200  # moved on to the next sentence start
    assert re.match(r"[A-Z0-9\"(]", text[cut])
    assert segment(text, BASELINE) == plan  # no headings: the plan is the baseline
    # the final rules: header, then Facts up to the same 20 % of the body, then reasoning, then the order
    final = segment(text)
    assert [s.section_type for s in final] == ["Unknown", "Facts", "Ratio", "Held"]
    body_start = final[0].end
    assert text[body_start:].startswith("1.  This appeal is preferred")
    share = (final[1].end - body_start) / (len(text) - body_start)
    assert 0.2 <= share < 0.25
    assert text[final[3].start:].startswith("10.   In the result")
    assert facts_text(text) == text[final[1].start:final[1].end].strip()


def test_facts_fraction_parameter(aila: dict[str, str]) -> None:
    text = aila["C1011"]
    wide = segment(text, PLAN, facts_fraction=0.5)
    assert 0.5 * len(text) <= wide[0].end < 0.5 * len(text) + 400
    with pytest.raises(ValueError):
        segment(text, facts_fraction=0)


def test_cues_without_headings(aila: dict[str, str]) -> None:
    # C36 has no headings: "3.  In support of the appeal learned counsel for the appellant-State
    # submitted ..." opens the arguments, "5.  The evidence of PW5 ..." the court's own reading
    text = aila["C36"]
    assert not re.search(r"^[A-Z][A-Z ]{3,}:?\s*$", text, re.M)
    segments = segment(text)
    check_cover(text, segments)
    assert [s.section_type for s in segments] == ["Unknown", "Facts", "Submissions", "Ratio", "Held"]
    assert text[segments[1].start:].startswith("Leave granted.\n1.  Challenge in this appeal")
    assert text[segments[2].start:].startswith("3.  In support of the appeal learned counsel for the appellant")
    assert text[segments[3].start:].startswith("5.  The evidence of PW5")
    # an issue stated in a numbered paragraph, in C1661: "13. The short question which arises ..."
    text = aila["C1661"]
    issues = [s for s in segment(text) if s.section_type == "Issues"]
    assert any("The short question which arises for consideration" in text[s.start:s.end] for s in issues)


def test_section_at_and_section_of_span() -> None:
    segments = [Segment("Unknown", 0, 10), Segment("Facts", 10, 50), Segment("Ratio", 50, 100)]
    assert section_at(segments, 0) == "Unknown"
    assert section_at(segments, 10) == "Facts"
    assert section_at(segments, 49) == "Facts"
    assert section_at(segments, 50) == "Ratio"
    assert section_at(segments, 100) == "Unknown"
    assert section_at(segments, -1) == "Unknown"
    assert section_at([], 5) == "Unknown"
    assert section_of_span(segments, 5, 60) == "Facts"  # 40 characters of Facts, 10 of Ratio
    assert section_of_span(segments, 40, 95) == "Ratio"
    assert section_of_span(segments, 30, 70) == "Facts"  # a 20/20 tie goes to the earlier type
    assert section_of_span(segments, 60, 60) == "Ratio"


def test_empty_and_blank_text() -> None:
    assert segment("") == []
    assert facts_text("") == ""
    blank = "   \n\n  "
    check_cover(blank, segment(blank))


def test_final_rules_are_the_default(aila: dict[str, str]) -> None:
    text = aila["C2386"]
    assert segment(text) == segment(text, FINAL)

"""The fact channel on real judgments: tokens, a real Lucene index of forty AILA fact sheets,
leave-one-out searches, and the fusion that makes a changed fact change what is retrieved."""

from __future__ import annotations

import math

import pytest

from countercase.extract.metadata import extract_metadata
from countercase.extract.segment import segment
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.thresholds import ThresholdError, in_days, sides
from countercase.index.facts import FactSearcher, build_fact_index, fact_tokens
from countercase.ingest.text import text_document
from countercase.perturb.rules import apply, candidates, load_thresholds
from countercase.retrieve.fusion import fuse_with_facts

DOCS = [f"C{i}" for i in range(1, 41)]


@pytest.fixture(scope="module")
def sheets(aila_files):
    texts = aila_files.casedocs(DOCS)
    out = {}
    for d in DOCS:  # as the factsheets stage reads them: the parties' names from the metadata
        meta = extract_metadata(text_document(d, texts[d].encode(), d))
        out[d] = extract_rules(texts[d], d, "judgment", segment(texts[d]), meta.petitioner,
                               meta.respondent)
    return out


@pytest.fixture(scope="module")
def searcher(sheets, tmp_path_factory):
    out = tmp_path_factory.mktemp("facts") / "fact_index"
    years = {d: 1950 + i for i, d in enumerate(DOCS)}
    stats = build_fact_index(sheets.values(), years, {"IPC-302": "16", "IPC-304": "16"}, out)
    assert stats["judgments"] == len(DOCS)
    found = FactSearcher(out)
    yield found
    found.close()


def test_tokens_state_sections_parties_evidence_and_threshold_sides(sheets):
    sheet = next(s for s in sheets.values() if s.sections_cited and s.evidence_items)
    tokens = fact_tokens(sheet, {sheet.sections_cited[0].section_id: "9"})
    first = sheet.sections_cited[0].section_id
    act = first.split("-")[0].lower()
    assert f"fsec{first.lower().replace('-', '')}" in tokens and f"fact{act}" in tokens
    assert f"fchap{act}9" in tokens
    assert f"fev{sheet.evidence_items[0].evidence_type.lower()}" in tokens
    assert all(t.isalnum() and t == t.lower() for t in tokens)


def test_every_number_is_its_side_of_every_boundary():
    thresholds = load_thresholds()
    for kind, prefix in (("ages", "fage"), ("amounts", "famt"), ("durations", "fdur")):
        assert len(sides(kind, 17.0)) == len(thresholds[kind])
    assert dict((t.value, above) for t, above in sides("ages", 17.0))[18] is False
    assert dict((t.value, above) for t, above in sides("ages", 18.0))[18] is True
    assert in_days(2, "months") == 60


@pytest.mark.parametrize("bad", [math.nan, math.inf, "17", True])
def test_a_number_that_cannot_be_placed_is_an_error_naming_it(bad):
    with pytest.raises(ThresholdError, match="ages"):
        sides("ages", bad)


def test_an_unknown_threshold_kind_is_an_error(tmp_path):
    path = tmp_path / "thresholds.yaml"
    path.write_text("weights:\n  - {value: 1, meaning: m, source: s}\n")
    with pytest.raises(ThresholdError, match="weights"):
        load_thresholds(path)
    with pytest.raises(ThresholdError, match="unit"):
        in_days(3, "fortnights")


def test_a_sheet_finds_itself_first_and_leave_one_out_excludes_it(sheets, searcher):
    sheet = next(s for s in sheets.values() if len(searcher.tokens(s)) >= 6)
    assert searcher.search(sheet, 5)[0][0] == sheet.case_id
    year = 1950 + DOCS.index(sheet.case_id)
    found = searcher.search(sheet, 40, exclude={sheet.case_id}, year_to=year)
    assert sheet.case_id not in {d for d, _ in found}
    assert all(1950 + DOCS.index(d) <= year for d, _ in found)


def test_a_changed_fact_changes_the_fact_ranking(sheets, searcher):
    """Every rule perturbation of a section, a party type or an evidence item changes the
    query's tokens, and at least one of each changes the ranking itself."""
    changed = {}
    for sheet in sheets.values():
        before = [d for d, _ in searcher.search(sheet, 10)]
        for p in candidates(sheet, _no_edges()):
            if p.fact_type == "numerical" and "scaling" in p.basis:
                continue  # a doubled duration may stay on every side of every boundary
            after_sheet = apply(sheet, p)
            assert searcher.tokens(after_sheet) != searcher.tokens(sheet), p.description
            after = [d for d, _ in searcher.search(after_sheet, 10)]
            changed[p.fact_type] = changed.get(p.fact_type, False) or after != before
    assert changed.get("party") and changed.get("evidence")


def test_fusion_keeps_the_text_order_at_weight_zero_and_admits_facts_above():
    text, facts = ["a", "b", "c"], ["c", "d"]
    assert [d for d, _ in fuse_with_facts(text, facts, 0.0)][:3] == text
    fused = [d for d, _ in fuse_with_facts(text, facts, 1.0)]
    assert fused[0] == "c" and "d" in fused


def _no_edges():
    import pandas as pd

    return pd.DataFrame(columns=["source", "target", "kind", "weight", "evidence"])

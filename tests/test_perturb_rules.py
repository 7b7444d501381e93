"""Perturbation rules on fact sheets read from real judgments: every change legal and scoped."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from countercase.extract.metadata import extract_metadata
from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.thresholds import ThresholdError, applies, in_days
from countercase.ingest.text import text_document
from countercase.legal.adjacency import build_adjacency
from countercase.perturb.legal_tables import LegalTableError, load_enacted, load_swaps, load_tables
from countercase.perturb.rules import (Perturbation, PerturbationError, apply, candidates,
                                       case_categories, check, crosses, latest_year,
                                       load_thresholds)

NAMES = [f"C{i}" for i in range(1, 81)] + ["C1268"]


@pytest.fixture(scope="module")
def sheets(aila_files):
    texts = aila_files.casedocs(NAMES)
    docs = [text_document(n, texts[n].encode(), n) for n in NAMES]
    out = {}
    for doc in docs:
        meta = extract_metadata(doc)
        out[doc.doc_id] = (extract_rules(doc.text, doc.doc_id, "judgment", None, meta.petitioner,
                                         meta.respondent), meta.act_sections)
    return out


@pytest.fixture(scope="module")
def edges(raw_dir, sheets):
    crossrefs = pd.DataFrame(build_constitution_crossrefs(raw_dir / "statutes"))
    return build_adjacency(statute_frame(raw_dir / "statutes"), crossrefs,
                           [sections for _, sections in sheets.values()], min_count=2)


def _all(sheets, edges) -> list[tuple]:
    return [(sheet, p) for sheet, _ in sheets.values() for p in candidates(sheet, edges)]


def test_real_sheets_give_every_fact_type(sheets, edges):
    kinds = {p.fact_type for _, p in _all(sheets, edges)}
    assert kinds == {"numerical", "section", "party", "evidence"}


def test_every_candidate_passes_its_rule_check(sheets, edges):
    for _, p in _all(sheets, edges):
        check(p, edges)


def test_numbers_cross_only_boundaries_in_the_scope_of_their_case_and_role(sheets, edges):
    thresholds = load_thresholds()
    found = 0
    for sheet, p in _all(sheets, edges):
        if p.rule != "threshold":
            continue
        kind = p.path.split(".")[1]
        number = getattr(sheet.numerical_facts, kind)[int(p.path.split(".")[2])]
        old, new = (p.old, p.new) if kind != "durations" else (in_days(*p.old), in_days(*p.new))
        crossed = [t for t in thresholds[kind] if crosses(old, new, t.value)
                   and applies(t, case_categories(sheet), number.role)]
        assert crossed and p.basis in {t.source for t in crossed}, p
        assert number.role != "unknown"  # no boundary is scoped to any role
        found += 1
    assert found, "no judgment among the fixtures has a number in a boundary's scope"


def test_sections_move_only_along_the_swap_table_and_murder_reaches_culpable_homicide(sheets,
                                                                                       edges):
    tables = load_tables()
    sheet, _ = sheets["C1268"]
    moves = {p.new for p in candidates(sheet, edges) if p.fact_type == "section"
             and p.old == "IPC-302"}
    assert "IPC-304" in moves and moves <= {s.target for s in tables.swaps["IPC-302"]}
    for _, p in _all(sheets, edges):
        if p.fact_type == "section":
            assert p.new not in tables.repealed and not p.new.startswith(("BNS-", "BNSS-")), p
    invented = Perturbation("section", "sections_cited.0", "IPC-302", "MVA-166", "x", "x")
    with pytest.raises(PerturbationError, match="operative alternative"):
        check(invented, edges)
    repealed = Perturbation("section", "sections_cited.0", "IPC-302", "IPC-303", "x", "x")
    with pytest.raises(PerturbationError, match="repealed"):
        check(repealed, edges)


def test_party_swaps_stay_on_an_axis_that_applies_to_the_case(sheets, edges):
    axes = load_tables().party_axes
    swaps = [(sheet, p) for sheet, p in _all(sheets, edges) if p.fact_type == "party"]
    assert swaps
    for sheet, p in swaps:
        axis = next(a for a in axes if a.types == frozenset({p.old, p.new}))
        assert axis.categories & case_categories(sheet), p
    with pytest.raises(PerturbationError, match="axis"):
        check(Perturbation("party", "parties.petitioner", "State", "Minor", "x", "x"), edges)


def test_evidence_toggles_only_what_the_case_is_proved_by(sheets, edges):
    for sheet, p in _all(sheets, edges):
        if p.fact_type == "evidence":
            assert "FIR" not in (p.old, p.new) and "Circumstantial" not in (p.old, p.new), p
            assert p.scope and p.basis, p


def test_a_victims_age_crosses_only_the_boundaries_of_the_offence_the_case_states():
    murder = ("The appellant was convicted under Section 302 IPC for the murder of Pankaj, a "
              "child aged 4 years, whose body was found near the river.")
    sheet = extract_rules(murder, "X", "query")
    (age,) = sheet.numerical_facts.ages
    assert age.role == "victim" and "criminal" in sheet.categories
    # neither the accused's age of criminal responsibility nor the ages of the sexual offences
    assert not [p for p in candidates(sheet, text=murder) if ".ages." in p.path]
    rape = ("The appellant was convicted under Section 376 IPC for the rape of the prosecutrix, "
            "a girl aged 15 years, on the night of the occurrence.")
    described = [p.description for p in candidates(extract_rules(rape, "X", "query"), text=rape)
                 if ".ages." in p.path]
    assert any("across 16" in d for d in described), described


def test_a_boundary_without_a_scope_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "thresholds.yaml"
    path.write_text("ages:\n  - value: 18\n    meaning: majority\n    source: x\n"
                    "    scope: {categories: [criminal], roles: [accused]}\n"
                    "  - value: 21\n    meaning: bridegroom\n    source: y\n")
    with pytest.raises(ThresholdError, match=r"thresholds.yaml:6: .*no scope"):
        load_thresholds(path)


def test_a_swap_to_a_repealed_provision_or_without_a_source_is_an_error(tmp_path):
    path = tmp_path / "swaps.yaml"
    path.write_text("repealed:\n  - section: IPC-303\n    why: struck down\n    source: x\n"
                    "swaps:\n  - between: [IPC-302, IPC-303]\n    reason: r\n    source: s\n")
    with pytest.raises(LegalTableError, match=r"swaps.yaml:6: IPC-303 is repealed"):
        load_swaps(path)
    path.write_text("swaps:\n  - between: [IPC-302, IPC-304]\n    reason: r\n")
    with pytest.raises(LegalTableError, match=r"swaps.yaml:2: .*without source"):
        load_swaps(path)
    path.write_text("enacted:\n  - {section: IPC-304B, year: 'late', source: s}\n")
    with pytest.raises(LegalTableError, match=r"swaps.yaml:2: year 'late' is not a year"):
        load_enacted(path)


def test_a_swap_needs_what_its_target_decides_and_not_a_case_it_excludes(tmp_path):
    path = tmp_path / "swaps.yaml"
    path.write_text("swaps:\n  - between: [IPC-363, IPC-364]\n    words:\n"
                    "      IPC-364: murder\n      IPC-363: minor\n"
                    "    unless: [IPC-302]\n    reason: r\n    source: s\n")
    swaps, _ = load_swaps(path)
    (into_364,), (into_363,) = swaps["IPC-363"], swaps["IPC-364"]
    assert into_364.words.search("the murder of") and not into_364.words.search("a minor")
    assert into_363.words.search("a minor girl") and into_364.unless == {"IPC-302"}
    path.write_text("swaps:\n  - between: [IPC-363, IPC-364]\n    words:\n"
                    "      IPC-302: murder\n    reason: r\n    source: s\n")
    with pytest.raises(LegalTableError, match=r"swaps.yaml:2: words name \['IPC-302'\]"):
        load_swaps(path)


def test_an_attempt_is_not_swapped_once_the_victim_died_nor_a_judgment_into_a_writ():
    text = ("The accused was charged under Section 307 IPC and, the injured having died, under "
            "Section 302 IPC. The appeal under Article 136 of the Constitution is by special "
            "leave against the judgment of the High Court.")
    sheet = extract_rules(text, "X", "query")
    cited = {s.section_id for s in sheet.sections_cited}
    assert {"IPC-302", "IPC-307", "Constitution-Article-136"} <= cited
    moved = {(p.old, p.new) for p in candidates(sheet, text=text) if p.fact_type == "section"}
    assert not {old for old, _ in moved} & {"IPC-307", "Constitution-Article-136"}, moved
    assert ("IPC-302", "IPC-304") in moved


def test_a_boundary_whose_words_are_no_pattern_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "thresholds.yaml"
    path.write_text("ages:\n  - value: 16\n    meaning: m\n    source: x\n"
                    "    scope: {categories: [criminal], roles: [victim], words: 'rape(d'}\n")
    with pytest.raises(ThresholdError, match=r"thresholds.yaml:2: words .* not a regular"):
        load_thresholds(path)


@pytest.mark.parametrize("value", [".nan", ".inf", "eighteen", "true"])
def test_a_boundary_whose_value_is_no_finite_number_is_an_error_naming_its_line(tmp_path, value):
    path = tmp_path / "thresholds.yaml"
    path.write_text(f"ages:\n  - value: {value}\n    meaning: m\n    source: x\n"
                    "    scope: {categories: [criminal], roles: [accused]}\n")
    with pytest.raises(ThresholdError, match=r"thresholds.yaml:2: the ages boundary's value .* "
                                             r"is not a finite number"):
        load_thresholds(path)


def test_a_threshold_not_crossed_is_refused(edges):
    with pytest.raises(PerturbationError, match="crosses no legal boundary"):
        check(Perturbation("numerical", "numerical_facts.ages.0", 25, 26, "x", "x"), edges)


def test_apply_changes_one_value_only(sheets, edges):
    for sheet, p in _all(sheets, edges)[:200]:
        before = sheet.model_dump()
        changed = apply(sheet, p)
        after = changed.model_dump()
        assert sheet.model_dump() == before  # the input sheet is not changed
        differing = {k for k in before if before[k] != after[k]}
        top = p.path.split(".")[0]
        assert differing == {top}, (p, differing)
        if p.fact_type == "evidence":
            kinds = [e["evidence_type"] for e in after["evidence_items"]]
            assert (p.old not in kinds) if p.new is None else (p.new in kinds)


def test_descriptions_say_what_changed(sheets, edges):
    for _, p in _all(sheets, edges):
        assert re.search(r"changed|doubled|halved|removed|added", p.description)


def test_renumbering_into_the_2023_codes_is_a_placebo_not_a_perturbation(edges):
    from countercase.perturb.placebo import placebos

    text = "The appellant was convicted under Section 302 IPC for the murder of his wife."
    sheet = extract_rules(text, "X", "query")
    assert all(p.new.split("-")[0] not in ("BNS", "BNSS")
               for p in candidates(sheet, edges, text=text) if p.fact_type == "section")
    (renamed,) = [p for p in placebos(sheet, text, "span", edges) if p.kind == "renumbering"]
    successor = edges[(edges["kind"] == "correspondence") & (edges["source"] == "IPC-302")]
    new = successor["target"].iloc[0]
    assert [s.section_id for s in renamed.sheet.sections_cited] == [new]
    assert f"Section {new.split('-')[1]} {new.split('-')[0]}" in renamed.text


def test_a_swap_into_an_offence_needs_the_facts_it_is_made_of():
    text = ("The deceased, the wife of the accused, was married to him four years ago. He was "
            "convicted under Section 302 IPC and Section 34 IPC.")
    sheet = extract_rules(text, "X", "query")
    moved = {p.new for p in candidates(sheet, text=text) if p.fact_type == "section"}
    assert "IPC-304" in moved
    assert not {"IPC-304B", "IPC-149", "IPC-304A"} & moved, moved  # no dowry, assembly, rashness
    dowry = text + " She was harassed for dowry. Five of them formed an unlawful assembly."
    moved = {p.new for p in candidates(extract_rules(dowry, "X", "query"), text=dowry)
             if p.fact_type == "section"}
    assert {"IPC-304B", "IPC-149"} <= moved, moved


def test_an_edit_keeps_the_rest_of_the_case_true():
    """Issue 57: no attempt to murder where the text keeps the death, no dacoity without five,
    no appeal-route or forum swap."""
    died = "The accused stabbed the victim, who died in hospital. He was convicted under Section 302 IPC."
    lived = "The accused stabbed the victim, who was treated in hospital. He was convicted under Section 302 IPC."
    assert "IPC-307" not in {p.new for p in candidates(extract_rules(died, "X", "query"),
                                                       text=died)}
    assert "IPC-307" in {p.new for p in candidates(extract_rules(lived, "X", "query"),
                                                   text=lived)}
    two = "Two men robbed the shop at knife point. They were convicted under Section 392 IPC."
    five = "Five men robbed the shop at knife point. They were convicted under Section 392 IPC."
    assert "IPC-395" not in {p.new for p in candidates(extract_rules(two, "X", "query"), text=two)}
    assert "IPC-395" in {p.new for p in candidates(extract_rules(five, "X", "query"), text=five)}
    writ = "The petitioner filed a writ petition under Article 32 of the Constitution."
    assert not {"Constitution-Article-226"} & {
        p.new for p in candidates(extract_rules(writ, "X", "query"), text=writ)}


def test_no_evidence_is_removed_that_the_case_says_it_lacks():
    found = ("The police searched the house and nothing was recovered. He was convicted under "
             "Section 302 IPC on the evidence of an eye witness.")
    kept = ("The knife was recovered at his instance. He was convicted under Section 302 IPC on "
            "the evidence of an eye witness.")
    removed = lambda text: {p.old for p in candidates(extract_rules(text, "X", "query"),  # noqa: E731
                                                      text=text) if p.fact_type == "evidence"}
    assert "Recovery" not in removed(found)
    assert "Recovery" in removed(kept)


def test_a_party_axis_fits_the_partys_stated_status():
    adult = ("The accused, a married man and a Loco Foreman of the railways, was convicted "
             "under Section 302 IPC. The State of Bihar is the respondent.")
    plain = ("The accused was convicted under Section 302 IPC. The State of Bihar is the "
             "respondent.")
    def minor(text):
        sheet = extract_rules(text, "X", "query", petitioner="Ram Singh",
                              respondent="State of Bihar")
        return {p.new for p in candidates(sheet, text=text) if p.fact_type == "party"}

    assert "Minor" not in minor(adult)
    assert "Minor" in minor(plain)


def test_no_law_is_proposed_that_came_into_force_after_the_cases_events():
    """Issue 57: no s. 304B (1986) for a case whose text ends in 1977, no juvenile axis (2001)
    for an offence of the 1980s; the same case stated later gets them."""
    def edits(year):
        text = (f"The deceased, married in 1975, was burnt to death for dowry on 12.3.{year}. "
                "The husband was convicted under Section 302 IPC and Section 498A IPC. The State "
                "of Bihar is the respondent.")
        sheet = extract_rules(text, "X", "query", petitioner="Ram Singh",
                              respondent="State of Bihar")
        return {(p.fact_type, p.new) for p in candidates(sheet, text=text)}

    early, late = edits(1977), edits(2005)
    assert ("section", "IPC-304B") not in early and ("section", "IPC-304B") in late
    # an amount is no year: "Rs. 2015" leaves the case in 1977
    assert latest_year("on 12.3.1977 he paid Rs. 2015 and 1,2019,000") == 1977


def test_a_duration_moved_past_whole_years_clears_every_calendar():
    text = ("The deceased died within 6 years of her marriage, and dowry was demanded. The "
            "husband was convicted under Section 304B IPC.")
    sheet = extract_rules(text, "X", "query")
    moved = [p for p in candidates(sheet, text=text) if p.path.startswith("numerical_facts.dur")]
    up = [p.new[0] for p in moved if p.new[0] > in_days(*p.old)]
    assert 2558 in up  # seven years are 2,556 or 2,557 days: 2,555 stays inside them
    assert all(check(p) is None for p in moved)

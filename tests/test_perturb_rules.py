"""Perturbation rules on fact sheets read from real judgments, against the real adjacency map."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from countercase.extract.metadata import extract_metadata
from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
from countercase.factsheet.rules import extract_rules
from countercase.ingest.text import text_document
from countercase.perturb.adjacency import build_adjacency
from countercase.perturb.rules import (PARTY_AXES, Perturbation, PerturbationError, apply,
                                       candidates, check, crosses, load_thresholds)

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


def test_ages_cross_their_boundary_exactly(sheets, edges):
    thresholds = {t.value: t for t in load_thresholds()["ages"]}
    ages = [p for _, p in _all(sheets, edges) if ".ages." in p.path]
    assert ages, "no judgment among the fixtures states an age"
    for p in ages:
        crossed = [b for b in thresholds if crosses(p.old, p.new, b)]
        assert crossed and (p.new in crossed or p.new + 1 in crossed)  # at the boundary or one below
        assert thresholds[p.new if p.new in crossed else p.new + 1].source == p.basis


def test_section_changes_follow_edges_and_murder_reaches_culpable_homicide(sheets, edges):
    sheet, _ = sheets["C1268"]
    moves = {p.new for p in candidates(sheet, edges) if p.fact_type == "section"
             and p.old == "IPC-302"}
    assert moves and moves <= set(edges.loc[edges["source"] == "IPC-302", "target"]) | set(
        edges.loc[edges["target"] == "IPC-302", "source"])
    invented = Perturbation("section", "sections_cited.0", "IPC-302", "MVA-166", "x", "x")
    with pytest.raises(PerturbationError, match="no edge"):
        check(invented, edges)


def test_party_swaps_stay_on_an_axis(sheets, edges):
    swaps = [p for _, p in _all(sheets, edges) if p.fact_type == "party"]
    assert swaps and all(frozenset({p.old, p.new}) in PARTY_AXES for p in swaps)
    with pytest.raises(PerturbationError, match="axis"):
        check(Perturbation("party", "parties.petitioner", "State", "Minor", "x", "x"), edges)


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

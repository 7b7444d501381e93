"""Fact sheets: the schema, the rule extractor on real judgments and queries, the stage and the CLI."""

from __future__ import annotations

import json
import re

import pytest

from countercase.config import ExtractParams
from countercase.extract.run import run_extract
from countercase.factsheet.rules import extract_rules, find_ages, find_amounts, find_durations
from countercase.factsheet.run import run_factsheets
from countercase.factsheet.schema import (FactSheetError, json_schema, shipped_schema,
                                          validate_sheet)
from countercase.ingest.text import text_document

JUDGMENTS = ["C1", "C2", "C3", "C5", "C8", "C1268"]


@pytest.fixture(scope="module")
def corpus(aila_files):
    return aila_files.casedocs()


@pytest.fixture(scope="module")
def queries(aila_files):
    return aila_files.queries()


@pytest.fixture(scope="module")
def stage(tmp_path_factory, raw_dir, corpus, queries):
    out = tmp_path_factory.mktemp("factsheets")
    docs = [text_document(n, corpus[n].encode(), n) for n in JUDGMENTS]
    (out / "documents.jsonl").write_text("".join(json.dumps(d.to_dict()) + "\n" for d in docs))
    run_extract(out / "documents.jsonl", raw_dir / "statutes", raw_dir / "sc_metadata/raw",
                out / "extract", ExtractParams())
    report = run_factsheets(out / "documents.jsonl", out / "extract", queries, out / "sheets")
    sheets = {json.loads(line)["case_id"]: validate_sheet(json.loads(line))
              for name in ("judgments.jsonl", "queries.jsonl")
              for line in (out / "sheets" / name).read_text().splitlines()}
    return out, report, sheets, {d.doc_id: d.text for d in docs}


def test_the_shipped_schema_is_the_models():
    # after a change of the model: python -m countercase.factsheet.schema
    assert shipped_schema() == json.loads(json.dumps(json_schema()))


def test_a_bad_value_is_named_with_its_field():
    with pytest.raises(FactSheetError, match=r"parties\.petitioner\.type.*'Alien'"):
        validate_sheet({"case_id": "x", "source": "text", "facts_located_by": "whole text",
                        "facts_span": {"start": 0, "end": 1, "text": "a"},
                        "parties": {"petitioner": {"type": "Alien"}}})
    with pytest.raises(FactSheetError, match=r"numerical_facts\.ages\.0\.years"):
        validate_sheet({"case_id": "x", "source": "text", "facts_located_by": "whole text",
                        "facts_span": {"start": 0, "end": 1, "text": "a"},
                        "numerical_facts": {"ages": [{"years": -4}]}})
    # a missing field names the field, not the whole sheet it is missing from
    big = {"case_id": "x", "source": "text", "facts_located_by": "whole text",
           "facts_span": {"start": 0, "end": 1, "text": "a" * 2000}}
    del big["case_id"]
    with pytest.raises(FactSheetError, match=r"case_id: Field required") as error:
        validate_sheet(big)
    assert len(str(error.value)) < 200 and "aaaa" not in str(error.value)


def test_every_value_is_grounded_in_its_text(stage):
    _, report, sheets, texts = stage
    assert report["rules"]["judgments"]["n"] == len(JUDGMENTS) and report["rules"]["n_failures"] == 0
    for case_id, text in texts.items():
        sheet = sheets[case_id]
        start, end = sheet.facts_span.start, sheet.facts_span.end
        values = (sheet.sections_cited + sheet.evidence_items + sheet.numerical_facts.ages
                  + sheet.numerical_facts.amounts + sheet.numerical_facts.durations)
        for value in values:
            assert text[value.span.start:value.span.end] == value.span.text
            assert start <= value.span.start and value.span.end <= end  # read from the facts only
        for party in (sheet.parties.petitioner, sheet.parties.respondent):
            if party.span:
                assert text[party.span.start:party.span.end] == party.span.text


def test_a_murder_appeal_reads_as_one(stage):
    _, _, sheets, _ = stage
    sheet = sheets["C1268"]  # Kailash v State of M.P.: a Section 302 IPC appeal
    assert (sheet.parties.petitioner.type, sheet.parties.respondent.type) == ("Individual", "State")
    assert "IPC-302" in {s.section_id for s in sheet.sections_cited}
    kinds = {e.evidence_type for e in sheet.evidence_items}
    assert {"PostMortemReport", "FIR"} <= kinds
    for item in sheet.evidence_items:  # the description is the sentence holding the match
        assert " ".join(item.span.text.split()).lower() in item.description.lower()


def test_masked_queries_get_no_invented_sections(stage, queries):
    _, _, sheets, _ = stage
    masked = [q for q, text in queries.items() if re.search(r"Section S of (?:Act )?A\d", text)]
    assert masked == ["AILA_Q1"]  # "under Section S of Act A1": act and number masked
    assert not sheets["AILA_Q1"].sections_cited
    for sheet in (sheets[q] for q in queries):  # any section found is printed with its number
        assert all(re.search(r"\d", s.span.text) for s in sheet.sections_cited)
    assert {s.section_id for s in sheets["AILA_Q10"].sections_cited} == {"IPC-147"}  # not masked


def _sentences(corpus: dict[str, str], pattern: str, n: int) -> list[str]:
    found = []
    for name in sorted(corpus, key=lambda c: int(c[1:])):
        for sentence in re.split(r"(?<=[.;])\s+", corpus[name]):
            if re.search(pattern, sentence) and len(sentence) < 400:
                found.append(sentence)
                if len(found) == n:
                    return found
    return found


def test_amounts_in_lakhs_and_crores_on_real_sentences(corpus):
    for unit, factor in (("lakhs?", 1e5), ("crores?", 1e7)):
        for sentence in _sentences(corpus, rf"Rs\.?\s*\d+(?:\.\d+)?\s*{unit}\b", 5):
            number = re.search(rf"Rs\.?\s*(\d+(?:\.\d+)?)\s*{unit}\b", sentence).group(1)
            values = [a.value for a in find_amounts(sentence)]
            assert float(number) * factor in values, sentence


def test_ages_on_real_sentences_are_not_also_durations(corpus):
    sentences = _sentences(corpus, r"\baged about \d{1,2} years\b", 8)
    assert len(sentences) == 8
    for sentence in sentences:
        years = float(re.search(r"aged about (\d{1,2}) years", sentence).group(1))
        ages = find_ages(sentence)
        assert years in [a.years for a in ages], sentence
        assert all(a.descriptor == ("minor" if a.years < 18 else "major") for a in ages)
        durations = find_durations(sentence, ages)
        assert not any(d.span.text in a.span.text for d in durations for a in ages)


def test_empty_text_and_text_in_another_language_are_refused():
    with pytest.raises(FactSheetError, match="empty text"):
        extract_rules("   ", "x", "text")
    with pytest.raises(FactSheetError, match="not in English"):  # Hindi: "the appellant was convicted"
        extract_rules("अपीलकर्ता को भारतीय दंड संहिता की धारा 302 के अंतर्गत दोषी ठहराया गया।", "x", "text")


def test_cli_reads_text_ids_and_files(stage, run_cli, tmp_path):
    out, _, sheets, _ = stage
    code, printed, _ = run_cli("factsheet", "--case-id", "AILA_Q10",
                            "--sheets-dir", str(out / "sheets"), "--json")
    assert code == 0 and validate_sheet(json.loads(printed)) == sheets["AILA_Q10"]
    text = "The appellant, a tenant aged about 17 years, was convicted under Section 302 IPC."
    code, printed, _ = run_cli("factsheet", text, "--json")
    sheet = validate_sheet(json.loads(printed))
    assert code == 0 and sheet.parties.petitioner.type == "Tenant"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**sheet.model_dump(), "outcome": "Won"}))
    code, _, err = run_cli("factsheet", "--file", str(bad))
    assert code == 2 and "outcome" in err and "'Won'" in err and "Traceback" not in err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, _, err = run_cli("factsheet", "--file", str(broken))
    assert code == 2 and str(broken) in err and "is not JSON" in err
    code, _, err = run_cli("factsheet", "--case-id", "C999999",
                        "--sheets-dir", str(out / "sheets"))
    assert code == 2 and "C999999" in err

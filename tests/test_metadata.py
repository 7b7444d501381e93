"""Metadata of real judgments: AILA text headers, Supreme Court PDFs, outcomes, record links."""

from __future__ import annotations

import datetime as dt

import pytest

from countercase.extract.metadata import extract_metadata, parse_date
from countercase.extract.sc_records import ScIndex, load_sc_index, record_bench, record_judges
from countercase.ingest.pdf import read_pdf
from countercase.ingest.text import text_document


@pytest.fixture(scope="module")
def aila_docs(aila_files):
    names = ("C1", "C10", "C500", "C2076")
    texts = aila_files.casedocs(names)
    return {name: text_document(name, texts[name].encode(), name) for name in names}


@pytest.fixture(scope="module")
def sc_index(raw_dir):
    return load_sc_index(raw_dir / "sc_metadata/raw")


def test_aila_header_fields_come_from_the_header_lines(aila_docs):
    doc = aila_docs["C1"]
    lines = doc.text.splitlines()
    meta = extract_metadata(doc)
    assert meta.date == "1973-09-26" and meta.year == 1973 and meta.month == 9
    assert f"{meta.petitioner} v {meta.respondent}" == lines[0].strip()
    assert meta.author_judge == "A. Alagiriswami"
    assert meta.case_id == "Writ Petition 117/1973"
    assert meta.bench_type == "Unknown" and meta.bench_size is None  # the text names the author only


def test_outcome_is_read_from_the_final_order(aila_docs):
    assert aila_docs["C10"].text.rstrip().endswith("Petition dismissed")
    assert extract_metadata(aila_docs["C10"]).outcome_label == "Dismissed"


def test_sections_cited_in_the_judgment(aila_docs):
    meta = extract_metadata(aila_docs["C500"])
    assert "IPC-302" in meta.act_sections and "IPC-149" in meta.act_sections


def test_supreme_court_pdf_judges_date_parties(pdf_dir):
    doc = read_pdf(pdf_dir / "judgment_01.pdf", "judgment_01.pdf", "judgment_01")
    meta = extract_metadata(doc)
    tail = doc.text[-600:]
    assert "(A.K. SIKRI)" in tail and "(ASHOK BHUSHAN)" in tail and "APRIL 10, 2018" in tail
    assert [n.upper() for n in meta.judge_names] == ["A.K. SIKRI", "ASHOK BHUSHAN"]
    assert meta.bench_size == 2 and meta.bench_type == "Division"
    assert meta.date == "2018-04-10"
    assert meta.outcome_label == "Dismissed"  # "all these appeals are dismissed with costs"
    assert meta.respondent.startswith("S.N. RAJ KUMAR")


def test_dates_in_the_layouts_seen():
    assert parse_date("26 September 1973") == dt.date(1973, 9, 26)
    assert parse_date("NEW DELHI;\nAPRIL 10, 2018.") == dt.date(2018, 4, 10)
    assert parse_date("Decided On: 13.04.2007") == dt.date(2007, 4, 13)
    assert parse_date("no date here") is None


def test_records_link_only_on_date_and_parties(sc_index):
    record = next(r for day in sorted(sc_index.by_date) for r in sc_index.by_date[day]
                  if r.get("pet") and r.get("res") and r.get("bench"))
    day = dt.datetime.strptime(record["judgment_dates"], "%d-%m-%Y").date()
    assert sc_index.match(day, record["pet"], record["res"]) is record
    assert sc_index.match(day + dt.timedelta(days=1), record["pet"], record["res"]) is not record
    assert sc_index.match(day, "Zzyzx Qwerty", "Xylophone Quux") is None


def test_ambiguous_links_are_refused():
    twins = [{"judgment_dates": "01-02-2011", "pet": "RAM KUMAR", "res": "STATE OF BIHAR",
              "bench": "A, B"}, {"judgment_dates": "01-02-2011", "pet": "RAM KUMAR",
                                 "res": "STATE OF BIHAR", "bench": "C, D"}]
    assert ScIndex(twins).match(dt.date(2011, 2, 1), "Ram Kumar", "State of Bihar") is None


def test_record_bench_names_are_cleaned():
    record = {"bench": "HON&#39;BLE MR. JUSTICE ABHAY S. OKA, HON&#39;BLE MR. JUSTICE UJJAL BHUYAN"}
    assert record_judges(record) == ["Abhay S. Oka", "Ujjal Bhuyan"]
    assert record_judges({"bench": "D.K. JAIN,CHANDRAMAULI KR. PRASAD, , , "}) == [
        "D.K. Jain", "Chandramauli Kr. Prasad"]


def test_garbage_text_gives_unknowns_not_errors():
    from countercase.ingest.document import Document, Page

    meta = extract_metadata(Document("x", "pdf", "x.pdf", [Page(0, "\x00\x01 ??? v")]))
    assert meta.year is None and meta.outcome_label == "Unknown" and meta.act_sections == []


def test_allowed_or_dismissed_wording_beats_a_disposed_footer(aila_docs):
    text = aila_docs["C2076"].text
    assert "the writ petitions and special leave petitions are dismissed" in text
    assert text.rstrip().endswith("Petitions disposed of.")
    assert extract_metadata(aila_docs["C2076"]).outcome_label == "Dismissed"


def _doc(text: str, source: str = "aila_text"):
    from countercase.ingest.document import Document, Page

    return Document("t", source, "t.txt", [Page(0, text)])


@pytest.mark.parametrize("sentence, label", [
    ("For the reasons aforesaid, the appeal is partly allowed.", "Allowed"),
    ("In the result, the appeals fail and are dismissed.", "Dismissed"),
    ("The writ petition is disposed of in the aforesaid terms.", "Disposed"),
    ("We accordingly allow the appeal and set aside the order.", "Allowed"),
])
def test_outcome_wordings(sentence, label):
    assert extract_metadata(_doc(f"A v B\nSupreme Court of India\n\n1 May 1990\n1. Facts.\n{sentence}")
                            ).outcome_label == label


def test_supreme_court_pdf_cause_titles(pdf_dir):
    doc = read_pdf(pdf_dir / "judgment_05.pdf", "judgment_05.pdf", "judgment_05")
    head = doc.text[:600]
    assert "Kaliaperumal ... Appellant" in head and "Rajagopal & Anr. ... Respondents" in head
    meta = extract_metadata(doc)
    assert (meta.petitioner, meta.respondent) == ("Kaliaperumal", "Rajagopal")
    assert meta.date == "2009-02-20" and meta.bench_size == 2
    assert meta.author_judge == "J.M. Panchal"
    first = read_pdf(pdf_dir / "judgment_01.pdf", "judgment_01.pdf", "judgment_01")
    meta = extract_metadata(first)
    assert "INFRASTRUCTURE CORPORATION" in first.text[:400]
    assert meta.petitioner == "THE ANDHRA PRADESH INDUSTRIAL INFRASTRUCTURE CORPORATION LIMITED"
    assert meta.case_id == "Civil Appeal 3020/2018"


@pytest.mark.parametrize("bench, names, complete", [
    ("SIKRI, S.M.,SHELAT, J.M.,MITTER, G.K.", ["S.M. Sikri", "J.M. Shelat", "G.K. Mitter"], True),
    ("B.P. SINHA (CJ),P.B. GAJENDRAGADKAR,K. SUBBARAO,K.C. DAS GUPTA,J.C.",
     ["B.P. Sinha", "P.B. Gajendragadkar", "K. Subbarao", "K.C. Das Gupta"], False),
    ("KOSHAL,A.D.", ["A.D. Koshal"], True),
    ("REDDY,O. CHINNAPPA (J)", ["O. Chinnappa Reddy"], True),
    ("HON&#39;BLE MRS. JUSTICE R. BANUMATHI, HON&#39;BLE MR. JUSTICE A.S. BOPANNA",
     ["R. Banumathi", "A.S. Bopanna"], True),
    ("", [], False),
])
def test_record_bench_layouts(bench, names, complete):
    assert record_bench({"bench": bench}) == (names, complete)


def test_real_record_layouts_are_in_the_data(sc_index):
    benches = {r.get("bench") for rs in sc_index.by_date.values() for r in rs}
    assert "SIKRI, S.M. (CJ),SHELAT, J.M.,VAIDYIALINGAM, C.A.,GROVER, A.N.,RAY, A.N." in benches
    assert "KOSHAL,A.D." in benches
    assert "B.P. SINHA (CJ),P.B. GAJENDRAGADKAR,K. SUBBARAO,K.C. DAS GUPTA,J.C." in benches


def _linked(author: str, bench: str):
    header = (f"Ram Kumar v State of Bihar\nSupreme Court of India\n\n1 February 2011\n"
              f"Criminal Appeal No. 1 of 2011\nThe Judgment was delivered by : {author}, J.\n"
              "1. The appeal is dismissed.")
    index = ScIndex([{"judgment_dates": "01-02-2011", "pet": "RAM KUMAR", "res": "STATE OF BIHAR",
                      "bench": bench, "diary_no": "123"}])
    return extract_metadata(_doc(header), index)


def test_a_linked_record_fills_the_bench_and_says_so():
    meta = _linked("T.S. Thakur", "MARKANDEY KATJU,T.S. THAKUR, , , ")
    assert meta.judge_names == ["T.S. Thakur", "Markandey Katju"]
    assert meta.bench_size == 2 and meta.bench_type == "Division"
    assert meta.sources["judge_names"] == meta.sources["bench_size"] == "sc_metadata"
    assert meta.sources["sc_record"] == "123"


def test_a_record_without_the_author_is_not_linked():
    meta = _linked("A. Alagiriswami", "MARKANDEY KATJU,T.S. THAKUR, , , ")
    assert meta.judge_names == ["A. Alagiriswami"] and meta.bench_size is None
    assert "sc_record" not in meta.sources


def test_a_one_name_record_gives_no_bench_size():
    meta = _linked("A.D. Koshal", "KOSHAL,A.D.")
    assert meta.bench_size is None and meta.bench_type == "Unknown"


def test_aila_docs_link_to_real_records(aila_docs, sc_index):
    linked = [extract_metadata(doc, sc_index) for doc in aila_docs.values()]
    for meta in linked:
        if "sc_record" in meta.sources:
            assert meta.judge_names[0] == meta.author_judge

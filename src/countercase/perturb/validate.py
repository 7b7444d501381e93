"""The plan's LLM check of a perturbation: plausible? operative? with a short reason, as JSON.

Switchable (``params.yaml`` ``perturb.llm_check``) because of its cost: about 10 s a check with
the local 1.5B model on 2 threads, against about 1 s for a whole tree without it. Answers are
cached on disk by a hash of (original sheet, perturbed sheet, perturbation type), so a tree built
again costs no model call. An answer that is not valid JSON counts as a rejection, with the
reason kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import jsonschema

from countercase.factsheet.schema import FactSheet

PROMPT = (
    "You are a legal expert. A case has the following original facts: {original}. A "
    "counterfactual version has been generated with the following altered facts: {perturbed}. "
    "The change: {change}. Answer two questions: (1) Is this counterfactual legally plausible: "
    "could a case with these altered facts plausibly occur in Indian jurisprudence? (2) Does the "
    "alteration change a legally operative fact, or is it a minor stylistic change that would "
    "not affect legal reasoning? Respond with JSON: {{\"plausible\": true/false, \"operative\": "
    "true/false, \"reasoning\": \"brief explanation\"}}.")
ANSWER_SCHEMA = {"type": "object", "required": ["plausible", "operative"],
                 "properties": {"plausible": {"type": "boolean"},
                                "operative": {"type": "boolean"},
                                "reasoning": {"type": "string"}}}


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    plausible: bool | None
    operative: bool | None
    reasoning: str


def _brief(sheet: FactSheet) -> str:
    """The sheet's facts without spans (the model needs the values, not the offsets)."""
    facts = sheet.numerical_facts
    return json.dumps({
        "petitioner": sheet.parties.petitioner.type, "respondent": sheet.parties.respondent.type,
        "sections": [s.section_id for s in sheet.sections_cited],
        "evidence": [e.evidence_type for e in sheet.evidence_items],
        "ages": [a.years for a in facts.ages], "amounts": [a.value for a in facts.amounts],
        "durations": [f"{d.value:g} {d.unit}" for d in facts.durations]})


class LlmValidator:
    def __init__(self, extractor) -> None:
        """``extractor``: a :class:`countercase.factsheet.llm.LlmExtractor` (its model, cache)."""
        self.llm = extractor.llm
        self.cache = extractor.answers.parent / "llm-checks"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.calls = 0

    def check(self, original: FactSheet, perturbed: FactSheet, fact_type: str,
              change: str) -> Verdict:
        before, after = _brief(original), _brief(perturbed)
        key = hashlib.sha256(f"{before}\n{after}\n{fact_type}".encode()).hexdigest()
        cached = self.cache / f"{key}.json"
        if cached.is_file():
            raw = cached.read_text(encoding="utf-8")
        else:
            self.calls += 1
            reply = self.llm.create_chat_completion(
                messages=[{"role": "user", "content": PROMPT.format(
                    original=before, perturbed=after, change=change)}],
                temperature=0.0, max_tokens=120, response_format={"type": "json_object"})
            raw = reply["choices"][0]["message"]["content"] or ""
            cached.write_text(raw, encoding="utf-8")
        try:
            answer = json.loads(raw)
            jsonschema.validate(answer, ANSWER_SCHEMA)
        except (json.JSONDecodeError, jsonschema.ValidationError) as error:
            return Verdict(False, None, None, f"invalid answer: {str(error)[:120]}")
        return Verdict(answer["plausible"] and answer["operative"], answer["plausible"],
                       answer["operative"], str(answer.get("reasoning", ""))[:300])

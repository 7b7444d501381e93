"""The plan's LLM check of a perturbation (section 7, stage 3): is it plausible? is it operative?

Each question is scored as P(yes) / (P(yes) + P(no)) from the model's token probabilities
(:meth:`countercase.factsheet.llm.LocalModel.p_yes`), not read from generated JSON: a score can
be calibrated and measured as a classifier, an answer cannot, and nothing is generated (which is
what costs on 2 cores). The prompt comes in three pieces so that the model's context does the
work: the instructions and the original facts (shared by every candidate of a case), the change
(shared by its two questions), the question. The altered facts are the original with the change
applied, so the change alone is given. A candidate is accepted when both scores reach
:data:`THRESHOLD`, fixed before any score was read; stage ``llm_check`` measures the scores
against hand labels. Switchable in the trees (``params.yaml`` ``perturb.llm_check``) because of
its cost. Scores are recorded and replayed (:mod:`countercase.runtime.recording`, kind ``p_yes``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from countercase.factsheet.llm import YES_NO, LocalModel
from countercase.factsheet.schema import FactSheet
from countercase.runtime.recording import Recording

SYSTEM = (
    "You are a legal expert in Indian law. You are shown the facts of a case and one "
    "counterfactual change to them.")
FACTS = ("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"
         "Original facts: {original}\n")
CHANGE = "The change: {change}\n"
QUESTIONS = {
    "plausible": ("Is this counterfactual legally plausible: could a case with the altered "
                  "facts plausibly occur in Indian jurisprudence? Answer yes or no."),
    "operative": ("Does the change alter a legally operative fact, one that could change the "
                  "legal reasoning, rather than a minor detail that would not? Answer yes or no."),
}
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n"
THRESHOLD = 0.5  # a score at or above it is a yes
N_CTX = 2048


@dataclass(frozen=True)
class Verdict:
    plausible: float  # P(yes) to the plausibility question
    operative: float  # P(yes) to the operative question

    @property
    def accepted(self) -> bool:
        return self.plausible >= THRESHOLD and self.operative >= THRESHOLD


def brief(sheet: FactSheet) -> str:
    """The sheet's facts without spans (the model needs the values, not the offsets)."""
    facts = sheet.numerical_facts
    return json.dumps({
        "petitioner": sheet.parties.petitioner.type, "respondent": sheet.parties.respondent.type,
        "sections": [s.section_id for s in sheet.sections_cited],
        "evidence": [e.evidence_type for e in sheet.evidence_items],
        "ages": [a.years for a in facts.ages], "amounts": [a.value for a in facts.amounts],
        "durations": [f"{d.value:g} {d.unit}" for d in facts.durations]})


def segments(original: FactSheet, change: str, question: str) -> list[str]:
    return [FACTS.format(system=SYSTEM, original=brief(original)),
            CHANGE.format(change=change), QUESTIONS[question] + SUFFIX]


class LlmValidator:
    """The LLM check, its scores kept in ``recording``; ``calls``: the scores it asked the
    model for in this run (the rest were replayed)."""

    def __init__(self, recording: Recording, model: LocalModel | None = None) -> None:
        self.recording = recording
        self.model = model or LocalModel(n_ctx=N_CTX)
        self.settings = {"n_ctx": N_CTX, "answers": YES_NO}

    @property
    def calls(self) -> int:
        return self.recording.counts.asked

    def check(self, original: FactSheet, perturbed: FactSheet, fact_type: str,
              change: str) -> Verdict:
        """The verdict on changing ``original`` into ``perturbed`` (described by ``change``);
        ``perturbed`` and ``fact_type`` are not shown to the model (see the module docstring)."""
        scores = {q: float(self.recording.answer(
            "p_yes", {"segments": segments(original, change, q)}, self.settings,
            self.model.p_yes)["p_yes"]) for q in QUESTIONS}
        return Verdict(**scores)

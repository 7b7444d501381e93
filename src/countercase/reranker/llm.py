"""A pointwise LLM reranker: the fact sheets' local LLM asked whether a candidate is relevant.

- The model is the one of :mod:`countercase.factsheet.llm` (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M,
  in llama.cpp). A passage's score is P(yes) / (P(yes) + P(no)) for the first token of the
  answer to a chat prompt: the case facts, then the candidate, then the question. The mass of
  every single-token spelling (``yes``, ``Yes``, `` yes`` ...) is summed per answer.
- The facts come first so that the ten candidates of one query share the prompt up to the
  candidate: that prefix is evaluated once, as its own decode, and every candidate evaluates
  only its own tokens from there. The prefix is always evaluated alone, whether it is reused
  or not, so a passage scores the same alone or in a batch.
- Only the last token's logits are read (``logits_all`` off): asking llama-cpp-python's
  ``create_completion`` for ``logprobs`` needs logits for every prompt token. Nothing is
  sampled, so the score is deterministic (no temperature or seed enters it).
- Scores are recorded (:mod:`countercase.runtime.recording`, kind ``p_yes``) with what each cost when
  it was computed, so a rerun of the stage makes no model call, needs no model, and still
  reports the model's cost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from countercase.factsheet.llm import MODEL_FILE, YES_NO, LocalModel
from countercase.runtime.recording import Recording
from countercase.retrieve.rerank import Passage

log = logging.getLogger(__name__)

Kind = Literal["precedent", "statute"]
SYSTEM = "You are an expert in Indian law who judges the relevance of legal documents."
# {facts} ends the shared prefix: everything from "Candidate" on differs per passage
PREFIX = ("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"
          "Facts of a case:\n{facts}\n\n")
QUESTIONS = {
    "precedent": ("Candidate prior case (an extract):\n{passage}\n\n"
                  "Is this prior case relevant as a precedent for the case with the facts above? "
                  "Answer yes or no."),
    "statute": ("Candidate statute:\n{passage}\n\n"
                "Is this statute relevant to the case with the facts above? Answer yes or no."),
}
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n"


def cut(text: str, max_chars: int) -> str:
    """``text`` with its white space collapsed, cut at the last word boundary within
    ``max_chars``."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    space = head.rfind(" ")
    return head[:space] if space > max_chars // 2 else head


@dataclass
class LlmCost:
    model_calls: int = 0  # passages scored by the model
    cache_hits: int = 0  # passages answered from the recording
    prefix_reuses: int = 0  # model calls that found their query's prefix already evaluated
    prompt_tokens: int = 0  # tokens of the prompts scored by the model
    evaluated_tokens: int = 0  # tokens the model actually evaluated (the prefixes reused excluded)
    seconds: float = 0.0  # wall clock of the model calls
    # the same three, as recorded when each pair was scored (cache hits included)
    recorded_seconds: float = 0.0
    recorded_prompt_tokens: int = 0
    recorded_evaluated_tokens: int = 0

    def as_dict(self) -> dict:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in vars(self).items()}


class LlmRelevanceReranker:
    """:class:`~countercase.retrieve.rerank.Reranker` by the local LLM's P(yes) (see the module
    docstring). ``kind``: what a passage is, a ``precedent`` (AILA Task 1) or a ``statute``
    (Task 2)."""

    def __init__(self, recording: Recording | None, kind: Kind = "precedent",
                 query_chars: int = 1500, passage_chars: int = 1000,
                 cache_dir: Path | None = None, threads: int = 2, n_ctx: int = 2048,
                 seed: int = 2019) -> None:
        if kind not in QUESTIONS:
            raise ValueError(f"kind must be one of {', '.join(QUESTIONS)}, got {kind!r}")
        if query_chars < 1 or passage_chars < 1:
            raise ValueError("query_chars and passage_chars must be positive")
        self.kind, self.query_chars, self.passage_chars = kind, query_chars, passage_chars
        self.recording = recording  # None: only asks (the replay check), never scores
        self.model = LocalModel(cache_dir, threads, n_ctx, seed)
        self.n_ctx = n_ctx
        self.model_name = MODEL_FILE
        self.settings = {"n_ctx": n_ctx, "answers": YES_NO}
        self.cost = LlmCost()

    def prompts(self, query: str, passage: str) -> tuple[str, str]:
        """(the shared prefix, the rest) of the prompt for one pair."""
        prefix = PREFIX.format(system=SYSTEM, facts=cut(query, self.query_chars))
        rest = QUESTIONS[self.kind].format(passage=cut(passage, self.passage_chars)) + SUFFIX
        return prefix, rest

    def ask(self, request: dict, settings: dict) -> dict:
        """The model's P(yes) for a recorded request (``prefix``, ``rest``), with its cost."""
        answer = self.model.p_yes(request, settings)
        self.cost.model_calls += 1
        self.cost.prefix_reuses += answer["evaluated_tokens"] < answer["prompt_tokens"]
        self.cost.prompt_tokens += answer["prompt_tokens"]
        self.cost.evaluated_tokens += answer["evaluated_tokens"]
        self.cost.seconds += answer["seconds"]
        return answer

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        if not query or not query.strip():
            raise ValueError("empty query: the LLM reranker needs the facts of a case")
        scores = []
        for _, text in passages:
            prefix, rest = self.prompts(query, text)
            replayed = self.recording.counts.replayed
            record = self.recording.answer("p_yes", {"prefix": prefix, "rest": rest},
                                           self.settings, self.ask)
            self.cost.cache_hits += self.recording.counts.replayed - replayed
            self.cost.recorded_seconds += record["seconds"]
            self.cost.recorded_prompt_tokens += record["prompt_tokens"]
            self.cost.recorded_evaluated_tokens += record["evaluated_tokens"]
            scores.append(float(record["p_yes"]))
        return scores

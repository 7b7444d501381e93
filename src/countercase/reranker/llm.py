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
- Scores are recorded (:mod:`countercase.recording`, kind ``p_yes``) with what each cost when
  it was computed, so a rerun of the stage makes no model call, needs no model, and still
  reports the model's cost.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from countercase.factsheet.llm import MODEL_FILE, LlmUnavailableError, LocalModel
from countercase.recording import Recording
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
ANSWERS = {"yes": ("yes", "Yes", "YES", " yes", " Yes"), "no": ("no", "No", "NO", " no", " No")}


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
        self.settings = {"n_ctx": n_ctx, "answers": ANSWERS}
        self.answer_ids: dict[str, list[int]] = {}
        self.cost = LlmCost()

    @property
    def llm(self):
        """The model, loaded on the first pair the recording cannot answer."""
        llm = self.model.llm
        if not self.answer_ids:
            self.answer_ids = {answer: self._single_tokens(words)
                               for answer, words in ANSWERS.items()}
        return llm

    def _single_tokens(self, words: Sequence[str]) -> list[int]:
        ids = []
        for word in words:
            tokens = self.model.llm.tokenize(word.encode(), add_bos=False, special=False)
            if len(tokens) == 1 and tokens[0] not in ids:
                ids.append(tokens[0])
        if not ids:
            raise LlmUnavailableError(f"the model has no single token for {words[0]!r}")
        return ids

    def prompts(self, query: str, passage: str) -> tuple[str, str]:
        """(the shared prefix, the rest) of the prompt for one pair."""
        prefix = PREFIX.format(system=SYSTEM, facts=cut(query, self.query_chars))
        rest = QUESTIONS[self.kind].format(passage=cut(passage, self.passage_chars)) + SUFFIX
        return prefix, rest

    def _tokens(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _p_yes(self, prefix: list[int], rest: list[int]) -> float:
        import llama_cpp

        llm = self.llm
        if len(prefix) + len(rest) > self.n_ctx:
            raise ValueError(f"prompt of {len(prefix) + len(rest)} tokens exceeds the context "
                             f"of {self.n_ctx}: lower query_chars or passage_chars")
        n = len(prefix)
        if llm.n_tokens >= n and list(llm.input_ids[:n]) == prefix:
            self.cost.prefix_reuses += 1
            self.cost.evaluated_tokens += len(rest)
        else:
            llm.reset()
            llm.eval(prefix)
            self.cost.evaluated_tokens += n + len(rest)
        llm.n_tokens = n  # eval() drops the KV cache from here on
        llm.eval(rest)
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx),
                                       shape=(llm.n_vocab(),)).astype(np.float64)
        top = float(logits.max())
        mass = {answer: sum(math.exp(logits[i] - top) for i in ids)
                for answer, ids in self.answer_ids.items()}
        return mass["yes"] / (mass["yes"] + mass["no"])

    def ask(self, request: dict, settings: dict) -> dict:
        """The model's P(yes) for a recorded request (``prefix``, ``rest``), with its cost."""
        if settings.get("n_ctx", self.n_ctx) > self.n_ctx:
            raise ValueError(f"the request was recorded with a context of {settings['n_ctx']}, "
                             f"more than this model's {self.n_ctx}")
        started = time.perf_counter()
        evaluated = self.cost.evaluated_tokens
        prefix_ids = self._tokens(request["prefix"])
        rest_ids = self._tokens(request["rest"])
        p_yes = self._p_yes(prefix_ids, rest_ids)
        seconds = time.perf_counter() - started
        self.cost.model_calls += 1
        self.cost.prompt_tokens += len(prefix_ids) + len(rest_ids)
        self.cost.seconds += seconds
        return {"p_yes": p_yes, "prompt_tokens": len(prefix_ids) + len(rest_ids),
                "evaluated_tokens": self.cost.evaluated_tokens - evaluated,
                "seconds": round(seconds, 4)}

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

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
- Scores are cached on disk by a hash of (model file, prompt), with what each cost when it was
  computed, so a rerun of the stage makes no model call and still reports the model's cost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from countercase.factsheet.llm import LlmUnavailableError, default_cache_dir, model_path
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
    cache_hits: int = 0  # passages answered from the disk cache
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

    def __init__(self, kind: Kind = "precedent", query_chars: int = 1500,
                 passage_chars: int = 1000, cache_dir: Path | None = None, threads: int = 2,
                 n_ctx: int = 2048, seed: int = 2019) -> None:
        if kind not in QUESTIONS:
            raise ValueError(f"kind must be one of {', '.join(QUESTIONS)}, got {kind!r}")
        if query_chars < 1 or passage_chars < 1:
            raise ValueError("query_chars and passage_chars must be positive")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise LlmUnavailableError(
                "llama-cpp-python is not installed (see ENVIRONMENT: build it portable with "
                "the CMAKE_ARGS given there)") from None
        self.kind, self.query_chars, self.passage_chars = kind, query_chars, passage_chars
        self.path = model_path(cache_dir)
        self.model_name = self.path.name
        self.cache = (Path(cache_dir) if cache_dir else default_cache_dir()) / "llm-rerank"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.llm = Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=threads, seed=seed,
                         logits_all=False, verbose=False)
        self.n_ctx = n_ctx
        self.answer_ids = {answer: self._single_tokens(words) for answer, words in ANSWERS.items()}
        self.cost = LlmCost()

    def _single_tokens(self, words: Sequence[str]) -> list[int]:
        ids = []
        for word in words:
            tokens = self.llm.tokenize(word.encode(), add_bos=False, special=False)
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

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        if not query or not query.strip():
            raise ValueError("empty query: the LLM reranker needs the facts of a case")
        scores = []
        for _, text in passages:
            prefix, rest = self.prompts(query, text)
            key = hashlib.sha256(f"{self.model_name}\n{prefix}{rest}".encode()).hexdigest()
            cached = self.cache / f"{key}.json"
            if cached.is_file():
                record = json.loads(cached.read_text(encoding="utf-8"))
                self.cost.cache_hits += 1
            else:
                started = time.perf_counter()
                evaluated = self.cost.evaluated_tokens
                prefix_ids = self._tokens(prefix)
                rest_ids = self._tokens(rest)
                p_yes = self._p_yes(prefix_ids, rest_ids)
                seconds = time.perf_counter() - started
                record = {"p_yes": p_yes, "prompt_tokens": len(prefix_ids) + len(rest_ids),
                          "evaluated_tokens": self.cost.evaluated_tokens - evaluated,
                          "seconds": round(seconds, 4)}
                self.cost.model_calls += 1
                self.cost.prompt_tokens += record["prompt_tokens"]
                self.cost.seconds += seconds
                partial = cached.with_suffix(".partial")  # a killed run leaves no broken entry
                partial.write_text(json.dumps(record), encoding="utf-8")
                os.replace(partial, cached)
            self.cost.recorded_seconds += record["seconds"]
            self.cost.recorded_prompt_tokens += record["prompt_tokens"]
            self.cost.recorded_evaluated_tokens += record["evaluated_tokens"]
            scores.append(float(record["p_yes"]))
        return scores

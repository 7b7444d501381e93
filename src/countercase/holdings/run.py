"""Stage ``holdings``: every corpus judgment's holding profile (:mod:`.profile`), and its
accuracy on the labelled sample where one is committed (``data/gold/holding_profiles.jsonl``:
per sampled judgment, each provision its text cites and whether the labeller judged it decided).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from pathlib import Path
from typing import Iterable

import pandas as pd
from tqdm import tqdm

from countercase.datasets.ids import natural_key
from countercase.extract.act_sections import find_sections
from countercase.holdings.profile import Profile, profile
from countercase.ingest.run import read_documents

log = logging.getLogger(__name__)


def read_profiles(path: Path) -> dict[str, Profile]:
    with Path(path).open(encoding="utf-8") as handle:
        return {p.doc_id: p for p in (Profile.from_json(json.loads(line)) for line in handle)}


def build(documents: Path, metadata: Path, out: Path) -> dict[str, Profile]:
    """Every judgment's profile, written to ``out`` as JSON lines in id order."""
    texts = {d.doc_id: d.text for d in read_documents(documents)}
    meta = pd.read_parquet(metadata, columns=["doc_id", "act_sections"])
    acts = {d: list(s) if s is not None else [] for d, s in zip(meta["doc_id"], meta["act_sections"])}
    found = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for doc in tqdm(sorted(texts, key=natural_key), desc="holding profiles", unit="judgment"):
            found[doc] = profile(doc, texts[doc], acts.get(doc, ()))
            handle.write(json.dumps(found[doc].to_json(), sort_keys=True) + "\n")
    return found


def sample(texts: dict[str, str], seed: int, size: int) -> list[str]:
    """The labelled sample: ``size`` judgments, drawn with ``seed`` among those citing at least
    one provision (where a provision can be decided at all)."""
    eligible = sorted((d for d, t in texts.items() if find_sections(t)), key=natural_key)
    return sorted(random.Random(seed).sample(eligible, size), key=natural_key)


def read_gold(path: Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def accuracy(profiles: dict[str, Profile], gold: Iterable[dict]) -> dict:
    """Precision and recall of the provisions decided, against the labeller's: a pair (judgment,
    provision) is decided by the profile when its role is ``decided``."""
    gold = list(gold)
    docs = sorted({g["doc_id"] for g in gold}, key=natural_key)
    truth = {(g["doc_id"], g["section_id"]) for g in gold if g["decided"]}
    said = {(d, v) for d in docs if d in profiles
            for v in profiles[d].values("provision", "decided")}
    hit = len(truth & said)
    labellers = sorted({g["labeller"] for g in gold})
    return {"n": len(docs), "pairs_labelled": len(gold), "decided_by_labeller": len(truth),
            "decided_by_profile": len(said),
            "precision": round(hit / len(said), 4) if said else None,
            "recall": round(hit / len(truth), 4) if truth else None,
            "labeller": "; ".join(labellers)}


def summary(profiles: dict[str, Profile], gold: Path | None, seconds: float) -> dict:
    empty = sorted((d for d, p in profiles.items() if p.reasons_chars == 0), key=natural_key)
    kinds = Counter((h.kind, h.role) for p in profiles.values() for h in p.held)
    with_value = {k: sum(1 for p in profiles.values() if p.values(k))
                  for k in ("provision", "evidence", "party", "boundary")}
    out = {"judgments": len(profiles), "empty": {"count": len(empty), "doc_ids": empty},
           "values": {f"{k}/{r}": n for (k, r), n in sorted(kinds.items())},
           "judgments_with": with_value,
           "judgments_with_decided_provision": sum(
               1 for p in profiles.values() if p.values("provision", "decided")),
           "seconds": round(seconds, 1)}
    if gold is not None and Path(gold).is_file():
        out["accuracy"] = accuracy(profiles, read_gold(gold))
    return out


def run_holdings(documents: Path, metadata: Path, out: Path, gold: Path | None) -> dict:
    started = time.perf_counter()
    profiles = build(documents, metadata, out / "profiles.jsonl")
    return summary(profiles, gold, time.perf_counter() - started)

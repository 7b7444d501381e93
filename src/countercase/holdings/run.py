"""Stage ``holdings``: every corpus judgment's holding profile (:mod:`.profile`), and its
accuracy on the labelled sample (``data/gold/holding_profiles.jsonl``: per sampled judgment,
each provision its text cites and whether the labeller judged it decided).

``countercase lab holdings-fit`` chooses the learned scorer (:mod:`.decided`) on the sample's
development half and writes ``configs/holdings_choice.yaml``; the stage scores it on the test
half only, and the first rule on both halves.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Iterable

import pandas as pd
import yaml
from tqdm import tqdm

from countercase.datasets.ids import natural_key
from countercase.extract.act_sections import find_sections
from countercase.extract.segment import segment
from countercase.holdings.decided import FEATURES, Scorer, choose, features, split
from countercase.holdings.profile import Profile, profile
from countercase.ingest.run import read_documents


def read_profiles(path: Path) -> dict[str, Profile]:
    with Path(path).open(encoding="utf-8") as handle:
        return {p.doc_id: p for p in (Profile.from_json(json.loads(line)) for line in handle)}


def read_gold(path: Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_scorer(path: Path) -> Scorer | None:
    if not Path(path).is_file():
        return None
    found = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return Scorer(tuple(found["weights"]), found["threshold"], found["precise"])


def _texts(documents: Path) -> dict[str, str]:
    return {d.doc_id: d.text for d in read_documents(documents)}


def _acts(metadata: Path) -> dict[str, list[str]]:
    meta = pd.read_parquet(metadata, columns=["doc_id", "act_sections"])
    return {d: list(s) if s is not None else [] for d, s in zip(meta["doc_id"], meta["act_sections"])}


def sample(texts: dict[str, str], seed: int, size: int) -> list[str]:
    """The labelled sample: ``size`` judgments, drawn with ``seed`` among those citing at least
    one provision (where a provision can be decided at all)."""
    eligible = sorted((d for d, t in texts.items() if find_sections(t)), key=natural_key)
    return sorted(random.Random(seed).sample(eligible, size), key=natural_key)


def accuracy(profiles: dict[str, Profile], gold: Iterable[dict], docs: Iterable[str] | None = None,
             threshold: float | None = None) -> dict:
    """Precision and recall of the provisions decided against the labeller's, over ``docs``
    (default: every labelled judgment); ``threshold``: decided at that learned score instead of
    the profile's role. The labeller's added provisions count as misses when not found."""
    gold = [g for g in gold if docs is None or g["doc_id"] in set(docs)]
    ids = sorted({g["doc_id"] for g in gold}, key=natural_key)
    truth = {(g["doc_id"], g["section_id"]) for g in gold if g["decided"]}
    said = {(d, h.value) for d in ids if d in profiles for h in profiles[d].held
            if h.kind == "provision" and (h.role == "decided" if threshold is None
                                          else (h.score or 0) >= threshold)}
    hit = len(truth & said)
    return {"n": len(ids), "pairs_labelled": len(gold), "decided_by_labeller": len(truth),
            "decided_by_profile": len(said),
            "precision": round(hit / len(said), 4) if said else None,
            "recall": round(hit / len(truth), 4) if truth else None}


def fit_choice(documents: Path, gold: Path, seed: int, out: Path) -> dict:
    """Choose the scorer on the sample's development half and write it to ``out``."""
    labels = read_gold(gold)
    docs = sorted({g["doc_id"] for g in labels}, key=natural_key)
    dev, test = split(docs, seed)
    texts = _texts(documents)
    vectors = {d: features(texts[d], segment(texts[d]), find_sections(texts[d])) for d in dev}
    scorer = choose(vectors, {(g["doc_id"], g["section_id"]): g["decided"] for g in labels}, dev)
    choice = {"rule": ("logistic regression (L2 1.0) over FEATURES, fitted on the development "
                       "half; threshold: the best F1 of leave-one-judgment-out scores there, "
                       "precise: the lowest of those thresholds with precision >= 0.8"),
              "features": list(FEATURES), "weights": list(scorer.weights),
              "threshold": scorer.threshold, "precise": scorer.precise,
              "development": dev, "test": test, "labels": str(gold)}
    out.write_text(yaml.safe_dump(choice, sort_keys=False, width=100), encoding="utf-8")
    return choice


def summary(profiles: dict[str, Profile], seconds: float) -> dict:
    empty = sorted((d for d, p in profiles.items() if p.reasons_chars == 0), key=natural_key)
    kinds = Counter((h.kind, h.role) for p in profiles.values() for h in p.held)
    return {"judgments": len(profiles), "empty": {"count": len(empty), "doc_ids": empty},
            "values": {f"{k}/{r}": n for (k, r), n in sorted(kinds.items())},
            "judgments_with": {k: sum(1 for p in profiles.values() if p.values(k))
                               for k in ("provision", "evidence", "party", "boundary")},
            "judgments_with_decided_provision": sum(
                1 for p in profiles.values() if p.values("provision", "decided")),
            "seconds": round(seconds, 1)}


def run_holdings(documents: Path, metadata: Path, out: Path, gold: Path | None,
                 choice: Path) -> dict:
    """Every profile (``out/profiles.jsonl``) and the summary; its accuracy where labels are."""
    started = time.perf_counter()
    texts, acts, scorer = _texts(documents), _acts(metadata), read_scorer(choice)
    profiles = {}
    out.mkdir(parents=True, exist_ok=True)
    with (out / "profiles.jsonl").open("w", encoding="utf-8") as handle:
        for doc in tqdm(sorted(texts, key=natural_key), desc="holding profiles", unit="judgment"):
            profiles[doc] = profile(doc, texts[doc], acts.get(doc, ()), scorer)
            handle.write(json.dumps(profiles[doc].to_json(), sort_keys=True) + "\n")
    found = summary(profiles, time.perf_counter() - started)
    if gold is None or not Path(gold).is_file():
        return found
    labels = read_gold(gold)
    labellers = sorted({g["labeller"] for g in labels})
    first = {d: profile(d, texts[d], acts.get(d, ())) for d in {g["doc_id"] for g in labels}}
    report = {"labeller": "; ".join(labellers), "first_rule": accuracy(first, labels)}
    if scorer is not None:
        chosen = yaml.safe_load(Path(choice).read_text(encoding="utf-8"))
        test = chosen["test"]
        report["first_rule_test"] = accuracy(first, labels, test)
        report["learned_test"] = accuracy(profiles, labels, test, scorer.threshold)
        report["learned_precise_test"] = accuracy(profiles, labels, test, scorer.precise)
    found["accuracy"] = report
    found["seconds"] = round(time.perf_counter() - started, 1)
    return found

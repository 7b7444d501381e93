"""Entity tags of the fact sheets' texts (the ``factsheets`` stage): every AILA query whole and
the facts section of a seeded sample of judgments, written to ``entities.jsonl`` beside the
sheets with offsets into the same text as the sheets' spans; counts per label and source, the
tagger's dev scores and the time per document for ``metrics/factsheets.json``."""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.ingest.run import read_documents
from countercase.ner.entities import EntityTag, EntityTagger

log = logging.getLogger(__name__)
BATCH = 8  # texts tagged together


def tagger_dev_scores(model_dir: Path) -> dict | None:
    """The dev figures ``train-ner`` stored with the model (as in metrics/ner.json)."""
    path = Path(model_dir) / "training.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    return {"micro": report["dev"]["micro"], "bar": report["bar"],
            "f1": {k: v["f1"] for k, v in report["dev"].items() if k != "micro"}}


def _facts_spans(sheets_path: Path) -> dict[str, tuple[int, int]]:
    spans = {}
    with sheets_path.open(encoding="utf-8") as handle:
        for line in handle:
            sheet = json.loads(line)
            spans[sheet["case_id"]] = (sheet["facts_span"]["start"], sheet["facts_span"]["end"])
    return spans


def _shift(tags: list[EntityTag], offset: int) -> list[dict]:
    return [{**t.to_dict(), "start": t.start + offset, "end": t.end + offset} for t in tags]


def tag_sheet_texts(out: Path, topics: dict[str, str], documents: Path, model_dir: Path | None,
                    n_judgments: int, seed: int, threads: int = 2) -> dict[str, Any]:
    """Tag the queries and ``n_judgments`` sampled judgments' facts (all when negative)."""
    tagger = EntityTagger(model_dir, threads)
    facts = _facts_spans(out / "judgments.jsonl")
    ids = sorted(facts)
    if 0 <= n_judgments < len(ids):
        ids = sorted(random.Random(seed).sample(ids, n_judgments))
    chosen = set(ids)
    texts: list[tuple[str, str, str, int]] = [(qid, "query", text, 0)
                                              for qid, text in sorted(topics.items())]
    for doc in read_documents(documents):
        if doc.doc_id in chosen:
            start, end = facts[doc.doc_id]
            texts.append((doc.doc_id, "judgment", doc.text[start:end], start))
    started = time.perf_counter()
    records = []
    for b in tqdm(range(0, len(texts), BATCH), desc="entity tags", unit="batch"):
        batch = texts[b:b + BATCH]
        for (case_id, source, _, offset), tags in zip(batch, tagger.tag_many([t[2] for t in batch])):
            records.append({"case_id": case_id, "source": source, "tags": _shift(tags, offset)})
    seconds = time.perf_counter() - started
    records.sort(key=lambda r: (r["source"], r["case_id"]))
    with (out / "entities.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    labels = Counter(t["label"] for r in records for t in r["tags"])
    sources = Counter(f'{t["label"]}:{t["source"]}' for r in records for t in r["tags"])
    agreed = Counter(t["label"] for r in records for t in r["tags"]
                     if t["source"] == "ner" and t["agrees"])
    words = sum(len(t[2].split()) for t in texts)
    return {"entities": {"tagger": "ner" if tagger.ner else "rules only (no trained model)",
                         "n_queries": sum(r["source"] == "query" for r in records),
                         "n_judgments": sum(r["source"] == "judgment" for r in records),
                         "per_label": dict(sorted(labels.items())),
                         "per_label_and_source": dict(sorted(sources.items())),
                         "ner_agreeing_with_rules": dict(sorted(agreed.items())),
                         "ner_dev": tagger_dev_scores(model_dir) if tagger.ner else None},
            "timing": {"entity_seconds": round(seconds, 2),
                       "entity_ms_per_document": round(1000 * seconds / max(1, len(records)), 1),
                       "entity_ms_per_word": round(1000 * seconds / max(1, words), 3)}}

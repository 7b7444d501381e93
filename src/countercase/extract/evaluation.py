"""The ``extract_eval`` stage: how good is what ``extract`` produced, measured against annotations.

- metadata fields against the hand-labelled gold sample (``data/gold``), per field;
- section segmentation against the two rhetorical-role annotation sets, per section type,
  for the plan's rule (headings + the first-20-percent fallback) and for the final rules;
- the counts of the extract stage, so that one metrics file tells the whole story.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from countercase.config import ExtractParams
from countercase.extract.accuracy import load_gold, metadata_accuracy
from countercase.extract.rhetorical_roles import load_all, segmentation_report


def _plain(value: Any) -> Any:
    """Parquet values as the scorer expects them: lists for arrays, None for missing."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return list(value.tolist()) if getattr(value, "ndim", 0) else value.tolist()
    if isinstance(value, dict):
        return value
    return None if pd.isna(value) else value


def _records(metadata: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["doc_id"]: {k: _plain(v) for k, v in row.items()}
            for row in metadata.to_dict(orient="records")}


def evaluate_extraction(metadata_path: Path, summary_path: Path, gold_dir: Path,
                        rhetorical_roles_dir: Path, params: ExtractParams) -> dict[str, Any]:
    gold_files = sorted(Path(gold_dir).glob("metadata_gold_*.jsonl"))
    if not gold_files:
        raise FileNotFoundError(f"no metadata_gold_*.jsonl in {gold_dir}")
    gold = load_gold(gold_files)
    predicted = {k: v for k, v in _records(pd.read_parquet(metadata_path)).items() if k in gold}
    metadata = metadata_accuracy(gold, predicted)
    # The gold lists the judges the text shows; a linked Supreme Court record names the whole
    # bench. Scoring the text-derived names alone separates the two effects.
    text_only = {k: {**v, "judge_names": [v["author_judge"]] if v.get("author_judge") else []}
                 if (v.get("sources") or {}).get("judge_names") == "sc_metadata" else v
                 for k, v in predicted.items()}
    metadata["judges_text_only"] = metadata_accuracy(gold, text_only)["judges"]
    return {
        "extract": json.loads(Path(summary_path).read_text(encoding="utf-8")),
        "metadata": metadata,
        "segmentation": segmentation_report(load_all(rhetorical_roles_dir)),
        "chunking": {"encoder": params.encoder, "chunk_size": params.chunk_size,
                     "chunk_overlap": params.chunk_overlap},
    }

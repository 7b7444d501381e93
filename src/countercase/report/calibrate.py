"""How long each stage will take on this CPU: a short calibration, and a prediction from it.

A stage's cost is bound by one kind of work (:data:`STAGE_UNITS`): encoding passages, training
steps of a MiniLM, scoring cross-encoder pairs, Lucene searches, or plain Python. ``measure``
times one unit of each kind here (:data:`UNITS`; sizes and steps fixed, so nothing a stage makes
depends on it) and files them under this machine's CPU class in ``metrics/timing/calibration.json``.
``predict`` scales each stage's seconds measured on a reference class by the ratio of this
class's unit to the reference's::

    predicted(stage, here) = seconds(stage, reference) * unit(kind, here) / unit(kind, reference)

A stage measured on this class is its own reference (ratio 1). A class whose units no one
measured has units inferred from the stages both classes ran (``"source": "inferred"``, with the
stages named); a measurement replaces them. ``metrics/timing/stages_by_cpu.json`` holds each
stage's last seconds per class (:func:`countercase.report.stage_times.record` writes it).

``make repro`` runs ``predict`` before ``dvc repro`` (``measure`` first where this class has no
units). A calibration that cannot run (no Java, no model) names what is missing and the
prediction goes on without that unit; a stage whose unit is missing is not predicted.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from countercase import layout
from countercase.datasets import aila
from countercase.index.bm25 import Bm25Searcher, build_bm25_index
from countercase.runtime.cpu import cpu_class
from countercase.runtime.models import MINILM, encoder_dir, offline

log = logging.getLogger(__name__)

CALIBRATION = layout.timing("calibration")
STAGES_BY_CPU = layout.timing("stages_by_cpu")
PREDICTION = Path("data/interim/repro_prediction.json")  # read by report.repro_clock finish

# the kind of work that bounds each stage's time
STAGE_UNITS = {
    "ingest": "python", "extract": "python", "extract_eval": "python", "adjacency": "python",
    "citations": "python", "regress": "python", "llm_check": "python", "explain": "python",
    "topology": "python", "rerank_llm": "python", "llm_replay": "python",
    "explore_bench": "python", "notebooks": "python", "paper": "python", "factsheets": "python",
    "train_ner": "train_step", "train_reranker": "train_step", "train_biencoder": "train_step",
    "embed": "encoder", "embed_ft": "encoder",
    "latency": "cross_encoder", "train_ltr": "cross_encoder", "evaluate": "cross_encoder",
    "evaluate_ft": "cross_encoder",
    "index": "lucene", "index_facts": "lucene", "tune": "lucene", "tune_ft": "lucene",
    "leakage": "lucene", "perturb": "lucene",
    "validity_v2_rerun": "lucene", "regress_ft": "python",
    "holdings": "python", "targets": "python", "validity_v3": "lucene",
    "results": "python", "chunkings": "lucene",
}
_PART = re.compile(r"_part\d+$")  # a part stage (countercase.dag.stages) does its stage's work


def unit_of(stage: str) -> str | None:
    """The kind of work that bounds ``stage`` (a part's: its stage's)."""
    return STAGE_UNITS.get(stage) or STAGE_UNITS.get(_PART.sub("", stage))

# torch units, each timed in a fresh interpreter on 2 threads: seconds per batch (median of 3)
_TORCH = """
import statistics, time, torch
from transformers import AutoModel, AutoModelForSequenceClassification, AutoModelForTokenClassification
torch.manual_seed(0)
torch.set_num_threads(2)
kind, backbone = {kind!r}, {backbone!r}
if kind == "train_step":  # a train_ner step: 16 windows of 128 word pieces, embeddings frozen
    model = AutoModelForTokenClassification.from_pretrained(backbone, num_labels=29)
    model.get_input_embeddings().weight.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], 1e-4)
    ids, labels = torch.randint(1000, 30000, (16, 128)), torch.randint(0, 29, (16, 128))
    def unit():
        model(input_ids=ids, labels=labels).loss.backward(); opt.step(); opt.zero_grad()
elif kind == "encoder":  # an embed batch: 32 passages of 128 word pieces
    model = AutoModel.from_pretrained(backbone).eval()
    ids = torch.randint(1000, 30000, (32, 128))
    def unit():
        with torch.inference_mode():
            model(input_ids=ids)
else:  # a reranking batch: 16 pairs of 256 word pieces
    model = AutoModelForSequenceClassification.from_pretrained(backbone, num_labels=1).eval()
    ids = torch.randint(1000, 30000, (16, 256))
    def unit():
        with torch.inference_mode():
            model(input_ids=ids)
unit()
times = []
for _ in range(3):
    t = time.perf_counter(); unit(); times.append(time.perf_counter() - t)
print(statistics.median(times))
"""


def _torch_unit(kind: str) -> float:
    offline()
    code = _TORCH.format(kind=kind, backbone=str(encoder_dir(MINILM)))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[-1])


def _lucene_unit(n_docs: int = 300, n_queries: int = 20) -> float:
    """Seconds per BM25 search of a whole AILA judgment's first 3,000 characters, on an index
    of the first ``n_docs`` judgments (built here, in a temporary folder)."""
    docs = []
    for doc_id, text in aila.casedocs(layout.AILA):
        docs.append({"id": doc_id, "contents": text})
        if len(docs) == n_docs:
            break
    with tempfile.TemporaryDirectory() as tmp:
        index = build_bm25_index(docs, Path(tmp) / "index", threads=1)
        with Bm25Searcher(index) as searcher:
            queries = [d["contents"][:3000] for d in docs[:n_queries]]
            searcher.search(queries[0], k=100)
            started = time.perf_counter()
            for query in queries:
                searcher.search(query, k=100)
            return (time.perf_counter() - started) / n_queries


def _python_unit(repeats: int = 3) -> float:
    """Seconds to tokenise and count the words of 200 KB of judgment text with regular
    expressions (what ingest, extract and the fact sheets spend their time on)."""
    text = (layout.AILA_QUERIES.read_text(encoding="utf-8", errors="replace") * 2)[:200_000]
    pattern = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?")
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        counts: dict[str, int] = {}
        for _ in range(5):
            for word in pattern.findall(text):
                key = word.lower()
                counts[key] = counts.get(key, 0) + 1
        times.append(time.perf_counter() - started)
    return statistics.median(times)


UNITS = {"encoder": lambda: _torch_unit("encoder"),
         "train_step": lambda: _torch_unit("train_step"),
         "cross_encoder": lambda: _torch_unit("cross_encoder"),
         "lucene": _lucene_unit, "python": _python_unit}


def read_json(path: Path) -> dict:
    """The JSON object at ``path``, or {} where it is missing, unreadable or not an object."""
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write(path: Path, data: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def measure(kinds: list[str] | None = None, path: Path = CALIBRATION) -> dict:
    """Time each unit here and file them under :func:`cpu_class`; a unit that cannot run is
    logged with what it lacks and left out."""
    units, missing = {}, {}
    for kind in kinds or list(UNITS):
        try:
            units[kind] = round(UNITS[kind](), 5)
            log.info("%s: %.4f s", kind, units[kind])
        except (OSError, ImportError, RuntimeError, subprocess.CalledProcessError,
                ValueError) as error:
            last = (str(error).strip().splitlines() or [""])[-1]
            missing[kind] = f"{type(error).__name__}: {last}"
            log.warning("the %s unit cannot run here (%s); its stages are not predicted",
                        kind, missing[kind])
    table = read_json(path)
    entry = {"units": units, "source": "measured",
             "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if missing:
        entry["missing"] = missing
    table[cpu_class()] = entry
    _write(path, table)
    return entry


def predict(here: str, calibration: dict, stages_by_cpu: dict) -> dict:
    """Each stage's predicted seconds on class ``here``, with the class it was scaled from."""
    mine = calibration.get(here, {}).get("units", {})
    out = {}
    named = dict.fromkeys([*STAGE_UNITS, *(s for seconds in stages_by_cpu.values() for s in seconds)])
    for stage, kind in ((s, unit_of(s)) for s in named):
        if kind is None:
            continue
        if stage in stages_by_cpu.get(here, {}):
            out[stage] = {"seconds": stages_by_cpu[here][stage], "from": here}
            continue
        for ref, seconds in sorted(stages_by_cpu.items()):
            theirs = calibration.get(ref, {}).get("units", {})
            if stage in seconds and kind in mine and kind in theirs:
                out[stage] = {"seconds": round(seconds[stage] * mine[kind] / theirs[kind], 1),
                              "from": ref}
                break
    return out


# a kind no stage pairs up borrows the ratio of the kind that does the same arithmetic
# (scoring pairs is a MiniLM forward pass, as encoding passages is)
SAME_WORK = {"cross_encoder": "encoder"}


def infer(target: str, reference: str, calibration: dict, stages_by_cpu: dict) -> dict:
    """Units for class ``target`` from ``reference``'s, scaled by the median ratio of the
    stages of each kind both classes ran (:data:`SAME_WORK` where no stage of a kind pairs up;
    a kind still without a pair is left out)."""
    theirs = calibration[reference]["units"]
    a, b = stages_by_cpu.get(target, {}), stages_by_cpu.get(reference, {})
    ratios, evidence = {}, {}
    for kind in theirs:
        pairs = [s for s, k in STAGE_UNITS.items() if k == kind and s in a and s in b and b[s]]
        if pairs:
            ratios[kind] = statistics.median(a[s] / b[s] for s in pairs)
            evidence[kind] = sorted(pairs)
    for kind, other in SAME_WORK.items():
        if kind in theirs and kind not in ratios and other in ratios:
            ratios[kind] = ratios[other]
            evidence[kind] = [f"as {other}"]
    return {"units": {k: round(theirs[k] * r, 5) for k, r in ratios.items()},
            "source": "inferred", "from": reference, "stages": evidence}


def report(predicted: dict, default_stages: list[str]) -> str:
    lines, total = [], 0.0
    for stage in default_stages:
        found = predicted.get(stage)
        if found is None:
            lines.append(f"  {stage:<16} no prediction (no reference measured it)")
            continue
        total += found["seconds"]
        lines.append(f"  {stage:<16} {found['seconds'] / 60:6.1f} min  (from {found['from']})")
    missing = sum(1 for stage in default_stages if stage not in predicted)
    lines.append(f"  {'total':<16} {total / 60:6.1f} min, one stage at a time"
                 + (f", {missing} stages unpredicted" if missing else ""))
    return "\n".join(lines)


def class_table(calibration: dict, stages_by_cpu: dict, stages: list[str]) -> str:
    """Each stage's minutes on each CPU class, in Markdown: measured, or predicted from another
    class (*italic*, with ~); the total is one stage at a time."""
    classes = sorted(set(stages_by_cpu) | set(calibration))
    predicted = {c: predict(c, calibration, stages_by_cpu) for c in classes}
    head = "| stage | " + " | ".join(f"{c} (min)" for c in classes) + " |"
    rows = [head, "|---|" + "---:|" * len(classes)]
    totals = dict.fromkeys(classes, 0.0)
    for stage in stages:
        cells = []
        for c in classes:
            found = predicted[c].get(stage)
            if found is None:
                cells.append("-")
                continue
            totals[c] += found["seconds"]
            minutes = f"{found['seconds'] / 60:.1f}"
            cells.append(minutes if found["from"] == c else f"*~{minutes}*")
        rows.append(f"| `{stage}` | " + " | ".join(cells) + " |")
    rows.append("| total | " + " | ".join(f"{totals[c] / 60:.0f}" for c in classes) + " |")
    sources = "; ".join(f"{c}: units {calibration[c].get('source', 'measured')}"
                        for c in classes if c in calibration)
    return "\n".join(rows) + f"\n\nCalibration units: {sources}.\n"


def _default_stages() -> list[str]:
    return list(yaml.safe_load(layout.PIPELINE.read_text(encoding="utf-8"))["stages"])


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("measure", "predict"))
    parser.add_argument("--unit", action="append", choices=list(UNITS),
                        help="measure only this unit (repeatable)")
    parser.add_argument("--out", type=Path, default=PREDICTION,
                        help="where the prediction is kept for make repro's record")
    args = parser.parse_args(argv)
    here = cpu_class()
    if args.action == "measure" or here not in read_json(CALIBRATION):
        measure(args.unit)
    predicted = predict(here, read_json(CALIBRATION), read_json(STAGES_BY_CPU))
    stages = _default_stages()
    print(f"predicted stage times on {here}:\n{report(predicted, stages)}")
    _write(args.out, {"cpu_class": here, "stages": {s: predicted[s] for s in stages
                                                    if s in predicted},
                      "total_s": round(sum(predicted[s]["seconds"] for s in stages
                                           if s in predicted), 1),
                      "unpredicted": [s for s in stages if s not in predicted]})


if __name__ == "__main__":
    main()

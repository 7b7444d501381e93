"""Stage ``evaluate`` in parts (``parts`` in ``countercase/dag/stages.yaml``): the test queries
of every collection, in order, are cut into N contiguous shares; part ``i`` ranks its share with
every system and keeps the runs (JSON, so the scores come back exactly), the seconds and the
queries' corpus copies in :func:`countercase.layout.part` of the stage's folder; the stage then
joins the runs and scores them as one pass would. A system ranks each query on its own, so the
joined runs are one pass's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from countercase import layout
from countercase.datasets import Dataset
from countercase.errors import PartMissing


def shares(datasets: list[Dataset], parts: int) -> list[dict[str, tuple[str, ...]]]:
    """Each part's queries, per collection: contiguous shares of every (collection, query)."""
    units = [(d.collection, q) for d in datasets for q in d.qids]
    found = []
    for i in range(1, parts + 1):
        share: dict[str, list[str]] = {}
        for collection, qid in units[(i - 1) * len(units) // parts:i * len(units) // parts]:
            share.setdefault(collection, []).append(qid)
        found.append({c: tuple(q) for c, q in share.items()})
    return found


def _file(out: Path, part: tuple[int, int], collection: str) -> Path:
    return layout.part(out, *part) / f"{collection}.json"


def write(out: Path, part: tuple[int, int], dataset: Dataset, runs: dict, seconds: dict,
          overlaps: dict) -> None:
    """Part ``part``'s runs of ``dataset`` (its share of a collection)."""
    path = _file(out, part, dataset.collection)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"qids": list(dataset.qids), "runs": runs, "seconds": seconds,
                                "overlaps": overlaps}), encoding="utf-8")


def joined(out: Path, parts: int, dataset: Dataset, datasets: list[Dataset]) -> dict[str, Any]:
    """The runs of ``dataset``'s collection joined from the parts that ranked its queries
    (``datasets``: every collection the stage evaluates, which fix the shares), their seconds
    summed, their corpus copies together."""
    runs: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    overlaps: dict = {}
    for i, share in enumerate(shares(datasets, parts), 1):
        if dataset.collection not in share:
            continue
        path = _file(out, (i, parts), dataset.collection)
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = {}
        if tuple(found.get("qids", ())) != share[dataset.collection]:
            raise PartMissing(f"part {i} of {parts} ({path}) is missing or holds other queries "
                              f"of {dataset.collection}: run `countercase evaluate --part "
                              f"{i}/{parts}` first")
        for name, run in found["runs"].items():
            runs.setdefault(name, {}).update(
                {qid: [(doc, score) for doc, score in ranking] for qid, ranking in run.items()})
        for name, value in found["seconds"].items():
            seconds[name] = round(seconds.get(name, 0.0) + value, 2)
        overlaps |= found["overlaps"]
    return {"runs": runs, "seconds": seconds, "overlaps": overlaps}

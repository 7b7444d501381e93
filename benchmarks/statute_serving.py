"""Which system serves statutes, by configs/statute_serving_rule.yaml (committed before this
ran): each candidate on AILA Task 2's tuning queries (AILA_Q1..Q10), its MAP and its bootstrap
bound against the system that serves statutes today.

``python benchmarks/statute_serving.py --out metrics/statute_serving.json`` after stage
train_ltr (ltr_bridge reads its model). It decides nothing in the pipeline: the served statute
system stays what retrieve.served names until a stage writes a choice.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import yaml

from countercase import layout
from countercase.config import load_params
from countercase.datasets import load
from countercase.evaluate.run import experiment
from countercase.ltr.serving import decide_kind
from countercase.retrieve.choices import Choices
from countercase.retrieve.load import IndexPaths
from countercase.retrieve.registry import system

RULE = Path("configs/statute_serving_rule.yaml")


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=layout.metrics("statute_serving"))
    args = parser.parse_args(argv)
    params = load_params()
    rule = yaml.safe_load(RULE.read_text(encoding="utf-8"))
    tuning = load("aila2019/task2/tuning", layout.AILA)
    result, _, _, _ = experiment(tuning, [system(n) for n in rule["candidates"]], IndexPaths(),
                                 params.retrieve, params.evaluate, None, choices=Choices(),
                                 citations=layout.CITATIONS)
    scores = {name: table["MAP"] for name, table in result.per_query.items()}
    found = decide_kind(scores, rule, params.seed)
    test = json.loads(layout.metrics("retrieval").read_text())["aila2019-task2"]
    report = {"rule": str(RULE), "tuned_on": tuning.id, **found,
              "test_MAP_exploratory": {n: test.get(n, {}).get("MAP") for n in rule["candidates"]}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

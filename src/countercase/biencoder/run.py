"""Stage ``train_biencoder``: the dense encoder fine-tuned on the corpus's own citations.

The pairs are the reranker stage's precedent groups (``groups.jsonl``: mined under the leakage
guard and the date rule, so no AILA query's text and no later judgment is in them), with the
citation collection's masked facts as the query text, so that training reads queries masked as
AILA's are. Which citing judgments train:

- the citation collection's **held-out** half never does (it reports the system);
- its **tuning** half is cut once by a seeded shuffle (:mod:`countercase.training.splits`, the cut the
  reranker is chosen by too): ``dev_share`` of its queries are the
  *dev* queries, on which checkpoints are chosen and, later, the fine-tuned encoder's fusion
  weight; the rest train;
- a citing judgment that is not a query of the collection (a near-copy, no known year, facts too
  short) does not train either: its query could not be masked as the collection's are.

The dev score: each dev query ranks the pool of every dev pair's passages (its positives and
hard negatives, one pool for all) by cosine, a judgment at its best passage; MAP, with the
collection's qrels as the judgments.
The stage fails (:mod:`countercase.training.learning_check`) when the loss did not fall or the
chosen checkpoint's dev MAP is not ``min_dev_gain`` above the untrained encoder's.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from countercase.biencoder.train import Pair, train
from countercase.config import Params
from countercase.datasets.citations import Citations, read_citations
from countercase.datasets.ids import natural_key
from countercase.errors import CountercaseError
from countercase.index.encoders import embed
from countercase.runtime.models import encoder_dir
from countercase.training.learning_check import NotLearnedError, check_fit
from countercase.training.splits import tuning_split

log = logging.getLogger(__name__)


class GroupsError(CountercaseError, ValueError):
    """The mined groups file is not what the train_reranker stage writes."""


def read_pairs(groups: Path, citations: Citations, queries: set[str]) -> list[Pair]:
    """Pairs of the precedent groups whose citing judgment is one of ``queries``, the query
    text masked (the collection's topic), the group's first negative as the hard one."""
    pairs = []
    with groups.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                g = json.loads(line)
                if g["task"] == "precedents" and g["query_doc"] in queries and g["negatives"]:
                    pairs.append(Pair(g["query_doc"], citations.topics[g["query_doc"]],
                                      g["positive_doc"], g["positive"], g["negative_docs"][0],
                                      g["negatives"][0]))
            except (ValueError, KeyError, TypeError, IndexError) as error:
                raise GroupsError(f"{groups}, line {number}: not a group as the train_reranker "
                                  f"stage writes them ({type(error).__name__}: {error}); run "
                                  "`dvc repro train_reranker`") from None
    return pairs


def pool_map(embed, pairs: list[Pair], citations: Citations) -> float:
    """MAP of the dev queries over the pool of every dev passage (module docstring)."""
    passages = sorted({(p.positive_doc, p.positive) for p in pairs}
                      | {(p.negative_doc, p.negative) for p in pairs})
    qids = sorted({p.query_doc for p in pairs}, key=natural_key)
    vectors = embed([text for _, text in passages])
    queries = embed([citations.topics[q] for q in qids])
    docs = [doc for doc, _ in passages]
    scores = []
    for qid, vector in zip(qids, queries):
        relevant = citations.qrels.get(qid, {})
        ranked: list[str] = []  # judgments, each at its best passage (max pooling)
        for row in np.argsort(-(vectors @ vector), kind="stable"):
            if docs[row] not in ranked:
                ranked.append(docs[row])
        hits, total = 0, 0.0
        for rank, doc in enumerate(ranked, start=1):
            if relevant.get(doc, 0) > 0:
                hits += 1
                total += hits / rank
        n_relevant = sum(relevant.get(d, 0) > 0 for d in ranked)
        scores.append(total / n_relevant if n_relevant else 0.0)
    return round(float(np.mean(scores)), 4)


def resume_inputs(params: Params, dev_pairs: list[Pair]) -> str:
    """The stage's inputs besides its training pairs, for :mod:`countercase.training.resume`: its own
    parameters (dvc.yaml's list for the stage: a change to another section keeps a saved state)
    and the dev pairs (the trainer adds its version)."""
    return json.dumps({
        "params": {"seed": params.seed, "encoder": params.index.encoder,
                   "biencoder": params.biencoder.model_dump(mode="json",
                                                            exclude={"resume_every"})},
        "dev": [dataclasses.asdict(pair) for pair in dev_pairs]})


def run_train_biencoder(params: Params, groups: Path, citations_dir: Path,
                        out: Path, resume_dir: Path | None = None) -> dict[str, Any]:
    """The stage. ``resume_dir`` keeps the training state of an interrupted run (cleared when
    the stage is done)."""
    p = params.biencoder
    started = time.perf_counter()
    citations = read_citations(citations_dir)
    train_q, dev_q = tuning_split(citations, p.dev_share, params.seed)
    train_pairs = read_pairs(groups, citations, set(train_q))
    dev_pairs = read_pairs(groups, citations, set(dev_q))
    if len(train_pairs) < 2 or not dev_pairs:
        raise NotLearnedError(f"train_biencoder: {len(train_pairs)} training and {len(dev_pairs)} "
                              f"dev pairs in {groups}: too few to train (stage train_reranker "
                              "mines them)")
    links = set(citations.links)
    out.mkdir(parents=True, exist_ok=True)
    (out / "split.json").write_text(json.dumps(
        {"rule": f"the tuning half's queries in a seeded shuffle (seed {params.seed}): the first "
                 f"{p.dev_share:.0%} are dev, the rest train; the held-out half is never read",
         "train": train_q, "dev": dev_q}, indent=1) + "\n", encoding="utf-8")

    def validate(model) -> dict[str, float]:
        return {"score": pool_map(lambda texts: embed(model, texts, show_progress=False,
                                                      precision="float32"),
                                  dev_pairs, citations)}

    base = encoder_dir(params.index.encoder)
    inputs = resume_inputs(params, dev_pairs)
    result = train(train_pairs, base, out / "model", lambda a, b: (a, b) in links,
                   seed=params.seed, epochs=p.epochs, batch_size=p.batch_size,
                   learning_rate=p.learning_rate, scale=p.scale, max_length=p.max_length,
                   max_steps=p.max_steps, curve_at=p.curve_at, threads=p.threads,
                   log_every=p.log_every, validate=validate,
                   resume=(resume_dir, inputs) if resume_dir else None,
                   resume_every=p.resume_every, device=params.device)
    try:
        untrained, chosen = check_fit(
            "train_biencoder", result, p.min_loss_drop,
            "the chosen checkpoint's dev MAP gain over the untrained encoder", p.min_dev_gain,
            out / "model")
    finally:
        if resume_dir:  # done, learned or not: a rerun starts afresh
            shutil.rmtree(resume_dir, ignore_errors=True)
    return {"base": params.index.encoder,
            "queries": {"train": len(train_q), "dev": len(dev_q),
                        "heldout_never_read": len(citations.qids("heldout"))},
            "pairs": {"train": len(train_pairs), "dev": len(dev_pairs)},
            "dev_pool_passages": len({(x.positive_doc, x.positive) for x in dev_pairs}
                                     | {(x.negative_doc, x.negative) for x in dev_pairs}),
            "dev_MAP": {"untrained": untrained, "chosen": chosen},
            "training": result.as_dict(),
            "seconds": round(time.perf_counter() - started, 1)}

"""Fine-tuning of the dense encoder (all-MiniLM-L6-v2, as packaged) on citation pairs.

The project's one training loop (:mod:`countercase.training.loop`) over the
sentence-transformers modules (mean pooling and normalisation
included, so the saved folder embeds exactly as it was trained). Each step takes ``batch_size``
pairs (a citing judgment's masked facts, a passage of a judgment it cites) with each pair's hard
negative (a passage of a judgment it does not cite, mined by the reranker stage) and scores
every query against every passage of the step: the in-batch softmax of sentence-transformers'
``MultipleNegativesRankingLoss`` (cosine times ``scale``), with the pair's own passage as the
target. A passage of another pair that the query's judgment also cites is not a negative: it is
masked out of that query's softmax (two pairs of one citing judgment can share a step).

The budget is in steps (``max_steps``; 0: every epoch), so a seed trains one model on any
machine; checkpoints at the fractions ``curve_at`` of the planned steps are scored by
``validate`` and the best one is kept. An interrupted run goes on from its last saved state
(``resume``: :mod:`countercase.training.resume`) to the model an uninterrupted run trains.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from countercase.runtime.device import resolve
from countercase.training.loop import Trainee, TrainLog, fit
from countercase.training.resume import Resume, resume_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pair:
    query_doc: str
    query: str
    positive_doc: str
    positive: str
    negative_doc: str
    negative: str


# bump when a change makes a saved state of the earlier code untrue (the batches, the loss)
VERSION = "biencoder-2"


@dataclass
class TrainResult(TrainLog):
    steps_planned: int = 0
    pairs: int = 0

    def counts(self) -> dict:
        return {"steps_planned": self.steps_planned, "pairs": self.pairs,
                "resumed_after_steps": self.resumed_at,
                "seconds_in_earlier_runs": round(self.seconds_before, 1)}


def in_batch_mask(batch: Sequence[Pair], cites: Callable[[str, str], bool]):
    """Boolean (queries x 2 * queries) tensor: True where a passage of the step is a negative for
    a query (the columns: the positives, then the hard negatives). A passage of a judgment the
    query's judgment cites is not, save the query's own positive (its target)."""
    import torch

    docs = [p.positive_doc for p in batch] + [p.negative_doc for p in batch]
    keep = torch.ones(len(batch), len(docs), dtype=torch.bool)
    for i, pair in enumerate(batch):
        for j, doc in enumerate(docs):
            if j != i and (doc == pair.positive_doc or cites(pair.query_doc, doc)):
                keep[i, j] = False
    return keep


def batch_loss(model, batch: Sequence[Pair], cites: Callable[[str, str], bool],
               scale: float):
    """The in-batch softmax loss of one step (module docstring)."""
    import torch

    def embedded(texts: list[str]):
        features = model.preprocess(texts)
        return model({k: v.to(model.device) if hasattr(v, "to") else v
                      for k, v in features.items()})["sentence_embedding"]

    queries = embedded([p.query for p in batch])
    passages = embedded([p.positive for p in batch] + [p.negative for p in batch])
    scores = scale * queries @ passages.T
    mask = in_batch_mask(batch, cites).to(scores.device)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nn.functional.cross_entropy(
        scores.float(), torch.arange(len(batch), device=scores.device))


def load_encoder_for_training(path: Path, seed: int, max_length: int, device: str = "auto"):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(seed)
    model = SentenceTransformer(str(path), device=resolve(device), local_files_only=True)
    model.max_seq_length = max_length
    return model


def train(pairs: Sequence[Pair], base: Path, out_dir: Path, cites: Callable[[str, str], bool],
          *, seed: int, epochs: int = 1, batch_size: int = 16, learning_rate: float = 2e-5,
          warmup_fraction: float = 0.1, scale: float = 20.0, max_length: int = 256,
          max_steps: int = 0, curve_at: Sequence[float] = (0.5, 1.0),
          threads: int = 2, log_every: int = 10, validate: Callable | None = None,
          resume: tuple[Path, str] | None = None, resume_every: int = 0,
          device: str = "auto") -> TrainResult:
    """Train from the sentence-transformers folder ``base``
    (:func:`countercase.training.loop.fit`); the best checkpoint by ``validate(model) -> dict``
    (key ``"score"``, higher is better; also called on the untrained model) is saved to
    ``out_dir`` (without ``validate``: the last).

    ``resume`` is (folder, the caller's key of its inputs): a run that finds a state of the same
    inputs and settings goes on from it (the caller clears it once its stage is done)."""
    import torch

    torch.set_num_threads(threads)
    random.seed(seed)
    model = load_encoder_for_training(base, seed, max_length, device)
    rng = random.Random(seed)
    batches: list[list[Pair]] = []
    for _ in range(epochs):
        order = list(pairs)
        rng.shuffle(order)
        batches += [order[i:i + batch_size] for i in range(0, len(order), batch_size)
                    if len(order[i:i + batch_size]) > 1]  # a lone pair has no in-batch negative
    saved = None
    if resume is not None:
        folder, caller = resume
        saved = Resume(folder, resume_key(
            caller, (dataclasses.asdict(pair) for pair in pairs), base=str(base), seed=seed,
            epochs=epochs, batch_size=batch_size,
            learning_rate=learning_rate, warmup_fraction=warmup_fraction, scale=scale,
            max_length=max_length, max_steps=max_steps, curve_at=list(curve_at),
            log_every=log_every, version=VERSION))

    def checkpoint(step: int) -> dict:
        if validate is None:
            return {}
        model.eval()
        return validate(model)

    trainee = Trainee(model, lambda batch: batch_loss(model, batch, cites, scale),
                      lambda folder: model.save(str(folder)), checkpoint,
                      desc="train bi-encoder")
    return fit(trainee, batches, TrainResult(steps_planned=len(batches), pairs=len(pairs)),
               out_dir, learning_rate=learning_rate, warmup_fraction=warmup_fraction,
               max_steps=max_steps, curve_at=curve_at, log_every=log_every, saved=saved,
               resume_every=resume_every)

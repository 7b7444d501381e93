"""Training of the domain cross-encoder: the packaged all-MiniLM-L6-v2 with a one-logit head.

The project's one training loop (:mod:`countercase.training.loop`) over
:class:`~countercase.reranker.pairs.Group` s (no Hugging Face Trainer: fewer moving parts, exact
control of the seed, threads and the budget). Each step scores
``groups_per_step`` groups of (query, positive, negatives...) and takes the listwise softmax
cross-entropy with the positive as the target (the loss of MS MARCO cross-encoders trained with
hard negatives). One pass over the groups at most, in a seeded order; checkpoints are scored at
the fractions in ``curve_at`` of the pass (the learning curve) by ``validate``, and the best one
by the validation score is kept. The budget stops training early; what was seen is recorded.

A run of hours outlives a working session (at 512 word pieces on an AVX2 CPU the stage takes
longer than one), so the loop can save its whole state (weights, optimiser, schedule, the
random generator that draws dropout, the log and the best checkpoint so far) every
``resume_every`` steps to a folder outside the stage's outputs, and a later run with the same
key and groups goes on from there: the same steps in the same order, so the same model as an
uninterrupted run (a test).

The saved folder is a Hugging Face sequence-classification model with its tokenizer, so
sentence-transformers' ``CrossEncoder`` (:class:`~countercase.retrieve.rerank.CrossEncoderReranker`)
and the ONNX export read it as is.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from countercase.reranker.pairs import Group
from countercase.runtime.device import resolve
from countercase.runtime.models import MINILM, encoder_dir
from countercase.training.loop import Trainee, TrainLog, fit
from countercase.training.resume import Resume, resume_key

log = logging.getLogger(__name__)


def load_backbone(seed: int):
    """(tokenizer, model): all-MiniLM-L6-v2 with a fresh one-logit head drawn with ``seed``."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    path = encoder_dir(MINILM)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(path), num_labels=1, local_files_only=True)
    return tokenizer, model


def score_pairs(model, tokenizer, pairs: Sequence[tuple[str, str]], max_length: int,
                batch_size: int = 32) -> list[float]:
    """Logits of (query, passage) pairs, truncated as CrossEncoder truncates (longest first)."""
    import torch

    model.eval()
    out: list[float] = []
    with torch.inference_mode():
        for i in range(0, len(pairs), batch_size):
            batch = pairs[i:i + batch_size]
            enc = tokenizer([q for q, _ in batch], [p for _, p in batch], padding=True,
                            truncation="longest_first", max_length=max_length,
                            return_tensors="pt")
            out.extend(model(**enc.to(model.device)).logits[:, 0].tolist())
    return out


def group_loss(model, tokenizer, groups: Sequence[Group], max_length: int) -> float:
    """The mean listwise loss of ``groups`` (positive first) under ``model``, without training."""
    import torch

    model.eval()
    losses = []
    with torch.inference_mode():
        for g in groups:
            scores = score_pairs(model, tokenizer, [(g.query, p) for p in (g.positive, *g.negatives)],
                                 max_length)
            losses.append(float(torch.nn.functional.cross_entropy(
                torch.tensor([scores]), torch.zeros(1, dtype=torch.long))))
    return sum(losses) / len(losses)


# bump when a change makes a saved state of the earlier code untrue (the batches, the loss)
VERSION = "reranker-2"


@dataclass
class TrainResult(TrainLog):
    groups_seen: int = 0
    groups_total: int = 0

    def counts(self) -> dict:
        return {"groups_seen": self.groups_seen, "groups_total": self.groups_total,
                "resumed_after_steps": self.resumed_at}


def train(groups: Sequence[Group], out_dir: Path, *, seed: int, max_length: int = 256,
          groups_per_step: int = 4, learning_rate: float = 3e-5, warmup_fraction: float = 0.1,
          max_steps: int = 0, curve_at: Sequence[float] = (0.25, 0.5, 1.0),
          validate: Callable | None = None, threads: int = 2, log_every: int = 10,
          keep: Callable | None = None, resume: tuple[Path, str] | None = None,
          resume_every: int = 0, device: str = "auto") -> TrainResult:
    """Train on one seeded pass over ``groups`` (:func:`countercase.training.loop.fit`); the
    best checkpoint is saved to ``out_dir``.

    ``validate(model, tokenizer) -> dict`` with a ``"score"`` key (higher is better) is called
    on the untrained model (fraction 0) and at each fraction of ``curve_at`` reached (and where
    ``max_steps`` stops the pass). Without it the last model is kept.

    ``resume`` is (folder, the caller's key of its inputs): a run that finds a state of the same
    inputs goes on from it (the caller clears it once its stage is done).
    """
    import torch

    torch.set_num_threads(threads)
    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer, model = load_backbone(seed)
    model.to(resolve(device))  # params.yaml device: a GPU where torch sees one
    # the length it is trained at travels with the saved model: the reranker reads pairs at it
    tokenizer.model_max_length = max_length
    order = list(groups)
    random.Random(seed).shuffle(order)
    batches = [order[i:i + groups_per_step] for i in range(0, len(order), groups_per_step)]
    saved = None
    if resume is not None:
        folder, caller = resume
        saved = Resume(folder, resume_key(
            caller, (group.to_dict() for group in order), seed=seed, max_length=max_length,
            groups_per_step=groups_per_step, learning_rate=learning_rate,
            warmup_fraction=warmup_fraction, max_steps=max_steps, curve_at=list(curve_at),
            log_every=log_every, version=VERSION))

    def loss(batch: Sequence[Group]):
        queries = [g.query for g in batch for _ in range(1 + len(g.negatives))]
        passages = [p for g in batch for p in (g.positive, *g.negatives)]
        enc = tokenizer(queries, passages, padding=True, truncation="longest_first",
                        max_length=max_length, return_tensors="pt")
        logits = model(**enc.to(model.device)).logits[:, 0].view(len(batch), -1)
        return torch.nn.functional.cross_entropy(
            logits, torch.zeros(len(batch), dtype=torch.long, device=logits.device))

    def seen(step: int) -> int:
        return min(step * groups_per_step, len(order))

    def checkpoint(step: int) -> dict:
        return {"fraction_of_pairs": round(seen(step) / max(1, len(order)), 3),
                "groups_seen": seen(step),
                **(validate(model, tokenizer) if validate is not None else {})}

    def save(folder: Path) -> None:
        model.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))

    result = fit(Trainee(model, loss, save, checkpoint, desc="train reranker"), batches,
                 TrainResult(groups_total=len(order)), out_dir, learning_rate=learning_rate,
                 warmup_fraction=warmup_fraction, max_steps=max_steps, curve_at=curve_at,
                 log_every=log_every, saved=saved, resume_every=resume_every)
    result.groups_seen = seen(result.steps)
    if keep is not None:  # the caller sees the final weights (tests: the loss after training)
        keep(model, tokenizer)
    return result

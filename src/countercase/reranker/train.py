"""Training of the domain cross-encoder: the packaged all-MiniLM-L6-v2 with a one-logit head.

A plain PyTorch loop over :class:`~countercase.reranker.pairs.Group` s (no Trainer: fewer moving
parts, exact control of the seed, threads and the wall-clock budget). Each step scores
``groups_per_step`` groups of (query, positive, negatives...) and takes the listwise softmax
cross-entropy with the positive as the target (the loss of MS MARCO cross-encoders trained with
hard negatives). One pass over the groups at most, in a seeded order; checkpoints are scored at
the fractions in ``curve_at`` of the pass (the learning curve) by ``validate``, and the best one
by the validation score is kept. The budget stops training early; what was seen is recorded.

The saved folder is a Hugging Face sequence-classification model with its tokenizer, so
sentence-transformers' ``CrossEncoder`` (:class:`~countercase.retrieve.rerank.CrossEncoderReranker`)
and the ONNX export read it as is.
"""

from __future__ import annotations

import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from countercase.learned import TrainLog
from countercase.models import MINILM, encoder_dir
from countercase.reranker.pairs import Group

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
            out.extend(model(**enc).logits[:, 0].tolist())
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


@dataclass
class TrainResult(TrainLog):
    groups_seen: int = 0
    groups_total: int = 0

    def counts(self) -> dict:
        return {"groups_seen": self.groups_seen, "groups_total": self.groups_total}


def train(groups: Sequence[Group], out_dir: Path, *, seed: int, max_length: int = 256,
          groups_per_step: int = 4, learning_rate: float = 3e-5, warmup_fraction: float = 0.1,
          max_steps: int = 0, curve_at: Sequence[float] = (0.25, 0.5, 1.0),
          validate: Callable | None = None, threads: int = 2, log_every: int = 10,
          keep: Callable | None = None) -> TrainResult:
    """Train on one seeded pass over ``groups``; the best checkpoint is saved to ``out_dir``.

    ``validate(model, tokenizer) -> dict`` with a ``"score"`` key (higher is better) is called
    on the untrained model (fraction 0) and at each fraction of ``curve_at`` reached (and where
    ``max_steps`` stops the pass: a budget in steps, so the same seed trains the same model on
    any machine; 0 trains the whole pass). Without it the last model is kept. The learning rate
    schedule spans the whole pass whatever ``max_steps`` is.
    """
    import torch

    torch.set_num_threads(threads)
    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer, model = load_backbone(seed)
    # the length it is trained at travels with the saved model: the reranker reads pairs at it
    tokenizer.model_max_length = max_length
    order = list(groups)
    random.Random(seed).shuffle(order)
    total_steps = max(1, math.ceil(len(order) / groups_per_step))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    warmup = max(1, int(warmup_fraction * total_steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total_steps - s) / total_steps))
    result = TrainResult(groups_total=len(order))
    marks = sorted({max(1, int(round(f * total_steps))) for f in curve_at})
    out_dir = Path(out_dir)
    best_score = -math.inf

    def checkpoint(step: int) -> None:
        nonlocal best_score
        entry = {"step": step, "fraction_of_pairs": round(min(step * groups_per_step, len(order))
                                                          / max(1, len(order)), 3),
                 "groups_seen": min(step * groups_per_step, len(order))}
        if validate is not None:
            entry.update(validate(model, tokenizer))
        result.curve.append(entry)
        log.info("checkpoint %s", entry)
        score = entry.get("score", step)
        if step > 0 and score > best_score:
            best_score = score
            result.best = entry
            if out_dir.exists():
                shutil.rmtree(out_dir)
            model.save_pretrained(str(out_dir))
            tokenizer.save_pretrained(str(out_dir))
        model.train()

    checkpoint(0)
    started = time.perf_counter()
    window: list[float] = []
    model.train()
    bar = tqdm(total=total_steps, desc="train reranker", unit="step")
    for step in range(1, total_steps + 1):
        batch = order[(step - 1) * groups_per_step: step * groups_per_step]
        queries = [g.query for g in batch for _ in range(1 + len(g.negatives))]
        passages = [p for g in batch for p in (g.positive, *g.negatives)]
        enc = tokenizer(queries, passages, padding=True, truncation="longest_first",
                        max_length=max_length, return_tensors="pt")
        logits = model(**enc).logits[:, 0].view(len(batch), -1)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        window.append(loss.item())
        result.steps, result.groups_seen = step, min(step * groups_per_step, len(order))
        bar.update(1)
        if len(window) == log_every or step == total_steps:
            result.losses.append(round(sum(window) / len(window), 4))
            bar.set_postfix(loss=result.losses[-1])
            window = []
        out_of_steps = step == max_steps
        if step in marks or out_of_steps:
            checkpoint(step)
        if out_of_steps and step < total_steps:
            result.stopped_by_budget = True
            log.info("the step budget stops training after %d of %d steps", step, total_steps)
            break
    bar.close()
    if keep is not None:  # the caller sees the final weights (tests: the loss after training)
        keep(model, tokenizer)
    if window:
        result.losses.append(round(sum(window) / len(window), 4))
    result.seconds = time.perf_counter() - started
    if validate is None or result.best is None:
        model.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
    return result

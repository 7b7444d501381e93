"""Training of the domain cross-encoder: the packaged all-MiniLM-L6-v2 with a one-logit head.

A plain PyTorch loop over :class:`~countercase.reranker.pairs.Group` s (no Trainer: fewer moving
parts, exact control of the seed, threads and the wall-clock budget). Each step scores
``groups_per_step`` groups of (query, positive, negatives...) and takes the listwise softmax
cross-entropy with the positive as the target (the loss of MS MARCO cross-encoders trained with
hard negatives). One pass over the groups at most, in a seeded order; checkpoints are scored at
the fractions in ``curve_at`` of the pass (the learning curve) by ``validate``, and the best one
by the validation score is kept. The budget stops training early; what was seen is recorded.

A run of hours outlives a working session (at 512 word pieces on an AVX2 CPU the stage takes
longer than one), so :func:`train` can save its whole state (weights, optimiser, schedule, the
random generator that draws dropout, the log and the best checkpoint so far) every
``resume_every`` steps to a folder outside the stage's outputs, and a later run with the same
key and groups goes on from there: the same steps in the same order, so the same model as an
uninterrupted run (a test).

The saved folder is a Hugging Face sequence-classification model with its tokenizer, so
sentence-transformers' ``CrossEncoder`` (:class:`~countercase.retrieve.rerank.CrossEncoderReranker`)
and the ONNX export read it as is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from countercase.device import resolve
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


@dataclass
class TrainResult(TrainLog):
    groups_seen: int = 0
    groups_total: int = 0
    resumed_at: list[int] = dataclasses.field(default_factory=list)  # steps a run went on after

    def counts(self) -> dict:
        return {"groups_seen": self.groups_seen, "groups_total": self.groups_total,
                "resumed_after_steps": self.resumed_at}


class Resume:
    """The saved state of an interrupted :func:`train` in ``folder``: ``state.pt`` and the best
    checkpoint so far (``best/``). A state is taken up only under the ``key`` it was saved with
    (the caller's inputs, the hyperparameters and the groups); any other is set aside."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder, self.key = Path(folder), key
        self.state, self.best = self.folder / "state.pt", self.folder / "best"

    def load(self) -> dict | None:
        import torch

        if not self.state.is_file():
            return None
        try:
            state = torch.load(self.state, weights_only=True)
        except (RuntimeError, EOFError, OSError, ValueError) as error:  # damaged on disk
            log.warning("the saved state %s is unreadable (%s): training from the start",
                        self.state, error)
            return None
        if state.get("key") != self.key:
            log.info("a saved state in %s is of other inputs: training from the start", self.folder)
            return None
        return state

    def save(self, state: dict) -> None:
        import torch

        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.state.with_suffix(".partial")
        torch.save({**state, "key": self.key}, partial)
        os.replace(partial, self.state)  # a run killed while saving leaves the last whole state

    def keep_best(self, checkpoint: Path) -> None:
        partial = self.folder / "best.partial"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(checkpoint, partial)
        shutil.rmtree(self.best, ignore_errors=True)
        os.replace(partial, self.best)

    def restore_best(self, out_dir: Path) -> None:
        if self.best.is_dir():
            shutil.rmtree(out_dir, ignore_errors=True)
            shutil.copytree(self.best, out_dir)


def resume_key(caller: str, groups: Sequence[Group], **settings) -> str:
    """What a saved state must have been trained on and with to be taken up."""
    digest = hashlib.sha256(caller.encode())
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    for group in groups:
        digest.update(json.dumps(group.to_dict(), sort_keys=True).encode())
    return digest.hexdigest()


def train(groups: Sequence[Group], out_dir: Path, *, seed: int, max_length: int = 256,
          groups_per_step: int = 4, learning_rate: float = 3e-5, warmup_fraction: float = 0.1,
          max_steps: int = 0, curve_at: Sequence[float] = (0.25, 0.5, 1.0),
          validate: Callable | None = None, threads: int = 2, log_every: int = 10,
          keep: Callable | None = None, resume: tuple[Path, str] | None = None,
          resume_every: int = 0, device: str = "auto") -> TrainResult:
    """Train on one seeded pass over ``groups``; the best checkpoint is saved to ``out_dir``.

    ``validate(model, tokenizer) -> dict`` with a ``"score"`` key (higher is better) is called
    on the untrained model (fraction 0) and at each fraction of ``curve_at`` reached (and where
    ``max_steps`` stops the pass: a budget in steps, so the same seed trains the same model on
    any machine; 0 trains the whole pass). Without it the last model is kept. The learning rate
    schedule spans the whole pass whatever ``max_steps`` is.

    ``resume`` is (folder, the caller's key of its inputs): the state is saved there every
    ``resume_every`` steps and at each checkpoint, and a run that finds a state of the same
    inputs goes on from it (:class:`Resume`; the caller clears it once its stage is done).
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
    total_steps = max(1, math.ceil(len(order) / groups_per_step))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    warmup = max(1, int(warmup_fraction * total_steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total_steps - s) / total_steps))
    result = TrainResult(groups_total=len(order))
    marks = sorted({max(1, int(round(f * total_steps))) for f in curve_at})
    out_dir = Path(out_dir)
    best_score = -math.inf
    saved = None
    if resume is not None:
        folder, caller = resume
        saved = Resume(folder, resume_key(
            caller, order, seed=seed, max_length=max_length, groups_per_step=groups_per_step,
            learning_rate=learning_rate, warmup_fraction=warmup_fraction, max_steps=max_steps,
            curve_at=list(curve_at), log_every=log_every))

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
            if saved is not None:
                saved.keep_best(out_dir)
        model.train()

    window: list[float] = []
    started = before = 0.0  # training seconds: this run's, those of the runs it goes on from

    def save(step: int, finished: bool = False) -> None:
        result.seconds = before + time.perf_counter() - started
        saved.save({"step": step, "finished": finished, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                    "rng": torch.get_rng_state(), "window": window, "best_score": best_score,
                    "result": json.dumps(dataclasses.asdict(result))})

    state = saved.load() if saved is not None else None
    first, finished = 1, False
    if state is None:
        checkpoint(0)
    else:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        window, best_score = list(state["window"]), state["best_score"]
        result = TrainResult(**json.loads(state["result"]))
        saved.restore_best(out_dir)
        first, finished = state["step"] + 1, state["finished"]
        result.resumed_at.append(state["step"])
        log.info("resumed after step %d of %d from %s", state["step"], total_steps, saved.folder)
    started, before = time.perf_counter(), result.seconds
    if state is None and saved is not None:
        save(0)
    model.train()
    bar = tqdm(total=total_steps, initial=first - 1, desc="train reranker", unit="step")
    for step in range(first, 1 if finished else total_steps + 1):
        batch = order[(step - 1) * groups_per_step: step * groups_per_step]
        queries = [g.query for g in batch for _ in range(1 + len(g.negatives))]
        passages = [p for g in batch for p in (g.positive, *g.negatives)]
        enc = tokenizer(queries, passages, padding=True, truncation="longest_first",
                        max_length=max_length, return_tensors="pt")
        logits = model(**enc.to(model.device)).logits[:, 0].view(len(batch), -1)
        loss = torch.nn.functional.cross_entropy(
            logits, torch.zeros(len(batch), dtype=torch.long, device=logits.device))
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
        last = out_of_steps or step == total_steps
        if saved is not None and (resume_every and step % resume_every == 0
                                  or step in marks or last):
            save(step, finished=last)
        if out_of_steps:
            break
    bar.close()
    if keep is not None:  # the caller sees the final weights (tests: the loss after training)
        keep(model, tokenizer)
    if window:
        result.losses.append(round(sum(window) / len(window), 4))
    result.seconds = before + time.perf_counter() - started
    if validate is None or result.best is None:
        model.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
    return result

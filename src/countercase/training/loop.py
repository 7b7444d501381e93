"""The one training loop of the project's fine-tuned encoders (the domain reranker, the
bi-encoder): a trainer brings its model, its seeded batches and its loss; the loop brings the rest.

- AdamW with linear warm-up and decay over the *planned* steps, and gradients clipped at 1.0.
- A budget in steps (``max_steps``) cuts the pass without reshaping its schedule, so the same
  seed trains the same model on any machine.
- The mean loss of each window of ``log_every`` steps; a checkpoint closes the open window.
- A checkpoint validates the model at step 0 and at each fraction of ``curve_at`` (and where the
  budget stops); the best by its ``"score"`` is saved.
- With ``resume``, the state is saved every ``resume_every`` steps and at each checkpoint, and a
  run that finds a state of the same key goes on from it (:class:`Resume`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.training.resume import Resume

log = logging.getLogger(__name__)


@dataclass
class TrainLog:
    """What a training loop did: the base of each trainer's result, whose own counts
    (:meth:`counts`) stand after ``steps`` in :meth:`as_dict`."""
    steps: int = 0
    seconds: float = 0.0
    stopped_by_budget: bool = False
    losses: list[float] = field(default_factory=list)  # mean loss of each logged window
    curve: list[dict] = field(default_factory=list)  # validation at each checkpoint
    best: dict | None = None
    resumed_at: list[int] = field(default_factory=list)  # steps a run went on after
    seconds_before: float = 0.0  # of ``seconds``: the interrupted runs' this one went on from

    def counts(self) -> dict:
        return {}

    def as_dict(self) -> dict:
        return {"steps": self.steps, **self.counts(), "seconds": round(self.seconds, 1),
                "stopped_by_budget": self.stopped_by_budget,
                "loss_first_window": self.losses[0] if self.losses else None,
                "loss_last_window": self.losses[-1] if self.losses else None,
                "loss_windows": self.losses, "learning_curve": self.curve, "best": self.best}


@dataclass
class Trainee:
    """What a trainer hands the loop: its model, how to save it, how to score it."""
    model: Any  # a torch module
    loss: Callable[[Any], Any]  # batch -> the loss tensor of one step
    save: Callable[[Path], None]  # writes the model (and its tokenizer) to a folder
    validate: Callable[[int], dict] | None = None  # step -> the checkpoint's entry ("score")
    desc: str = "train"


def fit(trainee: Trainee, batches: Sequence, result: TrainLog, out_dir: Path, *,
        learning_rate: float, warmup_fraction: float, max_steps: int = 0,
        curve_at: Sequence[float] = (1.0,), log_every: int = 10,
        saved: Resume | None = None, resume_every: int = 0) -> TrainLog:
    """Train ``trainee`` on ``batches`` in order; the best checkpoint is saved to ``out_dir``
    (without ``validate``, the last one). Returns ``result`` filled in, or the result of the
    interrupted run taken up (of the same type)."""
    import torch

    planned = len(batches)
    total = min(planned, max_steps) if max_steps else planned
    run = _Run(trainee, result, Path(out_dir), saved, planned, learning_rate, warmup_fraction)
    marks = sorted({max(1, int(round(f * planned))) for f in curve_at})
    first = run.start(total)
    model, result = trainee.model, run.result
    bar = tqdm(total=total, initial=first - 1, desc=trainee.desc, unit="step")
    for step, batch in enumerate(batches[first - 1:total], start=first):
        loss = trainee.loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        run.optimizer.step()
        run.scheduler.step()
        run.optimizer.zero_grad()
        run.window.append(loss.item())
        result.steps = step
        bar.update(1)
        if len(run.window) == log_every:
            run.close_window()
            bar.set_postfix(loss=result.losses[-1])
        if step in marks or step == total:
            if run.window:  # the window the checkpoint closes
                run.close_window()
            run.checkpoint(step)
        if saved is not None and (resume_every and step % resume_every == 0 or step in marks
                                  or step == total):
            run.save(step)
    bar.close()
    if total < planned:
        result.stopped_by_budget = True
        log.info("the step budget stops training after %d of %d steps", total, planned)
    result.seconds = run.before + time.perf_counter() - run.started
    if result.best is None:
        trainee.save(out_dir)
    return result


class _Run:
    """One run of :func:`fit`: the optimiser and its schedule over the ``planned`` steps, the
    open loss window, the best checkpoint so far, and the state a resumed run takes up."""

    def __init__(self, trainee: Trainee, result: TrainLog, out_dir: Path, saved: Resume | None,
                 planned: int, learning_rate: float, warmup_fraction: float) -> None:
        import torch

        self.trainee, self.result, self.out_dir, self.saved = trainee, result, out_dir, saved
        self.model = model = trainee.model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate,
                                           weight_decay=0.01)
        warmup = max(1, int(warmup_fraction * planned))
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer,
            lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (planned - s) / planned))
        self.best_score = -math.inf
        self.window: list[float] = []
        self.started = self.before = 0.0  # training seconds: this run's, the earlier runs'

    def start(self, total: int) -> int:
        """The first step to train: 1, after the untrained checkpoint, or the step after the
        state a resumed run finds."""
        saved, result = self.saved, self.result
        state = saved.load() if saved is not None else None
        first = 1
        if state is None:
            self.checkpoint(0)
        else:
            saved.restore_training(state, self.model, self.optimizer, self.scheduler)
            self.window, self.best_score = list(state["window"]), state["best_score"]
            result = self.result = type(result)(**json.loads(state["result"]))
            saved.restore_best(self.out_dir)
            first = state["step"] + 1
            result.resumed_at.append(state["step"])
            result.seconds_before = result.seconds
            log.info("resumed after step %d of %d from %s", state["step"], total, saved.folder)
        self.started, self.before = time.perf_counter(), result.seconds
        if state is None and saved is not None:
            self.save(0)
        self.model.train()  # a resumed run skipped the untrained checkpoint that set it
        return first

    def close_window(self) -> None:
        self.result.losses.append(round(sum(self.window) / len(self.window), 4))
        self.window = []

    def checkpoint(self, step: int) -> None:
        trainee, result = self.trainee, self.result
        entry = {"step": step, **(trainee.validate(step) if trainee.validate else {})}
        result.curve.append(entry)
        log.info("checkpoint %s", entry)
        score = entry.get("score", step)
        if step > 0 and score > self.best_score:
            self.best_score = score
            result.best = entry
            if self.out_dir.exists():
                shutil.rmtree(self.out_dir)
            trainee.save(self.out_dir)
            if self.saved is not None:
                self.saved.keep_best(self.out_dir)
        self.model.train()

    def save(self, step: int) -> None:
        self.result.seconds = self.before + time.perf_counter() - self.started
        self.saved.save_training(step, self.model, self.optimizer, self.scheduler,
                                 window=self.window, best_score=self.best_score,
                                 result=json.dumps(dataclasses.asdict(self.result)))

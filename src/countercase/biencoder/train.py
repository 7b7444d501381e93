"""Fine-tuning of the dense encoder (all-MiniLM-L6-v2, as packaged) on citation pairs.

A plain PyTorch loop over the sentence-transformers modules (mean pooling and normalisation
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
(``resume``: :mod:`countercase.resume`) to the model an uninterrupted run trains.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from countercase.device import resolve
from countercase.learned import TrainLog
from countercase.resume import Resume, resume_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pair:
    query_doc: str
    query: str
    positive_doc: str
    positive: str
    negative_doc: str
    negative: str


@dataclass
class TrainResult(TrainLog):
    steps_planned: int = 0
    pairs: int = 0
    resumed_at: list[int] = dataclasses.field(default_factory=list)  # steps a run went on after
    seconds_before: float = 0.0  # of ``seconds``: the interrupted runs' this one went on from

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
    """Train from the sentence-transformers folder ``base``; the best checkpoint by
    ``validate(model) -> dict`` (key ``"score"``, higher is better; also called on the untrained
    model) is saved to ``out_dir`` (without ``validate``: the last).

    ``resume`` is (folder, the caller's key of its inputs): the state is saved there every
    ``resume_every`` steps and at each checkpoint, and a run that finds a state of the same
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
    planned = len(batches)
    total = min(planned, max_steps) if max_steps else planned
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    warmup = max(1, int(warmup_fraction * planned))
    # the schedule spans the planned steps whatever the budget: a budget cuts, never reshapes
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (planned - s) / planned))
    result = TrainResult(steps_planned=planned, pairs=len(pairs))
    marks = sorted({max(1, int(round(f * planned))) for f in curve_at})
    out_dir = Path(out_dir)
    best_score = -math.inf
    saved = None
    if resume is not None:
        folder, caller = resume
        saved = Resume(folder, resume_key(
            caller, (dataclasses.asdict(pair) for pair in pairs), base=str(base), seed=seed,
            epochs=epochs, batch_size=batch_size,
            learning_rate=learning_rate, warmup_fraction=warmup_fraction, scale=scale,
            max_length=max_length, max_steps=max_steps, curve_at=list(curve_at),
            log_every=log_every))

    def checkpoint(step: int) -> None:
        nonlocal best_score
        entry: dict = {"step": step}
        if validate is not None:
            model.eval()
            entry.update(validate(model))
        result.curve.append(entry)
        log.info("checkpoint %s", entry)
        if step > 0 and entry.get("score", step) > best_score:
            best_score = entry.get("score", step)
            result.best = entry
            if out_dir.exists():
                shutil.rmtree(out_dir)
            model.save(str(out_dir))
            if saved is not None:
                saved.keep_best(out_dir)
        model.train()

    window: list[float] = []
    started = before = 0.0  # training seconds: this run's, those of the runs it goes on from

    def save(step: int) -> None:
        result.seconds = before + time.perf_counter() - started
        saved.save_training(step, model, optimizer, scheduler, window=window,
                            best_score=best_score, result=json.dumps(dataclasses.asdict(result)))

    state = saved.load() if saved is not None else None
    first = 1
    if state is None:
        checkpoint(0)
    else:
        saved.restore_training(state, model, optimizer, scheduler)
        window, best_score = list(state["window"]), state["best_score"]
        result = TrainResult(**json.loads(state["result"]))
        saved.restore_best(out_dir)
        first = state["step"] + 1
        result.resumed_at.append(state["step"])
        result.seconds_before = result.seconds
        log.info("resumed after step %d of %d from %s", state["step"], total, saved.folder)
    started, before = time.perf_counter(), result.seconds
    if state is None and saved is not None:
        save(0)
    model.train()  # a resumed run skipped the untrained checkpoint that set it
    bar = tqdm(total=total, initial=first - 1, desc="train bi-encoder", unit="step")
    for step, batch in enumerate(batches[first - 1:total], start=first):
        loss = batch_loss(model, batch, cites, scale)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        window.append(loss.item())
        result.steps = step
        bar.update(1)
        if len(window) == log_every:
            result.losses.append(round(sum(window) / len(window), 4))
            bar.set_postfix(loss=result.losses[-1])
            window = []
        if step in marks or step == total:
            if window:  # the window the checkpoint closes
                result.losses.append(round(sum(window) / len(window), 4))
                window = []
            checkpoint(step)
        if saved is not None and (resume_every and step % resume_every == 0 or step in marks
                                  or step == total):
            save(step)
    bar.close()
    result.stopped_by_budget = total < planned
    result.seconds = before + time.perf_counter() - started
    if result.best is None:
        model.save(str(out_dir))
    return result

"""Training the legal entity tagger: all-MiniLM-L6-v2 (packaged) with a token-classification head,
fine-tuned on InLegalNER's train files (judgments and preambles, all 14 types in BIO), scored
on its dev files.

Each sentence is cut into windows of whole words that fit ``max_length`` word pieces (preamble
"sentences" run to hundreds of words); a word's label sits on its first word piece, the others
are ignored by the loss. Batches are drawn in length buckets (shuffled with the seed) so little
time goes on padding. The learning rate decays linearly to zero at the last step trained: the
last planned step, or ``max_steps`` (a budget in steps, never in seconds, so the seed and the
parameters fix the model on any machine; the report says ``stopped_by_budget``).
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from countercase.config import NerParams
from countercase.runtime.device import resolve
from countercase.training.learning_check import check_learned
from countercase.runtime.models import MINILM, encoder_dir, offline
from countercase.ner.data import LABELS, Sentence, read_bio, split_files, word_windows
from countercase.ner.metrics import score
from countercase.ner.tagger import predict_words

log = logging.getLogger(__name__)
BAR = ("PROVISION", "STATUTE")  # the bar: F1 >= 0.8 on these types
BAR_F1 = 0.8


def _features(sentences: list[Sentence], tokenizer, max_length: int) -> list[dict]:
    """Windows of the sentences as encoder inputs with first-piece labels."""
    label_id = {label: i for i, label in enumerate(LABELS)}
    words = [s.tokens for s in sentences]
    pieces = tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
    windows = []
    for i, sentence in enumerate(sentences):
        counts = [0] * len(sentence.tokens)
        for w in pieces.word_ids(i):
            if w is not None:
                counts[w] += 1
        windows += [(i, s, e) for s, e in word_windows(counts, max_length - 2)]
    encoded = tokenizer([words[i][s:e] for i, s, e in windows], is_split_into_words=True,
                        truncation=True, max_length=max_length)
    features = []
    for row, (i, start, _) in enumerate(windows):
        labels, previous = [], None
        for w in encoded.word_ids(row):
            labels.append(-100 if w is None or w == previous
                          else label_id[sentences[i].tags[start + w]])
            previous = w
        features.append({"input_ids": encoded["input_ids"][row],
                         "attention_mask": encoded["attention_mask"][row], "labels": labels})
    return features


def _batches(features: list[dict], batch_size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(len(features)))
    rng.shuffle(order)
    bucket = batch_size * 32
    batches = []
    for b in range(0, len(order), bucket):
        chunk = sorted(order[b:b + bucket], key=lambda i: len(features[i]["input_ids"]))
        batches += [chunk[k:k + batch_size] for k in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def _collate(features: list[dict], pad_id: int):
    import torch

    width = max(len(f["input_ids"]) for f in features)

    def pad(key: str, value: int):
        return torch.tensor([f[key] + [value] * (width - len(f[key])) for f in features])

    return {"input_ids": pad("input_ids", pad_id), "attention_mask": pad("attention_mask", 0),
            "labels": pad("labels", -100)}


def read_split(data_dir: Path, split: str, limit: int = 0) -> dict[str, list[Sentence]]:
    files = {}
    for path in split_files(data_dir, split):
        part = "judgement" if "JUDGEMENT" in path.name else "preamble"
        files[part] = read_bio(path)
    if limit:  # a quick run: the same share of each part, in file order
        total = sum(len(f.sentences) for f in files.values())
        for f in files.values():
            f.sentences = f.sentences[:max(1, round(limit * len(f.sentences) / total))]
    return files


def evaluate(model, tokenizer, dev: dict, max_length: int, batch_size: int) -> dict:
    """Strict entity-level scores on each dev part and on both together (``all``)."""
    scores, gold_all, pred_all = {}, [], []
    for part, bio in dev.items():
        gold = [s.tags for s in bio.sentences]
        predicted = [tags for tags, _ in predict_words(
            model, tokenizer, [s.tokens for s in bio.sentences], max_length, batch_size)]
        scores[part] = score(gold, predicted)
        gold_all += gold
        pred_all += predicted
    scores["all"] = score(gold_all, pred_all)
    return scores


@dataclass
class _Start:
    """Where a training run starts: data, model, optimiser and schedule, all from the seed."""
    train: dict
    model: Any
    tokenizer: Any
    features: list[dict]
    preamble: list[dict]
    optimizer: Any
    schedule: Any
    planned: int
    last: int
    rng: random.Random


def _start(data_dir: Path, params: NerParams, seed: int, device: str = "auto") -> _Start:
    offline()
    import numpy as np
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.set_num_threads(params.threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    train = read_split(data_dir, "TRAIN", params.max_train_sentences)
    backbone = encoder_dir(MINILM)
    tokenizer = AutoTokenizer.from_pretrained(backbone)
    model = AutoModelForTokenClassification.from_pretrained(
        backbone, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)})
    model.to(resolve(device))
    if params.freeze_word_embeddings:
        # 11.7M of the 22.7M weights; their dense gradient and Adam update cost more than the
        # tagging head gains from them
        model.get_input_embeddings().weight.requires_grad_(False)
    rng = random.Random(seed)
    features = _features(train["judgement"].sentences, tokenizer, params.max_length)
    # preambles are long and formulaic (names, lawyers, judges, courts): a share of their
    # windows teaches those types at a fraction of the cost
    preamble = _features(train["preamble"].sentences, tokenizer, params.max_length)
    features += rng.sample(preamble, round(params.preamble_fraction * len(preamble)))
    steps_per_epoch = -(-len(features) // params.batch_size)
    planned = steps_per_epoch * params.epochs
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=params.learning_rate,
                                  weight_decay=params.weight_decay)
    last = min(planned, params.max_steps) if params.max_steps else planned
    warmup = max(1, int(params.warmup_ratio * last))

    def rate(step: int) -> float:
        # linear warm-up, then linear decay to 0 at the last step trained
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, 1.0 - (step - warmup) / max(1, last - warmup))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    model.train()
    return _Start(train, model, tokenizer, features, preamble, optimizer, schedule, planned,
                  last, rng)


def _step(run: _Start, batch: list[int]) -> float:
    """One optimiser step on ``batch`` (float32); its loss."""
    import torch

    inputs = _collate([run.features[i] for i in batch], run.tokenizer.pad_token_id)
    loss = run.model(**{k: v.to(run.model.device) for k, v in inputs.items()}).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(run.model.parameters(), 1.0)
    run.optimizer.step()
    run.schedule.step()
    run.optimizer.zero_grad()
    return loss.item()


def first_window(data_dir: Path, params: NerParams, seed: int, steps: int) -> dict:
    """The first ``steps`` steps of the full run (its batches, its schedule), nothing saved:
    their mean loss, as ``metrics/ner.json`` records the first ``log_every`` as ``loss_first``,
    and the seconds a step took. Compares a CPU, or a precision, with the run of record."""
    run = _start(data_dir, params, seed)
    losses = []
    started = time.perf_counter()
    for batch in _batches(run.features, params.batch_size, run.rng):
        if len(losses) == steps:
            break
        losses.append(_step(run, batch))
    return {"steps": len(losses),
            "mean_loss": round(sum(losses) / len(losses), 4),
            "seconds_per_step": round((time.perf_counter() - started) / len(losses), 3)}


def train_ner(data_dir: Path, out_dir: Path, params: NerParams, seed: int,
              progress: bool = True, dev_limit: int = 0, device: str = "auto") -> dict:
    """Train on ``device`` (params.yaml ``device``), save to ``out_dir/model`` and score on the
    dev set; returns the report."""
    started = time.perf_counter()
    run = _start(data_dir, params, seed, device)
    dev = read_split(data_dir, "DEV", dev_limit)
    model, tokenizer, features, preamble = run.model, run.tokenizer, run.features, run.preamble
    train, planned, last = run.train, run.planned, run.last
    train_started = time.perf_counter()
    losses, window, step, stopped = [], [], 0, False
    bar = tqdm(total=planned, desc="train NER", unit="step", disable=not progress)
    for epoch in range(params.epochs):
        for batch in _batches(features, params.batch_size, run.rng):
            if step == last:
                stopped = step < planned
                break
            window.append(_step(run, batch))
            step += 1
            bar.update(1)
            if step % params.log_every == 0 or step == planned:
                mean = sum(window) / len(window)
                losses.append({"step": step, "epoch": epoch + 1, "loss": round(mean, 4)})
                bar.set_postfix(loss=f"{mean:.3f}")
                log.info("step %d/%d epoch %d loss %.4f", step, planned, epoch + 1, mean)
                window = []
        if step == last:
            if stopped:
                log.info("the step budget stops training at step %d of %d", step, planned)
            break
    bar.close()
    if window:
        losses.append({"step": step, "epoch": epoch + 1,
                       "loss": round(sum(window) / len(window), 4)})
    train_seconds = time.perf_counter() - train_started
    eval_started = time.perf_counter()
    scores = evaluate(model, tokenizer, dev, params.max_length, params.batch_size * 2)
    eval_seconds = time.perf_counter() - eval_started
    check_learned("ner", losses[0]["loss"] if losses else None,
                  losses[-1]["loss"] if losses else None, params.min_loss_drop,
                  "the dev set's strict micro F1", scores["all"]["micro"]["f1"], params.min_dev_f1)
    model_dir = Path(out_dir) / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    dev_words = sum(len(s.tokens) for f in dev.values() for s in f.sentences)
    report = {
        "dev": scores["all"],
        "dev_by_part": {k: v for k, v in scores.items() if k != "all"},
        "bar": {kind: {"f1": scores["all"].get(kind, {}).get("f1", 0.0),
                       "met": scores["all"].get(kind, {}).get("f1", 0.0) >= BAR_F1}
                for kind in BAR},
        "data": {"train": {k: v.counts() for k, v in train.items()},
                 "dev": {k: v.counts() for k, v in dev.items()}},
        "training": {"steps": step, "planned_steps": planned, "windows": len(features),
                     "preamble_windows": f"{round(params.preamble_fraction * len(preamble))} "
                                         f"of {len(preamble)}",
                     "stopped_by_budget": stopped, "epochs": params.epochs,
                     "loss_first": losses[0]["loss"] if losses else None,
                     "loss_last": losses[-1]["loss"] if losses else None},
        "timing": {"train_seconds": round(train_seconds, 1),
                   "seconds_per_step": round(train_seconds / max(1, step), 3),
                   "eval_seconds": round(eval_seconds, 1),
                   "eval_ms_per_word": round(1000 * eval_seconds / max(1, dev_words), 3),
                   "total_seconds": round(time.perf_counter() - started, 1)},
    }
    (model_dir / "tagger.json").write_text(json.dumps({"max_length": params.max_length}) + "\n")
    (model_dir / "training.json").write_text(json.dumps({"losses": losses, **report}, indent=1)
                                             + "\n")
    return report

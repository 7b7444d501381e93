"""Entity-level scores with strict matching (as seqeval's ``mode="strict"`` with IOB2): an entity
is a ``B-X`` followed by any ``I-X``; a predicted entity counts only when its type, first and last
word all equal a gold entity's. An ``I-X`` that follows neither ``B-X`` nor ``I-X`` starts no
entity here (:func:`repair` turns such tags into ``B-X`` before scoring a model's output)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def entities(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """``(type, first word, last word + 1)`` of every well-formed entity."""
    found, kind, start = set(), None, 0
    for i, tag in enumerate(list(tags) + ["O"]):
        if kind is not None and tag != f"I-{kind}":
            found.add((kind, start, i))
            kind = None
        if tag.startswith("B-"):
            kind, start = tag[2:], i
    return found


def repair(tags: Sequence[str]) -> list[str]:
    """An ``I-X`` that continues no ``X`` begins one (a tagger's usual slip at an entity's start)."""
    fixed, previous = [], "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            tag = "B-" + tag[2:]
        fixed.append(tag)
        previous = tag
    return fixed


def _prf(tp: int, n_pred: int, n_gold: int) -> dict:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4), "support": n_gold}


def score(gold: Iterable[Sequence[str]], predicted: Iterable[Sequence[str]]) -> dict:
    """Per-type precision, recall, F1 and support (gold entities), plus ``micro`` over all types.
    Raises ValueError when a predicted sequence's length differs from its gold one."""
    tp, n_pred, n_gold = Counter(), Counter(), Counter()
    for i, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(p)} predicted tags for {len(g)} words")
        gold_set, pred_set = entities(g), entities(p)
        for kind, *_ in gold_set:
            n_gold[kind] += 1
        for kind, *_ in pred_set:
            n_pred[kind] += 1
        for kind, *_ in gold_set & pred_set:
            tp[kind] += 1
    types = sorted(set(n_gold) | set(n_pred))
    report = {kind: _prf(tp[kind], n_pred[kind], n_gold[kind]) for kind in types}
    report["micro"] = _prf(sum(tp.values()), sum(n_pred.values()), sum(n_gold.values()))
    return report

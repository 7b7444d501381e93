"""Did a training stage learn? A stage whose loss did not fall, or whose held-out score is below
its own floor (in ``params.yaml``), stops with :class:`NotLearnedError` before it writes a
model, so nothing downstream runs on a useless one."""

from __future__ import annotations

import shutil
from pathlib import Path

from countercase.errors import CountercaseError


class NotLearnedError(CountercaseError):
    """A training stage's model did not learn; the message says what was measured and what to do."""


def check_learned(stage: str, loss_first: float | None, loss_last: float | None,
                  min_drop: float, score_name: str, score: float, floor: float) -> None:
    """Raise when the last loss window is not ``min_drop`` (a share) below the first, or when
    ``score`` is below ``floor``."""
    problems = []
    if loss_first is None or loss_last is None:
        problems.append("no training step was taken")
    elif loss_last > loss_first * (1 - min_drop):
        problems.append(f"the loss fell from {loss_first:.4f} to {loss_last:.4f}, less than the "
                        f"{min_drop:.0%} asked")
    if score < floor:
        problems.append(f"{score_name} is {score:.4f}, below the floor {floor}")
    if problems:
        raise NotLearnedError(
            f"{stage} did not learn: {'; '.join(problems)}. No model was written. Check that "
            "the machine is not overloaded (the steps are a fixed budget, so a slow machine "
            f"only takes longer), the training data and the learning rate in params.yaml ({stage})")


def check_fit(stage: str, fitted, min_drop: float, gain_name: str, min_gain: float,
              model: Path) -> tuple[float, float]:
    """:func:`check_learned` on a training loop's result (its losses, and the gain of its chosen
    checkpoint over the untrained model, the first point of its curve); a model that did not
    learn is removed, so no later stage reads it. Returns (untrained, chosen) scores."""
    untrained = fitted.curve[0]["score"]
    chosen = fitted.best["score"] if fitted.best else untrained
    try:
        check_learned(stage, fitted.losses[0] if fitted.losses else None,
                      fitted.losses[-1] if fitted.losses else None, min_drop, gain_name,
                      chosen - untrained, min_gain)
    except NotLearnedError:
        shutil.rmtree(model, ignore_errors=True)
        raise
    return untrained, chosen

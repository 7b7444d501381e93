"""Did a training stage learn? A stage whose loss did not fall, or whose held-out score is below
its own floor (in ``params.yaml``), stops with :class:`NotLearnedError` before it writes a
model, so nothing downstream runs on a useless one."""

from __future__ import annotations

from dataclasses import dataclass, field

from countercase.errors import CountercaseError


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

    def counts(self) -> dict:
        return {}

    def as_dict(self) -> dict:
        return {"steps": self.steps, **self.counts(), "seconds": round(self.seconds, 1),
                "stopped_by_budget": self.stopped_by_budget,
                "loss_first_window": self.losses[0] if self.losses else None,
                "loss_last_window": self.losses[-1] if self.losses else None,
                "loss_windows": self.losses, "learning_curve": self.curve, "best": self.best}


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

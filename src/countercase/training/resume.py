"""The saved state of an interrupted training run, taken up by the next run on the same inputs.

A trainer saves its state (weights, optimiser, scheduler, random state, its log) every few steps
to a folder outside its stage's outputs (DVC deletes those before a stage runs) and keeps a copy
of its best checkpoint beside it; a later run whose key matches goes on from the last state to
the model an uninterrupted run trains (:mod:`countercase.training.loop`). The key is a digest
of what the state was trained on and with: the inputs, the parameters and the trainer's version
string (a trainer bumps it when a change makes an earlier state untrue), never the text of the
source files. A state of another key is set aside, never taken up.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)


class Resume:
    """The saved state of an interrupted training run in ``folder``: ``state.pt`` and the best
    checkpoint so far (``best/``). A state is taken up only under the ``key`` it was saved with."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder, self.key = Path(folder), key
        self.state, self.best = self.folder / "state.pt", self.folder / "best"

    def load(self) -> dict | None:
        import torch

        if not self.state.is_file():
            return None
        try:
            state = torch.load(self.state, weights_only=True)
        except Exception as error:  # damaged on disk: torch.load raises whatever pickle met
            error = f"{type(error).__name__}: {error}"
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

    def save_training(self, step: int, model, optimizer, scheduler, **log_state) -> None:
        """The state of a training loop after ``step``: the three objects' states, torch's
        random state (dropout) and the loop's own ``log_state`` (JSON-able or tensors)."""
        import torch

        self.save({"step": step, "model": model.state_dict(),
                   "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                   "rng": torch.get_rng_state(), **log_state})

    @staticmethod
    def restore_training(state: dict, model, optimizer, scheduler) -> None:
        """Set the three objects and torch's random state as :meth:`save_training` kept them."""
        import torch

        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])

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


def resume_key(caller: str, items: Iterable[dict], **settings) -> str:
    """What a saved state must have been trained on (``items``, e.g. the training pairs as
    dicts) and with (``settings``; ``caller``: the caller's key of its other inputs)."""
    digest = hashlib.sha256(caller.encode())
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    for item in items:
        digest.update(json.dumps(item, sort_keys=True).encode())
    return digest.hexdigest()

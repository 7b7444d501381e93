"""The one training loop (:func:`countercase.training.loop.fit`) on a small real torch model: its
loss windows, checkpoints, budget and best model, and a resumed run that trains the same model
as an uninterrupted one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from countercase.training.loop import Trainee, TrainLog, fit  # noqa: E402
from countercase.training.resume import Resume, resume_key  # noqa: E402


@dataclass
class Result(TrainLog):
    planned: int = 0

    def counts(self) -> dict:
        return {"planned": self.planned}


class Interrupted(Exception):
    pass


def _batches(n: int = 12):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n * 4, 3, generator=generator)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1
    return [(x[i:i + 4], y[i:i + 4]) for i in range(0, len(x), 4)]


def _train(out: Path, *, max_steps: int = 0, saved: Resume | None = None,
           stop_at: int | None = None, validate=True):
    torch.manual_seed(7)
    model = torch.nn.Linear(3, 1)
    batches = _batches()

    def loss(batch):
        if stop_at is not None and loss.calls == stop_at:
            raise Interrupted
        loss.calls += 1
        x, y = batch
        return torch.nn.functional.mse_loss(model(x).squeeze(-1), y)
    loss.calls = 0

    def checkpoint(step: int) -> dict:
        with torch.no_grad():
            error = sum(float(torch.nn.functional.mse_loss(model(x).squeeze(-1), y))
                        for x, y in batches)
        return {"score": -round(error, 6)}

    def save(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), folder / "weights.pt")

    result = fit(Trainee(model, loss, save, checkpoint if validate else None, desc="test"),
                 batches, Result(planned=len(batches)), out, learning_rate=0.05,
                 warmup_fraction=0.25, max_steps=max_steps, curve_at=(0.5, 1.0), log_every=4,
                 saved=saved, resume_every=2)
    return result, model


def test_windows_checkpoints_and_the_best_model(tmp_path):
    result, model = _train(tmp_path / "model")
    assert result.steps == 12 and not result.stopped_by_budget
    # windows of 4 steps, closed at the checkpoints (steps 6 and 12): 4 | 2 | 4 | 2
    assert len(result.losses) == 4
    assert [entry["step"] for entry in result.curve] == [0, 6, 12]
    assert result.best in result.curve[1:]
    assert result.best["score"] == max(entry["score"] for entry in result.curve[1:])
    assert (tmp_path / "model" / "weights.pt").is_file()
    assert result.losses[-1] < result.losses[0]
    assert result.as_dict()["planned"] == 12


def test_a_budget_cuts_the_pass_without_reshaping_it(tmp_path):
    full, _ = _train(tmp_path / "full")
    cut, _ = _train(tmp_path / "cut", max_steps=5)
    assert cut.steps == 5 and cut.stopped_by_budget
    assert [entry["step"] for entry in cut.curve] == [0, 5]  # where the budget stops
    # the warm-up and decay span the planned 12 steps, so the cut run's first window is the
    # full run's (a schedule over 5 steps would warm up in 1 step instead of 3)
    assert cut.losses[0] == full.losses[0] and len(cut.losses) == 2


def test_without_validation_the_last_model_is_kept(tmp_path):
    result, model = _train(tmp_path / "model", validate=False)
    assert [entry["step"] for entry in result.curve] == [0, 6, 12]
    assert result.best == {"step": 12}
    kept = torch.load(tmp_path / "model" / "weights.pt", weights_only=True)
    assert torch.equal(kept["weight"], model.weight.detach())


def test_an_interrupted_run_goes_on_to_the_same_model(tmp_path):
    whole, whole_model = _train(tmp_path / "whole")
    key = resume_key("test", [{"batches": 12}], version="1")
    saved = Resume(tmp_path / "state", key)
    with pytest.raises(Interrupted):
        _train(tmp_path / "resumed", saved=saved, stop_at=9)  # the state of step 8 is saved
    assert json.loads(saved.load()["result"])["steps"] == 9 - 1
    resumed, resumed_model = _train(tmp_path / "resumed", saved=saved)
    assert resumed.resumed_at == [8]
    assert torch.equal(resumed_model.weight, whole_model.weight)
    assert resumed.losses == whole.losses and resumed.curve == whole.curve
    # another key sets the state aside and trains from the start
    other = Resume(tmp_path / "state", resume_key("test", [{"batches": 12}], version="2"))
    again, _ = _train(tmp_path / "other", saved=other)
    assert again.resumed_at == []

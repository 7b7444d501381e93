"""A saved training state is taken up only whole and only under the key it was saved with."""

from __future__ import annotations

import logging

from countercase.training.resume import Resume, resume_key


def test_a_state_is_taken_up_only_under_its_key_and_only_whole(tmp_path, caplog):
    saved = Resume(tmp_path / "state", resume_key("inputs", [{"pair": 1}], seed=3))
    assert saved.load() is None  # nothing saved yet
    saved.save({"step": 4, "window": [1.5]})
    assert saved.load() == {"step": 4, "window": [1.5], "key": saved.key}
    assert not (tmp_path / "state" / "state.partial").exists()
    for other in (resume_key("inputs", [{"pair": 2}], seed=3),  # other pairs, settings, inputs
                  resume_key("inputs", [{"pair": 1}], seed=4),
                  resume_key("other", [{"pair": 1}], seed=3)):
        assert other != saved.key and Resume(saved.folder, other).load() is None
    saved.state.write_bytes(b"half a state")  # a run killed while writing it, on an old torch
    with caplog.at_level(logging.WARNING):
        assert saved.load() is None
    assert "unreadable" in caplog.text and str(saved.state) in caplog.text


def test_the_best_checkpoint_is_kept_and_given_back(tmp_path):
    checkpoint = tmp_path / "model"
    checkpoint.mkdir()
    (checkpoint / "weights").write_text("step 4")
    saved = Resume(tmp_path / "state", "k")
    saved.keep_best(checkpoint)
    (checkpoint / "weights").write_text("step 5, not the best")
    saved.restore_best(checkpoint)
    assert (checkpoint / "weights").read_text() == "step 4"

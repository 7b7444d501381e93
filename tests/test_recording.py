"""Recorded LLM answers (countercase.runtime.recording): replay, resumable journals, byte-stable files,
a changed model asked again, corrupt files named with their line, and the replay check's sample.

The requests are the real fact-sheet prompts of AILA queries; ``ask`` stands in for the model
here because what is tested is the storage (the real model's recording is tested in
test_factsheet_llm.py and test_rerank_llm.py when it is installed)."""

from __future__ import annotations

import gzip
import json

import pytest

from countercase.factsheet.llm import PROMPT, LlmUnavailableError
from countercase.factsheet.llm_replay import draw, recorded
from countercase.runtime.recording import Recording, RecordingError, read_entries, request_key

SETTINGS = {"temperature": 0.0, "max_tokens": 500, "n_ctx": 4096}


@pytest.fixture(scope="module")
def requests(aila_files):
    queries = aila_files.queries()
    return [{"messages": [{"role": "user", "content": PROMPT.format(text=queries[q][:800])}]}
            for q in ("AILA_Q11", "AILA_Q12", "AILA_Q30")]


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"one model")
    return path


class Asker:
    """Answers with the prompt's length and counts the questions."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, request: dict, settings: dict) -> str:
        self.asked += 1
        return json.dumps({"chars": len(request["messages"][0]["content"])})


def test_answers_are_recorded_then_replayed(tmp_path, model_file, requests):
    path, ask = tmp_path / "factsheets.jsonl.gz", Asker()
    with Recording(path, lambda: model_file) as recording:
        first = [recording.answer("chat", r, SETTINGS, ask) for r in requests]
        assert recording.counts.asked_missing == 3 and ask.asked == 3
    assert path.is_file() and not recording.journal.exists()
    with Recording(path, lambda: model_file) as again:
        assert [again.answer("chat", r, SETTINGS, ask) for r in requests] == first
        assert again.counts.replayed == 3 and again.counts.asked == 0 and ask.asked == 3
    other = {**SETTINGS, "max_tokens": 64}  # other decoding settings: another entry
    with Recording(path, lambda: model_file) as again:
        again.answer("chat", requests[0], other, ask)
        assert again.counts.asked_missing == 1


def test_a_live_run_asks_everything_again(tmp_path, model_file, requests):
    path, ask = tmp_path / "r.jsonl.gz", Asker()
    with Recording(path, lambda: model_file) as recording:
        recording.answer("chat", requests[0], SETTINGS, ask)
    with Recording(path, lambda: model_file, mode="live") as live:
        live.answer("chat", requests[0], SETTINGS, ask)
        assert live.counts.asked_live_mode == 1 and ask.asked == 2
    with pytest.raises(ValueError, match="replay or live"):
        Recording(path, lambda: model_file, mode="sometimes")


def test_an_entry_of_another_model_is_asked_again_and_counted(tmp_path, model_file, requests):
    path, ask = tmp_path / "r.jsonl.gz", Asker()
    with Recording(path, lambda: model_file) as recording:
        recording.answer("chat", requests[0], SETTINGS, ask)
    other = tmp_path / "other.gguf"
    other.write_bytes(b"another model")
    with Recording(path, lambda: other) as recording:
        recording.answer("chat", requests[0], SETTINGS, ask)
        assert recording.counts.asked_model_changed == 1 and ask.asked == 2
    (entry,) = read_entries(path)
    assert entry["model_sha256"] == recording.model_sha  # re-recorded by the new model


def test_without_the_model_recorded_answers_replay_and_missing_ones_fail(tmp_path, model_file,
                                                                         requests):
    path, ask = tmp_path / "r.jsonl.gz", Asker()
    with Recording(path, lambda: model_file) as recording:
        recording.answer("chat", requests[0], SETTINGS, ask)

    def no_model():
        raise LlmUnavailableError("the model packages are not installed")

    def no_llama(request, settings):
        raise LlmUnavailableError("llama-cpp-python is not installed")

    with Recording(path, no_model) as recording:
        assert recording.answer("chat", requests[0], SETTINGS, no_llama) == ask(requests[0], {})
        with pytest.raises(LlmUnavailableError, match="llama-cpp-python"):
            recording.answer("chat", requests[1], SETTINGS, no_llama)
        assert recording.counts.replayed == 1 and recording.counts.replayed_unchecked == 1


def test_a_killed_run_keeps_its_answers_in_the_journal(tmp_path, model_file, requests):
    path, ask = tmp_path / "r.jsonl.gz", Asker()
    killed = Recording(path, lambda: model_file)
    killed.answer("chat", requests[0], SETTINGS, ask)
    killed.answer("chat", requests[1], SETTINGS, ask)  # no close(): the process died here
    assert not path.exists() and killed.journal.is_file()
    with Recording(path, lambda: model_file) as resumed:
        for request in requests:
            resumed.answer("chat", request, SETTINGS, ask)
        assert resumed.counts.replayed == 2 and resumed.counts.asked_missing == 1
    assert len(read_entries(path)) == 3 and not resumed.journal.exists()


def test_the_same_entries_give_the_same_bytes(tmp_path, model_file, requests):
    files = []
    for name, order in (("a", requests), ("b", requests[::-1])):
        path = tmp_path / name / "r.jsonl.gz"
        with Recording(path, lambda: model_file) as recording:
            for request in order:
                recording.answer("chat", request, SETTINGS, Asker())
        files.append(path.read_bytes())
    assert files[0] == files[1]


def _write_lines(path, lines):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def test_a_corrupt_recording_names_its_file_and_line(tmp_path, model_file, requests):
    path = tmp_path / "r.jsonl.gz"
    with Recording(path, lambda: model_file) as recording:
        recording.answer("chat", requests[0], SETTINGS, Asker())
    good = gzip.open(path, "rt", encoding="utf-8").read().strip()
    _write_lines(path, [good, '{"key": "cut off'])
    with pytest.raises(RecordingError, match=r"r\.jsonl\.gz, line 2: not JSON"):
        Recording(path, lambda: model_file)
    edited = json.loads(good)
    edited["settings"]["max_tokens"] = 9
    _write_lines(path, [json.dumps(edited)])
    with pytest.raises(RecordingError, match="line 1: its key is not the hash"):
        Recording(path, lambda: model_file)
    _write_lines(path, ['{"answer": "yes"}'])
    with pytest.raises(RecordingError, match="line 1: an entry needs .* missing key"):
        Recording(path, lambda: model_file)
    path.write_bytes(gzip.compress((good + "\n").encode())[:-12])  # a truncated file
    with pytest.raises(RecordingError, match=r"r\.jsonl\.gz, after line \d: cannot be read"):
        Recording(path, lambda: model_file)


def test_the_replay_check_draws_a_fixed_sample(tmp_path, model_file, requests):
    for stage in ("factsheets", "llm_check"):
        with Recording(tmp_path / f"{stage}.jsonl.gz", lambda: model_file) as recording:
            for request in requests:
                recording.answer("chat", request, {**SETTINGS, "stage": stage}, Asker())
    entries = recorded(tmp_path)
    assert [s for s, _ in entries] == ["factsheets"] * 3 + ["llm_check"] * 3
    sample = draw(entries, 4, seed=2019)
    assert sample == draw(entries, 4, seed=2019) and len(sample) == 4
    assert len(draw(entries, 20, seed=2019)) == 6
    assert request_key("chat", requests[0], SETTINGS) != request_key("p_yes", requests[0],
                                                                     SETTINGS)


def test_the_order_of_a_schema_is_part_of_the_request(tmp_path, model_file, requests):
    """llama.cpp's grammar follows a schema's property order: a recording must keep it, and a
    reordered schema is another request (sorted keys once gave other answers on re-asking)."""
    schema = {"type": "object", "properties": {"petitioner_type": {"type": "string"},
                                               "ages": {"type": "array"}}}
    settings = {**SETTINGS, "response_format": {"type": "json_object", "schema": schema}}
    reordered = {**SETTINGS, "response_format": {"type": "json_object", "schema": {
        "type": "object", "properties": dict(reversed(schema["properties"].items()))}}}
    assert request_key("chat", requests[0], settings) != request_key("chat", requests[0],
                                                                      reordered)
    path = tmp_path / "r.jsonl.gz"
    with Recording(path, lambda: model_file) as recording:
        recording.answer("chat", requests[0], settings, Asker())
    (entry,) = read_entries(path)
    assert list(entry["settings"]["response_format"]["schema"]["properties"]) == \
        ["petitioner_type", "ages"]
    assert list(entry["request"]["messages"][0]) == ["role", "content"]


def test_a_corrupt_recording_is_one_line_at_the_command(tmp_path, run_cli, model_file, requests):
    folder = tmp_path / "recordings"
    with Recording(folder / "factsheets.jsonl.gz", lambda: model_file) as recording:
        recording.answer("chat", requests[0], SETTINGS, Asker())
    good = gzip.open(folder / "factsheets.jsonl.gz", "rt", encoding="utf-8").read().strip()
    _write_lines(folder / "llm_check.jsonl.gz", [good, good[:40]])
    status, _, err = run_cli("llm-replay", "--recordings", str(folder))
    assert status == 2, err
    assert err.strip().count("\n") == 0
    assert "llm_check.jsonl.gz, line 2: not JSON" in err and "Traceback" not in err

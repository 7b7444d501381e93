"""The parallel runner (countercase.dag.parallel) on a small DVC project: what it writes, and
what it records in dvc.lock, is what a sequential ``dvc repro`` writes and records; independent
stages overlap; a stage whose inputs did not change is not run again; a failing stage is named."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

DVC = str(Path(sys.executable).with_name("dvc"))
PY = sys.executable

# a -> b -> d and c -> d; c is independent of a and b. Each command notes when it ran.
_STEP = ("import json, sys, time, pathlib; name, ins = sys.argv[1], sys.argv[2:]; "
         "log = pathlib.Path('log'); log.mkdir(exist_ok=True); "
         "(log / (name + '.start')).write_text(repr(time.time())); time.sleep(1.0); "
         "text = ''.join(pathlib.Path(i).read_text() for i in ins) + name + '\\n'; "
         "pathlib.Path('out').mkdir(exist_ok=True); pathlib.Path('out', name).write_text(text); "
         "(log / (name + '.end')).write_text(repr(time.time()))")


def _stage(name: str, ins: list[str]) -> dict:
    return {"cmd": f'{PY} step.py {name} {" ".join(ins)}'.strip(),
            "deps": ["step.py", *ins], "outs": [f"out/{name}"]}


def _project(root: Path, fail: str | None = None) -> Path:
    root.mkdir()
    (root / "step.py").write_text(_STEP.replace("; ", "\n") + "\n")
    if fail:
        (root / "step.py").write_text((root / "step.py").read_text()
                                      + f"if name == {fail!r}: sys.exit(3)\n")
    (root / "seed.txt").write_text("seed\n")
    (root / "params.yaml").write_text("seed: 2019\n")
    stages = {"a": {**_stage("a", ["seed.txt"]), "params": ["seed"]}, "b": _stage("b", ["out/a"]),
              "c": _stage("c", ["seed.txt"]), "d": _stage("d", ["out/b", "out/c"])}
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    for command in (["git", "init", "-q"], [DVC, "init", "-q"],
                    [DVC, "config", "core.analytics", "false"]):
        subprocess.run(command, cwd=root, check=True, capture_output=True)
    return root


def _parallel(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "countercase.dag.parallel", "-j", "2", *args], cwd=root,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not Path(DVC).is_file():
        pytest.skip("dvc is not installed beside this interpreter")
    base = tmp_path_factory.mktemp("repro")
    sequential, parallel = _project(base / "sequential"), _project(base / "parallel")
    subprocess.run([DVC, "repro", "-q"], cwd=sequential, check=True, capture_output=True)
    done = _parallel(parallel)
    assert done.returncode == 0, done.stderr
    return sequential, parallel, done


def _lock(root: Path) -> dict:
    return yaml.safe_load((root / "dvc.lock").read_text())


def test_the_outputs_and_the_lock_are_those_of_a_sequential_repro(built):
    sequential, parallel, _ = built
    for name in "abcd":
        assert (parallel / "out" / name).read_bytes() == (sequential / "out" / name).read_bytes()
    assert (parallel / "out" / "d").read_text() == "seed\na\nb\nseed\nc\nd\n"
    assert _lock(parallel) == _lock(sequential)
    status = subprocess.run([DVC, "status", "--json"], cwd=parallel, capture_output=True,
                            text=True, check=True)
    assert json.loads(status.stdout) == {}


def test_independent_stages_run_side_by_side(built):
    _, parallel, _ = built
    span = {n: (float((parallel / "log" / f"{n}.start").read_text()),
                float((parallel / "log" / f"{n}.end").read_text())) for n in "abcd"}
    assert span["c"][0] < span["a"][1] and span["a"][0] < span["c"][1]  # a and c overlap
    assert span["b"][0] >= span["a"][1] and span["d"][0] >= max(span["b"][1], span["c"][1])


def test_nothing_changed_runs_nothing_and_a_changed_input_runs_what_depends_on_it(built):
    _, parallel, _ = built
    done = _parallel(parallel)
    assert done.returncode == 0 and "ran 0 stages, 4 unchanged" in done.stdout
    before = (parallel / "log" / "c.start").read_text()
    (parallel / "seed.txt").write_text("seed 2\n")
    try:
        done = _parallel(parallel, "b")  # a target: b and what it needs, nothing else
        assert done.returncode == 0 and "ran 2 stages, 0 unchanged" in done.stdout
        assert (parallel / "out" / "b").read_text() == "seed 2\na\nb\n"
        assert (parallel / "log" / "c.start").read_text() == before
    finally:
        (parallel / "seed.txt").write_text("seed\n")


def test_a_failing_stage_is_named_and_what_depends_on_it_does_not_run(tmp_path):
    if not Path(DVC).is_file():
        pytest.skip("dvc is not installed beside this interpreter")
    root = _project(tmp_path / "failing", fail="b")
    done = _parallel(root)
    assert done.returncode != 0
    assert "stage 'b' failed" in done.stderr and "Traceback" not in done.stderr
    assert not (root / "out" / "d").exists() and (root / "out" / "c").exists()
    shutil.rmtree(root)


def test_a_stage_found_unchanged_readies_the_next_without_waiting(tmp_path):
    """a unchanged, b and c to rebuild: b is ready as soon as a is found unchanged, so b and c
    run side by side instead of b waiting for c to end."""
    if not Path(DVC).is_file():
        pytest.skip("dvc is not installed beside this interpreter")
    root = _project(tmp_path / "ready")
    assert _parallel(root).returncode == 0
    (root / "out" / "b").unlink()
    (root / "out" / "c").unlink()
    done = _parallel(root)
    assert done.returncode == 0 and "ran 3 stages, 1 unchanged" in done.stdout, done.stdout
    span = {n: (float((root / "log" / f"{n}.start").read_text()),
                float((root / "log" / f"{n}.end").read_text())) for n in "bc"}
    assert span["b"][0] < span["c"][1] and span["c"][0] < span["b"][1]  # b and c overlap


def test_a_stage_that_times_what_it_runs_runs_alone(tmp_path):
    """A stage of ALONE (latency) never overlaps another, though the graph would allow it."""
    from countercase.dag.parallel import ALONE

    if not Path(DVC).is_file():
        pytest.skip("dvc is not installed beside this interpreter")
    root = _project(tmp_path / "alone")
    timed = sorted(ALONE)[0]
    stages = {"a": _stage("a", ["seed.txt"]), timed: _stage(timed, ["seed.txt"]),
              "c": _stage("c", ["seed.txt"])}
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    done = _parallel(root)
    assert done.returncode == 0, done.stderr
    span = {n: (float((root / "log" / f"{n}.start").read_text()),
                float((root / "log" / f"{n}.end").read_text())) for n in stages}
    for other in ("a", "c"):
        assert span[timed][1] <= span[other][0] or span[other][1] <= span[timed][0], other
    assert span["a"][0] < span["c"][1] and span["c"][0] < span["a"][1]  # the others overlap

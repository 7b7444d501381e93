"""The opt-in pipeline (experiments/dvc.yaml, `make repro-extended`): the fine-tuned encoder's
conditions run there and nowhere else, its guard names the default stage to run first, and its
scores are read beside the default pipeline's."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from countercase import layout
from countercase.evaluate.regressions import select
from countercase.report import opt_in
from countercase.report.outputs import with_opt_in
from countercase.retrieve.registry import BY_NAME, DEFAULT, OPT_IN

ROOT = Path(__file__).resolve().parents[1]


def _stages(pipeline: Path) -> dict:
    return yaml.safe_load((ROOT / pipeline).read_text())["stages"]


def test_the_default_pipeline_never_reads_the_fine_tuned_encoders_outputs():
    from countercase.dag.stages import BY_NAME as STAGE

    opt_in_outputs = {str(p) for name in _stages(layout.OPT_IN_PIPELINE)
                      for kind in ("outs", "metrics") for p in STAGE[name].outputs[kind]}
    for name, stage in _stages(layout.PIPELINE).items():
        read = set(stage.get("deps", []))
        assert not read & opt_in_outputs, name  # as a dep it would pull the opt-in stages in


def test_the_opt_in_conditions_are_those_of_the_fine_tuned_encoder():
    assert {c.name for c in OPT_IN} == {"dense_ft", "hybrid_ft", "full_ft", "tuned_ft"}
    assert not {c.name for c in DEFAULT} & {c.name for c in OPT_IN}
    assert len(DEFAULT) + len(OPT_IN) == len(BY_NAME)


def test_regress_all_splits_the_regressions_by_pipeline():
    default, extended = select(ROOT / "regressions", []), select(ROOT / "regressions", [], True)
    assert default and extended
    assert all(not BY_NAME[r["condition"]].opt_in for r in default)
    assert all(BY_NAME[r["condition"]].opt_in for r in extended)
    named = select(ROOT / "regressions", ["citations/dense_ft"])  # a name picks either kind
    assert [r["condition"] for r in named] == ["dense_ft"]


def test_the_guard_names_the_default_stage_to_run_first(tmp_path):
    for pipeline in (layout.PIPELINE, layout.OPT_IN_PIPELINE):
        (tmp_path / pipeline).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / pipeline, tmp_path / pipeline)
    lacking = opt_in.missing(tmp_path)
    stages = [stage for stage, _ in lacking]
    assert "embed" in stages and "evaluate" in stages  # what embed_ft and evaluate_ft read
    assert stages.index("embed") < stages.index("evaluate")  # in the default pipeline's order
    assert "embed_ft" not in stages  # an opt-in stage's own output is for it to write
    for _, path in lacking:
        (tmp_path / path).mkdir(parents=True, exist_ok=True)
    assert opt_in.missing(tmp_path) == []


def test_the_opt_in_scores_and_tests_are_read_beside_the_default_ones():
    default = {"citations": {"full": {"MAP": 0.2}, "dense": {"MAP": 0.1}}}
    extended = {"citations": {"dense_ft": {"MAP": 0.15}}}
    assert with_opt_in(default, extended)["citations"] == {
        "full": {"MAP": 0.2}, "dense": {"MAP": 0.1}, "dense_ft": {"MAP": 0.15}}
    tests = {"citations": {"n": 3, "significance": {"MAP": {"full": {"dense": {"p": 0.5}}}}}}
    added = {"citations": {"n": 3, "significance": {"MAP": {"full": {"dense_ft": {"p": 0.01}}}}}}
    merged = with_opt_in(tests, added)["citations"]
    assert merged["significance"]["MAP"]["full"] == {"dense": {"p": 0.5}, "dense_ft": {"p": 0.01}}
    assert with_opt_in(default, None) is default  # the opt-in pipeline has not run

"""The stage budgets (params.yaml ``budgets``): one table for every stage of both pipelines, within the
limits of issue 40, and a rule, written before any budgeted run, whose knobs are real params."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from countercase import layout
from countercase.config import ConfigError, load_params
from countercase.report.stage_times import markdown

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def raw_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def _stages(pipeline: Path) -> set[str]:
    return set(yaml.safe_load((ROOT / pipeline).read_text())["stages"])


def test_every_stage_of_both_pipelines_has_a_budget():
    default, opt_in = _stages(layout.PIPELINE), _stages(layout.OPT_IN_PIPELINE)
    budgets = load_params(ROOT / "params.yaml").budgets
    assert set(budgets.minutes) == default | opt_in
    assert set(budgets.opt_in) == opt_in  # outside the default pipeline's total
    assert budgets.default_minutes() <= budgets.total_minutes


def _with_budgets(raw: dict, tmp_path: Path, **changes) -> Path:
    budgets = {**raw["budgets"], "minutes": {**raw["budgets"]["minutes"], **changes}}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({**raw, "budgets": budgets}), encoding="utf-8")
    return path


def test_a_budget_past_its_limit_is_refused_with_the_stage_named(raw_params, tmp_path):
    with pytest.raises(ConfigError, match=r"tune: 16.0 min is outside \(0, 15.0\]"):
        load_params(_with_budgets(raw_params, tmp_path, tune=16))
    with pytest.raises(ConfigError, match="embed: 30.0 min is outside"):  # floors stop at 25
        load_params(_with_budgets(raw_params, tmp_path, embed=30))
    total = raw_params["budgets"]["total_minutes"]
    with pytest.raises(ConfigError, match=f"sum to .* more than total_minutes {total}"):
        load_params(_with_budgets(raw_params, tmp_path, tune=15, evaluate=15))


def test_opt_in_stages_stay_outside_the_total(raw_params):
    budgets = load_params(ROOT / "params.yaml").budgets
    counted = sum(m for s, m in budgets.minutes.items() if s not in budgets.opt_in)
    assert budgets.default_minutes() == pytest.approx(counted)
    assert set(budgets.opt_in) <= set(budgets.minutes)


def test_the_rule_names_a_quality_floor_and_real_knobs(raw_params):
    rule = yaml.safe_load((ROOT / "configs" / "budget_rule.yaml").read_text(encoding="utf-8"))
    assert rule["quality_floor"] and rule["rule"]
    for stage, knob in rule["knobs"].items():
        assert stage in raw_params["budgets"]["minutes"], stage
        for key in ("size", "then"):
            name = knob.get(key)
            if name and name != "none":
                section, field = name.split(".")
                assert field in raw_params[section], name


def test_the_stage_table_marks_what_runs_over_and_what_has_not_run():
    table = {"stages": {"ingest": {"seconds": 30.0, "finished": "2026-11-27T00:00:00+00:00"},
                        "tune": {"seconds": 600.0, "finished": "2026-11-27T00:10:00+00:00"}},
             "total_seconds": 630.0, "total_minutes": 10.5}
    text = markdown(table, {"ingest": 1, "tune": 3, "paper": 1})
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()[2:]}
    assert "**over**" in rows["`tune`"] and "**over**" not in rows["`ingest`"]
    assert "not run yet" in rows["`paper`"]
    assert rows["total"].split("|")[4].strip() == "5"


def test_the_first_stage_ablations_are_the_rules_list():
    from countercase.retrieve.registry import SYSTEMS

    rule = yaml.safe_load((ROOT / "configs" / "budget_rule.yaml").read_text(encoding="utf-8"))
    first_stage = [c for c in SYSTEMS if c.reference == "no_rerank" and c.name != "rerank"]
    assert [c.name for c in first_stage] == rule["evaluate_first_stage_ablations"]
    assert all("rerank" not in c.steps for c in first_stage)


def test_the_int8_decisions_are_what_params_yaml_holds():
    """configs/int8_choice.yaml names the values its decisions set; params.yaml must hold them
    (a decision that governs nothing, or a value nobody decided, fails here)."""
    choice = yaml.safe_load((ROOT / "configs" / "int8_choice.yaml").read_text(encoding="utf-8"))
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    assert (ROOT / "configs" / "int8_rule.yaml").is_file()
    for component, found in choice.items():
        for name, value in (found.get("adopted") or {}).items():
            section, field = name.split(".")
            assert raw[section][field] == value, (component, name)


def test_int8_holds_only_for_the_collections_named():
    from countercase.config import IndexParams
    from countercase.index.run import task_precision

    int8 = IndexParams(precision="onnx-int8", int8_tasks=["precedents"])
    assert task_precision(int8, "precedents") == "onnx-int8"
    assert task_precision(int8, "statutes") == "float32"
    assert task_precision(IndexParams(precision="float32"), "precedents") == "float32"

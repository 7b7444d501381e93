"""Choices are adopted through files: the stage that applies a rule writes its choice file, the
stages that read it declare it as a DVC dependency, and params.yaml holds none of its values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from countercase import layout
from countercase.config import ADOPTABLE, CHOICES, ConfigError, Params, load_params
from countercase.reranker.choice import MARGIN, decide
from countercase.retrieve.choices import Choices
from countercase.retrieve.registry import system

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ("dvc.yaml", "experiments/dvc.yaml")
# the stages that write a choice read none that follows from their own (load_params' adopt=)
WRITERS_ADOPT = {"tune": (), "train_reranker": ("tuning",),
                 "perturb": ("tuning", "reranker", "ltr"), "train_ltr": ("tuning", "reranker")}
# the params sections whose values a choice sets
READS = {"tuning": ("retrieve",), "reranker": ("retrieve",), "trees": ("perturb",),
         "ltr": ("perturb",), "serving": ("retrieve",)}


def _stages() -> dict:
    return {name: stage for pipeline in PIPELINES
            for name, stage in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items()}


def _params(stage: dict) -> set[str]:
    found = set()
    for entry in stage.get("params", []):
        found |= set(entry) if isinstance(entry, dict) else {entry}
    return found


def _outs(stage: dict) -> set[str]:
    return {next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])}


def test_params_yaml_holds_no_value_a_choice_file_holds():
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    held = [key for choice in CHOICES.values() for key in choice.keys
            if key.split(".")[1] in raw.get(key.split(".")[0], {})]
    assert not held


def test_every_choice_file_is_written_by_its_stage_and_declared_by_each_reader():
    stages = _stages()
    for name in ADOPTABLE:
        path, writer = CHOICES[name].path, CHOICES[name].stage
        assert str(path) in _outs(stages[writer]), (writer, path)
    lacking = {}
    for stage_name, stage in stages.items():
        declared = _params(stage)
        deps = set(stage.get("deps", []))
        adopts = WRITERS_ADOPT.get(stage_name, ADOPTABLE)
        for name in adopts:
            keys = {k for k in declared if k.split(".")[0] in READS[name] and "." in k}
            # any retrieve key: the stage runs the pipeline, which the tuned values shape (the
            # ltr choice names the systems served and searched, which no pipeline reads)
            reads = (any(section in declared for section in READS[name])
                     or bool(keys & set(CHOICES[name].keys))
                     or ("retrieve" in READS[name] and name != "ltr" and bool(keys)))
            if reads and str(CHOICES[name].path) not in deps:
                lacking.setdefault(stage_name, []).append(str(CHOICES[name].path))
    assert not lacking, f"stages that read a choice without declaring its file: {lacking}"


def test_only_the_writers_adopt_fewer_choices():
    """Every stage adopts every choice but the writers, whose ``adopt=`` is the table above."""
    found = re.findall(r"load_params\(params_path, adopt=\(([^)]*)\)\)",
                       "".join(p.read_text() for p in (ROOT / "src/countercase/cli").glob("*.py")))
    assert sorted(tuple(re.findall(r'"(\w+)"', f)) for f in found) == sorted(
        WRITERS_ADOPT.values())


def _project(tmp_path: Path, params: str = "seed: 1\n") -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "params.yaml").write_text(params)
    return tmp_path / "params.yaml"


def test_the_choices_set_the_values_they_hold(tmp_path):
    path = _project(tmp_path)
    choice = {"precedents": {"pipeline": {"dense": 0.25, "mmr": True}, "facts": {"facts": 0.5},
                             "reduction": {"reduction": "facts"}},
              "statutes": {"dense": 1.0, "mmr": False, "bridge_depth": 10,
                           "bridge_rank_offset": 5.0, "direct_weight": 0.25}}
    (tmp_path / layout.TUNING_CHOICE).write_text(yaml.safe_dump(choice))
    (tmp_path / layout.RERANKER_CHOICE).write_text("use_rerank: false\nfirst_stage_weight: 0.5\n")
    (tmp_path / layout.TREES_CHOICE).write_text("fact_weight: 2.0\n")
    (tmp_path / layout.LTR_CHOICE).write_text("serve: true\n")
    (tmp_path / layout.SERVING_CHOICE).write_text(
        "route: {description: bm25, judgment: ltr_unmasked}\n"
        "order: {description: [bm25], judgment: [ltr_unmasked, bm25]}\n")
    params = load_params(path)
    r = params.retrieve
    assert r.fusion_weights["precedents"] == {"bm25": 1.0, "dense": 0.25}
    assert r.mmr_tasks == ["precedents"] and r.fact_weight == 0.5
    assert (r.query_reduction, r.bridge_depth, r.bridge_rank_offset) == ("facts", 10, 5.0)
    assert r.fusion_weights["statutes"] == {"bm25": 1.0, "dense": 1.0}
    assert r.bridge_weights == {"direct": 0.25, "precedents": 1.0}
    assert r.rerank_first_stage_weight == 0.5
    # whether it reranks is the systems' step, run when the chosen value is true
    chosen = Choices({"reranker": tmp_path / layout.RERANKER_CHOICE})
    assert not system("full").served(r, chosen).running("rerank")
    assert system("rerank").served(r, chosen).running("rerank")  # the lever reranks always
    assert params.perturb.fact_weight == 2.0
    # the ltr rule's consequence, the trees searching its unmasked twin; the serving rule's,
    # the route served
    assert (params.retrieve.system, params.perturb.learned) == ("served", "ltr_unmasked")
    (tmp_path / layout.LTR_CHOICE).write_text("serve: false\n")
    assert load_params(path).perturb.learned is None
    assert load_params(path, adopt=()) == Params(seed=1)  # a writer reads no choice
    assert load_params(path, adopt=("trees",)).retrieve == Params().retrieve


def test_a_chosen_value_in_params_yaml_names_the_stage_that_chooses_it(tmp_path):
    path = _project(tmp_path, "retrieve:\n  fact_weight: 0.5\n")
    for adopt in (ADOPTABLE, ()):  # a stage that adopts no choice refuses it too
        with pytest.raises(ConfigError, match=r"retrieve.fact_weight: chosen by stage tune"):
            load_params(path, adopt=adopt)


@pytest.mark.parametrize("text, named", [("[1, 2]\n", "not a mapping"),
                                         ("precedents: {}\n", "no pipeline.dense"),
                                         ("{unclosed\n", "cannot read the choice file")])
def test_a_broken_choice_file_is_named(tmp_path, text, named):
    path = _project(tmp_path)
    (tmp_path / layout.TUNING_CHOICE).write_text(text)
    with pytest.raises(ConfigError, match=named) as error:
        load_params(path)
    assert "tuning_choice.yaml" in str(error.value)


def test_the_reranker_is_on_only_past_the_margin():
    def validation(blended: float) -> dict:
        return {"best_first_stage_weight": 0.5, "dataset": "dev", "no_rerank": {"MAP": 0.1},
                "first_stage_weight": {"0.5": {"MAP": blended}}}
    assert decide(validation(0.1 + 2 * MARGIN))["use_rerank"]
    off = decide(validation(0.1 + MARGIN / 2))
    assert not off["use_rerank"] and off["first_stage_weight"] == 0.5
    assert off["decision"].startswith("off")

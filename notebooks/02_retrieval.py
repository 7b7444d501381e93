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
# # 02 Retrieval
# **What it shows:** the retrieval pipeline on the AILA 2019 corpus: one search with each stage's
# score, the statute search, every system's scores, and a comparison with paired tests.
#
# **What to change:** `QUERY`, `SYSTEM` (any name of `configs/systems.yaml`) and `SYSTEMS` (the
# stored runs compared); notebook 05 adds a system of your own. Run `dvc repro evaluate` first.
# The logic lives in `countercase.retrieve`, `countercase.experiment` and `countercase.evaluate`;
# datasets come by id from `countercase.datasets`.

# %% tags=["parameters"]
QUERY = "AILA_Q12"  # the query searched below
SYSTEM = None  # the pipeline searched below, by its name in configs/systems.yaml (None: served)
SYSTEMS = ["bm25_docs", "bm25", "full"]  # stored runs compared (stage evaluate)
CITATION_SYSTEMS = ["bm25_docs", "full", "reduced_boost", "full_docs", "full_docs_prior"]

# %%
import json

import pandas as pd

from countercase import datasets, layout
from countercase.case import Workspace
from countercase.experiment import Experiment
from countercase.retrieve.runs import read_trec_run
from countercase.retrieve.filters import SearchFilter
from countercase.retrieve.load import open_retriever, open_statute_search
from countercase.retrieve.registry import system

workspace = Workspace()  # the project's files, found from wherever the notebook runs
at = workspace.path
params = system(SYSTEM or workspace.params.retrieve.system).served(workspace.params.retrieve)
queries = datasets.load("aila2019/task1", at(layout.AILA)).queries
precedents = open_retriever("precedents", params, workspace.index_paths)

# %% [markdown]
# A query's top judgments, each with the passage that ranked it, its page, its section type
# and every stage's score. Change the filter to see which precedents a year range keeps.

# %%
result = precedents.search(queries[QUERY], SearchFilter.build(year_from=1950))
pd.DataFrame([{"rank": h.rank, "judgment": h.doc_id, "year": h.metadata["year"],
               "page": h.page_number, "section": h.section_type,
               **{k: round(v, 4) for k, v in h.scores.items()}} for h in result.documents])

# %%
statutes = open_statute_search(params, workspace.index_paths)
hits = statutes.search(queries[QUERY]).documents
pd.DataFrame([{"rank": h.rank, "statute": h.doc_id, "text": h.text[:80],
               **{k: round(v, 4) for k, v in h.scores.items()}} for h in hits])

# %% [markdown]
# The evaluation (`metrics/retrieval.json`): every system of `configs/systems.yaml` on the test
# queries AILA_Q11..Q50.

# %%
scores = json.loads(at(layout.metrics("retrieval")).read_text())
pd.concat({task: pd.DataFrame(by_condition).T for task, by_condition in scores.items()})

# %% [markdown]
# Per-query MAP of the systems, to see where one wins.

# %%
table = pd.read_csv(at(layout.EVALUATE / "aila2019-task1" / "per_query.csv"))
table.pivot(index="qid", columns="condition", values="MAP")[SYSTEMS].round(3)

# %% [markdown]
# A comparison of your own: any function from topics (qid -> text) to a run (qid -> ranked
# (doc, score)) is a system. Here the evaluate stage's stored runs stand in; replace one with
# your ranking and the same call scores it and tests it against the baseline (Holm-corrected
# paired tests, Cohen's d).

# %%
def stored(name):
    return lambda topics: read_trec_run(at(layout.EVALUATE / "aila2019-task1" / f"{name}.run"))


result = Experiment({name: stored(name) for name in SYSTEMS},
                    datasets.load("aila2019/task1/test", at(layout.AILA)), baselines=[SYSTEMS[0]])
pd.DataFrame(result.significance["MAP"][SYSTEMS[0]]).T

# %% [markdown]
# The citation collection (`citations/tuning`, `citations/heldout`): corpus judgments that cite
# earlier ones, as masked queries. The collection's rule (only judgments decided no later than
# the query, never itself nor its near-copies) travels with the topics and is applied inside
# every system's search, and checked again on every run by the scoring loop, so a lever is
# compared on hundreds of queries with the same call. Here on the stored held-out runs; the tuning grids
# behind the configuration are in `metrics/tuning.json`, the choice in
# `configs/tuning_choice.yaml`. (`CITATION_SYSTEMS = []` leaves this out, for a project
# without the collection.)

# %%
def stored_citations(name):
    return lambda topics: read_trec_run(at(layout.EVALUATE / "citations" / f"{name}.run"))


if CITATION_SYSTEMS:
    heldout = datasets.load("citations/heldout", at(layout.CITATIONS))
    result = Experiment({name: stored_citations(name) for name in CITATION_SYSTEMS},
                        heldout, baselines=["full"])
    found = pd.concat({"mean": pd.DataFrame(result.aggregate()).T["MAP"],
                       "t p (Holm) vs full": pd.DataFrame(
                           result.significance["MAP"]["full"]).T["t_p_holm"]}, axis=1)
found if CITATION_SYSTEMS else "the citation collection is left out (CITATION_SYSTEMS)"

# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 Counterfactual validity, the LLM check, explanations and topology
# **What it shows:** whether cited precedents move further when a fact they share with the case
# changes than when nothing legal changes; how well the LLM check filters; why each precedent
# was retrieved; and which precedents are robust.
#
# **What to change:** `TREE` (the explained tree shown) and `VALIDITY_ROWS` (False: the metrics
# alone). Run `dvc repro perturb llm_check explain topology` first. The logic lives in
# `countercase.perturb.validity`, `countercase.perturb.llm_check` and `countercase.explain`.

# %% tags=["parameters"]
VALIDITY_ROWS = True  # the validity experiment's rows (trees/validity.csv); False: metrics only
TREE = "AILA_Q30"  # the explained tree shown

# %%
import json

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown

from countercase import layout
from countercase.case import Workspace

at = Workspace().path  # the project's files, found from wherever the notebook runs

validity = json.loads(at(layout.metrics("counterfactual")).read_text())["validity"]
rows = pd.read_csv(at(layout.VALIDITY_ROWS)) if VALIDITY_ROWS else None

# %% [markdown]
# Displacement of the cited precedents per label, granularity and query construction (validity
# cases; the primary condition is marked in the metrics).

# %%
if rows is not None:
    table = (rows[rows["set"] == "validity"]
             .groupby(["granularity", "construction", "label"])["cited_displacement"].mean()
             .unstack("label"))
else:  # the same means, as the metrics hold them
    table = pd.DataFrame({name: {"operative": c.get("operative_mean_paired"),
                                 "incidental": c.get("incidental_mean"),
                                 "placebo": c.get("placebo_mean_paired")}
                          for name, c in validity["by_condition"].items()}).T
ax = table.plot.bar(figsize=(8, 3.5), ylabel="mean |rank change| of cited precedents")
ax.set_title(f"primary: {validity['primary']}, ratio {validity['ratio']}, p {validity['p_value']}")
plt.tight_layout()
table.round(3)

# %% [markdown]
# Per placebo kind and per fact type in the primary condition.

# %%
if rows is not None:
    granularity, construction = validity["primary"].split("/")
    primary = rows[(rows["set"] == "validity") & (rows["granularity"] == granularity)
                   & (rows["construction"] == construction)]
    per_type = primary.groupby(["label", "fact_type"])["cited_displacement"].agg(["mean", "count"])
else:
    per_type = pd.DataFrame(validity["by_condition"][validity["primary"]]["per_fact_type"]).T
per_type.round(3)

# %% [markdown]
# The LLM check: acceptance by citation label and agreement with the two annotators.

# %%
check = json.loads(at(layout.metrics("llm_check")).read_text())
pd.DataFrame({who: {q: v[q]["accuracy"] for q in ("plausible", "operative", "accepted")}
              for who, v in check["agreement"].items() if isinstance(v, dict)}).T

# %% [markdown]
# One explained tree, as its Markdown report (`countercase explain`).

# %%
Markdown(at(layout.EXPLANATIONS / f"{TREE}.md").read_text()[:4000])

# %% [markdown]
# Tree shapes over the AILA and corpus trees, then the most and least robust root precedents
# (robustness against citation in-degree over all of them is in the title).

# %%
topology = json.loads(at(layout.metrics("topology")).read_text())
shapes = pd.DataFrame(topology["trees"]["per_tree"])
found = topology["robustness_vs_indegree"]
ax = shapes[["share_pruned", "type_entropy", "edge_gini"]].plot.hist(
    bins=20, alpha=0.6, figsize=(6, 3.5))
ax.set_title(f"robustness vs in-degree: Spearman {found['spearman']} (95% CI {found['ci']}, "
             f"n {found['n']})", fontsize=9)
pd.DataFrame(topology["precedents"]["most_robust"] + topology["precedents"]["least_robust"])

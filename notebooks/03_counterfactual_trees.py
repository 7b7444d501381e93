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
# # 03 Counterfactual trees
# **What it shows:** which facts of a case decide which precedents apply: a case's fact sheet, its
# rule perturbations, and the perturbation tree with the retrieval run at every node.
#
# **What to change:** `QUERY` (an AILA query id) and `SYSTEM` (the system every node searches).
# Run `dvc repro perturb` first. Everything goes through the facade `countercase.case`, which
# finds the project's outputs from wherever the notebook runs.

# %% tags=["parameters"]
QUERY = "AILA_Q30"  # the case: an AILA query id
SYSTEM = None  # the pipeline every node searches, by its name in configs/systems.yaml
#                (None: the trees' system, params.yaml perturb.system)

# %%
import pandas as pd

from countercase.case import Case, Workspace
from countercase.perturb.rules import candidates

case = Case.from_query(QUERY, Workspace(system=SYSTEM))
case  # the fact sheet, each value with its confidence

# %% [markdown]
# Every single-fact change the rules allow, and the precedents the case retrieves as it stands.

# %%
pd.DataFrame([{"type": p.fact_type, "change": p.description, "basis": p.basis}
              for p in candidates(case.sheet, case.workspace.edges)])

# %%
case.search(k=10)

# %% [markdown]
# A tree of depth 2: which precedents dropped out, which appeared, at every edge.

# %%
tree = case.tree(depth=2, branching=4)
tree

# %%
tree.show_diff("n0", "n0.1")

# %% [markdown]
# Edit a fact by hand: the edited sheet becomes a child of the root and is retrieved for.

# %%
node = tree.edit("n0", {"parties": {"petitioner": {"type": "Minor", "extractor": "manual"}}},
                 "petitioner is a minor")
tree.show_diff("n0", node)

# %% [markdown]
# Sensitivity per fact type in this tree, and the tree as the explained Markdown report.

# %%
tree.sensitivity()

# %%
print(tree.to_markdown()[:3000])

# %% [markdown]
# The same tree in the explorer's page, inside the notebook (`countercase explore` serves it as
# a web app): click a node, edit it, expand it.

# %%
import panel as pn

from countercase.explore.app import page
from countercase.explore.session import Explorer, Judgments

pn.extension()
page(Explorer(case.workspace, Judgments(case.workspace)).open(tree))

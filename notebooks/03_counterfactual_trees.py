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
# Which facts of a case decide which precedents apply: a case's fact sheet, its rule
# perturbations, and the perturbation tree with the retrieval run at every node. Run
# `dvc repro perturb` first. The logic lives in `countercase.factsheet` and `countercase.perturb`.

# %%
import json
import os
from pathlib import Path

import pandas as pd

ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
os.chdir(ROOT)  # the stage outputs are addressed from the project root

from countercase import datasets, layout
from countercase.config import load_params
from countercase.factsheet.rules import extract_rules
from countercase.perturb.rules import candidates
from countercase.perturb.run import retriever_search
from countercase.perturb.tree import PerturbationTree
from countercase.retrieve.load import open_retriever

params = load_params()
edges = pd.read_parquet(layout.SECTION_EDGES)
queries = datasets.load("aila2019/task1").queries
search = retriever_search(open_retriever("precedents", params.retrieve))

# %% [markdown]
# The fact sheet of a query, and every single-fact change the rules allow.

# %%
text = queries["AILA_Q30"]
sheet = extract_rules(text, "AILA_Q30", "query")
pd.DataFrame([{"type": p.fact_type, "change": p.description, "basis": p.basis}
              for p in candidates(sheet, edges)])

# %% [markdown]
# A tree of depth 2 and its edges: which precedents dropped out, which appeared.

# %%
tree = PerturbationTree(sheet, search, edges, k=params.perturb.k, text=text).build(2, 4)
pd.DataFrame([{"node": n.node_id, "change": n.edge.description,
               "dropped": n.diff_vs_parent.dropped, "new": n.diff_vs_parent.new,
               "mean displacement": n.diff_vs_parent.mean_displacement, "pruned": n.pruned}
              for n in tree.nodes.values() if n.edge])

# %% [markdown]
# Edit a fact by hand: the edited sheet becomes a child of the root and is retrieved for.

# %%
edited = sheet.model_dump()
edited["parties"]["petitioner"] = {"type": "Minor", "extractor": "manual"}
node = tree.edit("n0", edited, "petitioner is a minor")
node.diff_vs_parent.dropped, node.diff_vs_parent.new

# %% [markdown]
# Sensitivity per fact type over the 50 AILA trees of the `perturb` stage.

# %%
json.loads(layout.metrics("counterfactual").read_text())["sensitivity_per_fact_type"]

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
# # 01 Corpus and extraction
# **What it shows:** what the `ingest` and `extract` stages produced from the embedded AILA 2019
# corpus and the real PDFs: the judgments' metadata, sections and chunks, and the extraction's
# scores against the gold labels.
#
# **What to change:** nothing to set; filter the tables below to look at another court, year or
# section type. Run `dvc repro extract_eval` first. The logic lives in `countercase`; this
# notebook only looks.

# %%
import json

import pandas as pd

from countercase import layout
from countercase.case import Workspace

at = Workspace().path  # the project's files, found from wherever the notebook runs

metadata = pd.read_parquet(at(layout.METADATA))
chunks = pd.read_parquet(at(layout.CHUNKS))
statutes = pd.read_parquet(at(layout.STATUTE_TABLE))
print(len(metadata), "judgments,", len(chunks), "chunks,", len(statutes), "statute sections")

# %% [markdown]
# Judgments per decade, bench types and outcomes.

# %%
print((metadata["year"] // 10 * 10).value_counts().sort_index())
print(metadata["bench_type"].value_counts())
print(metadata["outcome_label"].value_counts())

# %% [markdown]
# The most cited provisions across the corpus, and chunk sizes in encoder word pieces.

# %%
print(metadata["act_sections"].explode().value_counts().head(20))
print(chunks["n_tokens"].describe())
print(chunks["section_type"].value_counts())

# %% [markdown]
# Extraction accuracy against the hand-labelled gold sample, and segmentation against the
# rhetorical-role annotations.

# %%
print(json.dumps(json.loads(at(layout.metrics("extraction")).read_text()), indent=1)[:3000])

"""The ``countercase`` command: one subcommand per pipeline stage (the DVC stage of the same name).

Every subcommand takes explicit input and output paths and reads its parameters from
``params.yaml``. Errors a user can fix are printed as one line naming the input; nothing
prints a stack trace unless ``--verbose`` asks for it.
"""

from countercase.cli import (  # noqa: F401  (registers the commands)
    biencoder, confirm, corpus, counterfactual, explore, fetch, holdings, ltr, ner, rerank_llm,
    reranker, retrieval, scaleout)
from countercase.cli.base import UserError, app, main

__all__ = ["UserError", "app", "main"]

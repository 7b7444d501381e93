"""The ``countercase`` command: what a user runs first (search, serve, tree, factsheet, explain,
explore), then one subcommand per pipeline stage (the DVC stage of the same name), then
``countercase lab``, the tools that made the labelled samples.

Every subcommand takes explicit input and output paths and reads its parameters from
``params.yaml``. Errors a user can fix are printed as one line naming the input; nothing
prints a stack trace unless ``--verbose`` asks for it.
"""

from countercase.cli import (  # noqa: F401  (registers the commands)
    biencoder, config, confirm, corpus, counterfactual, evaluation, explain, explore, factsheet,
    fetch, holdings, lab, lab_cases, ltr, ner, rerank_llm, reranker, retrieval, scaleout, search)
from countercase.cli.base import UserError, app, main

# --help lists the commands by panel, in the order the panels first appear
USE = ("search", "serve", "tree", "factsheet", "explain", "explore", "config")


def _name(command) -> str:
    return command.name or command.callback.__name__.replace("_", "-")


for _command in app.registered_commands:
    _command.rich_help_panel = ("Use" if _name(_command) in USE
                                else "Pipeline stages and their commands")
app.registered_commands.sort(key=lambda c: USE.index(_name(c)) if _name(c) in USE else len(USE))

__all__ = ["UserError", "app", "main"]

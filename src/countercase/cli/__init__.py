"""The ``countercase`` command: what a user runs first (search, serve, tree, factsheet, explain,
explore), then one subcommand per pipeline stage (the DVC stage of the same name), then
``countercase lab``, the tools that made the labelled samples. A command's module is imported
only when it runs (:mod:`countercase.cli.lazy`).

Every subcommand takes explicit input and output paths and reads its parameters from
``params.yaml``. Errors a user can fix are printed as one line naming the input; nothing
prints a stack trace unless ``--verbose`` asks for it.
"""

from countercase.cli.base import UserError, app, main

__all__ = ["UserError", "app", "main"]

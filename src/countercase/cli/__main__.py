"""``python -m countercase.cli``: the same as the ``countercase`` command."""

from countercase.cli import main

main()

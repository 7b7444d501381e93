"""``countercase explore``: the tree explorer in the browser (countercase.explore)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import UserError, app


@app.command()
def explore(
    root: Optional[Path] = typer.Option(
        None, help="The project folder (default: found from the working directory upwards)."),
    port: int = typer.Option(5006, help="Port to serve on."),
    address: str = typer.Option("127.0.0.1", help="Address to listen on (local by default)."),
    show: bool = typer.Option(False, help="Open a browser tab."),
) -> None:
    """Serve the tree explorer: load a case, review its fact sheet, open its perturbation tree
    node by node with each diff and explanation, edit a node, export the tree."""
    from countercase.case import Workspace, find_root
    from countercase.explore.app import serve

    workspace = Workspace(find_root(root))
    for needed, stage in ((layout.INDEX, "index"), (layout.SECTION_EDGES, "adjacency"),
                          (layout.JUDGMENT_SHEETS, "factsheets"), (layout.CHUNKS, "extract")):
        if not workspace.path(needed).exists():
            raise UserError(f"{workspace.path(needed)} not found: run `dvc repro {stage}` first")
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a port (1 to 65535)")
    serve(workspace, port=port, address=address, show=show)

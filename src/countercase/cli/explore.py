"""``countercase explore``: the tree explorer in the browser (countercase.explore)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.case import Workspace, find_root
from countercase.cli.base import UserError, app, write_json
from countercase.datasets.aila import read_queries
from countercase.explore.app import serve
from countercase.explore.bench import run_bench


@app.command()
def explore(
    root: Optional[Path] = typer.Option(
        None, help="The project folder (default: found from the working directory upwards)."),
    port: int = typer.Option(5006, help="Port to serve on."),
    address: str = typer.Option("127.0.0.1", help="Address to listen on (local by default)."),
    show: bool = typer.Option(False, help="Open a browser tab."),
    system: Optional[str] = typer.Option(
        None, help="The system every node searches, by its name in configs/systems.yaml (a "
        "pipeline over the built indexes or a learned system; default: the learned system "
        "when ltr is served, else params.yaml perturb.system)."),
) -> None:
    """Serve the tree explorer: load a case, review its fact sheet, open its perturbation tree
    node by node with each diff and explanation, edit a node, export the tree."""
    workspace = Workspace(find_root(root), system)
    workspace.params  # noqa: B018 (an unknown system is named before anything is served)
    for needed, stage in ((layout.INDEX, "index"), (layout.SECTION_EDGES, "adjacency"),
                          (layout.JUDGMENT_SHEETS, "factsheets"), (layout.CHUNKS, "extract")):
        if not workspace.path(needed).exists():
            raise UserError(f"{workspace.path(needed)} not found: run `dvc repro {stage}` first")
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a port (1 to 65535)")
    serve(workspace, port=port, address=address, show=show)


@app.command("explore-bench")
def explore_bench(
    queries: int = typer.Option(10, help="AILA queries (the first ones) a tree is built for."),
    out: Path = typer.Option(layout.timing("explorer")),
) -> None:
    """Time the explorer's edit (the child's retrieval and the redrawn panels) on the pipeline's
    outputs: p50/p95/max seconds against the 2 s target."""
    workspace = Workspace(find_root())
    if queries < 1:
        raise UserError(f"--queries {queries}: give 1 or more")
    ids = list(read_queries(workspace.path(layout.AILA_QUERIES)))[:queries]
    report = run_bench(workspace, ids)
    write_json(out, report)
    print(f"edit to redraw: p50 {report['edit_to_redraw_seconds']['p50']} s, "
          f"p95 {report['edit_to_redraw_seconds']['p95']} s over {len(ids)} queries -> {out}")

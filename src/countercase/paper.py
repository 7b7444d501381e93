"""Render the Quarto manuscript ``paper/paper.qmd``.

With Quarto installed, ``quarto render`` does it. Quarto cannot be installed from the registries
these machines reach, so the fallback executes the same ``.qmd`` as a notebook (jupytext reads the
Quarto code cells) and exports HTML with nbconvert: the same cells, the same metrics files.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)


def render_paper(source: Path, out_html: Path, timeout_s: int = 600) -> str:
    """Render ``source`` to ``out_html``; return which renderer ran ("quarto" or "nbconvert")."""
    out_html.parent.mkdir(parents=True, exist_ok=True)
    quarto = shutil.which("quarto")
    if quarto:
        subprocess.run([quarto, "render", str(source), "--to", "html", "--output-dir",
                        str(out_html.parent.resolve())], check=True, timeout=timeout_s)
        rendered = out_html.parent / (source.stem + ".html")
        if rendered != out_html:
            rendered.replace(out_html)
        return "quarto"

    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    # The R Markdown reader parses the same ```{python} cells that Quarto runs.
    notebook = jupytext.reads(source.read_text(encoding="utf-8"), fmt="Rmd")
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    NotebookClient(notebook, timeout=timeout_s, kernel_name="python3",
                   resources={"metadata": {"path": str(source.parent.resolve())}}).execute()
    exporter = HTMLExporter(exclude_input=True)
    body, _ = exporter.from_notebook_node(nbformat.from_dict(notebook))
    out_html.write_text(body, encoding="utf-8")
    log.info("paper rendered with nbconvert -> %s", out_html)
    return "nbconvert"

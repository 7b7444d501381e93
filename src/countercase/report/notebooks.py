"""Execute the project's notebooks (``notebooks/NN_*.py``, jupytext percent files, the only form
committed) on a project's outputs and keep the executed copies (stage ``notebooks``).

Each notebook runs with papermill in the project folder it is given, so its
:class:`countercase.case.Workspace` finds that project's files: the pipeline's outputs in the
stage, a small real project in the tests. Values of a notebook's ``parameters`` cell can be
replaced per notebook. A notebook that fails is reported with its error after the others ran.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)


class NotebookError(CountercaseError):
    """A notebook failed; the message names it and its error."""


def notebook_sources(folder: Path) -> list[Path]:
    found = sorted(folder.glob("[0-9][0-9]_*.py"))
    if not found:
        raise NotebookError(f"no notebooks (NN_name.py) in {folder}")
    return found


def run_notebooks(sources: list[Path], out: Path, root: Path,
                  parameters: dict[str, dict[str, Any]] | None = None,
                  timeout_s: int = 1800) -> dict[str, Any]:
    """Execute ``sources`` in ``root``, each written executed to ``out/<name>.ipynb``."""
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    out.mkdir(parents=True, exist_ok=True)
    seconds, failures = {}, {}
    with tempfile.TemporaryDirectory(prefix="notebooks-") as tmp:
        for source in sources:
            started = time.perf_counter()
            ipynb = Path(tmp) / f"{source.stem}.ipynb"
            jupytext.write(jupytext.read(source), ipynb)
            try:
                papermill.execute_notebook(
                    str(ipynb), str(out / ipynb.name), parameters=(parameters or {}).get(
                        source.stem, {}), kernel_name="python3", cwd=str(root),
                    progress_bar=False, execution_timeout=timeout_s)
            except PapermillExecutionError as error:
                failures[source.stem] = f"{error.ename}: {error.evalue}"
                log.error("notebook %s failed: %s", source.name, failures[source.stem])
            seconds[source.stem] = round(time.perf_counter() - started, 1)
            log.info("notebook %s executed in %.1f s -> %s", source.name, seconds[source.stem],
                     out / ipynb.name)
    if failures:
        raise NotebookError("; ".join(f"{name} failed ({why})" for name, why in failures.items()))
    return {"notebooks": list(seconds), "seconds": seconds}

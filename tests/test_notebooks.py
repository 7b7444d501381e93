"""Every notebook executes, as the ``notebooks`` stage runs it, on the small real project
(conftest ``project``) with the outputs the notebooks read made by the package's own code on
it: the evaluate stage's runs and per-query table, an explained tree, and the metrics as
committed. The parts that need the whole pipeline (the citation collection, the validity
experiment's rows) are left out through the notebooks' parameters."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from countercase import layout
from countercase.report.notebooks import NotebookError, notebook_sources, run_notebooks

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ["bm25_docs", "bm25", "full"]


@pytest.fixture(scope="module")
def notebook_project(project, raw_dir) -> Path:
    from countercase import datasets
    from countercase.case import Case, Workspace
    from countercase.evaluate.run import evaluate_dataset
    from countercase.retrieve.registry import BY_NAME

    shutil.copytree(ROOT / "metrics", project / "metrics", dirs_exist_ok=True)
    for name in ("relevance_judgments_priorcases.txt", "relevance_judgments_statutes.txt"):
        shutil.copy(raw_dir / "aila2019" / name, project / layout.AILA / name)
    workspace = Workspace(project)
    params = workspace.params
    metadata = workspace.path(layout.METADATA)
    import pandas as pd

    doc_ids = set(pd.read_parquet(metadata, columns=["doc_id"])["doc_id"])
    evaluate_dataset(datasets.load("aila2019/task1/test", workspace.path(layout.AILA)),
                     [BY_NAME[c] for c in SYSTEMS], workspace.index_paths,
                     params.retrieve.without("dense"),  # no embeddings
                     params.evaluate, workspace.path(layout.EVALUATE), doc_ids)
    explained = workspace.path(layout.EXPLANATIONS)
    explained.mkdir(parents=True, exist_ok=True)
    tree = Case.from_query("AILA_Q30", workspace).tree(depth=1, branching=3)
    (explained / "AILA_Q30.md").write_text(tree.to_markdown(), encoding="utf-8")
    return project


def test_every_notebook_runs_on_a_small_real_project(notebook_project, tmp_path):
    sources = notebook_sources(ROOT / "notebooks")
    assert [s.stem[:2] for s in sources] == ["01", "02", "03", "04", "05"]
    report = run_notebooks(sources, tmp_path, notebook_project, {
        "02_retrieval": {"SYSTEMS": SYSTEMS, "CITATION_SYSTEMS": [], "SYSTEM": "bm25"},
        "03_counterfactual_trees": {"SYSTEM": "bm25"},
        "04_validity_and_explanations": {"VALIDITY_ROWS": False}})
    assert report["notebooks"] == [s.stem for s in sources]
    for source in sources:
        executed = nbformat.read(tmp_path / f"{source.stem}.ipynb", as_version=4)
        code = [c for c in executed.cells if c.cell_type == "code"]
        assert code and all(c.get("execution_count") for c in code if c.source.strip())
        assert not any(o.get("output_type") == "error" for c in code for o in c.get("outputs", []))
    retrieval = nbformat.read(tmp_path / "02_retrieval.ipynb", as_version=4)
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) for c in retrieval.cells
                    if c.cell_type == "code" for o in c.get("outputs", []))
    assert "judgment" in shown and "C" in shown  # a result table of the fixture's judgments
    added = nbformat.read(tmp_path / "05_add_a_system.ipynb", as_version=4)
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) for c in added.cells
                    if c.cell_type == "code" for o in c.get("outputs", []))
    assert "bm25_and_docs" in shown and "MAP" in shown  # the new system scored beside bm25


def test_every_notebook_says_what_it_shows_and_what_to_change():
    for source in notebook_sources(ROOT / "notebooks"):
        text = source.read_text(encoding="utf-8")
        assert "**What it shows:**" in text and "**What to change:**" in text, source.name


def test_a_failing_notebook_is_named(tmp_path, project):
    bad = tmp_path / "src" / "01_broken.py"
    bad.parent.mkdir()
    bad.write_text("# %%\nraise ValueError('this notebook is broken')\n", encoding="utf-8")
    with pytest.raises(NotebookError, match="01_broken failed .*this notebook is broken"):
        run_notebooks(notebook_sources(bad.parent), tmp_path / "out", project)
    with pytest.raises(NotebookError, match="no notebooks"):
        notebook_sources(tmp_path / "out")

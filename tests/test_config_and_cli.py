"""params.yaml is the typed configuration; the CLI reports bad input in one line, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from countercase.config import ConfigError, load_params

ROOT = Path(__file__).resolve().parents[1]


def test_project_params_load_and_are_typed():
    params = load_params(ROOT / "params.yaml")
    assert params.extract.chunk_size + 2 <= params.extract.encoder_max_tokens  # never truncated
    assert 0 < params.ingest.header_footer_band < 0.5


def test_trees_search_the_configured_pipeline_with_their_own_fact_weight_and_reranker():
    from countercase.config import Params

    params = Params.model_validate({"retrieve": {"use_rerank": True, "fact_weight": 0.3,
                                                 "bm25_depth": 77},
                                    "perturb": {"fact_weight": 0.5}})
    trees = params.tree_retrieve()
    assert (trees.fact_weight, trees.use_rerank, trees.bm25_depth) == (0.5, False, 77)
    assert params.tree_retrieve(0.0).fact_weight == 0.0
    on = params.model_copy(update={"perturb": params.perturb.model_copy(update={"rerank": True})})
    assert on.tree_retrieve().use_rerank
    off = on.model_copy(update={"retrieve": on.retrieve.model_copy(update={"use_rerank": False})})
    assert not off.tree_retrieve().use_rerank  # perturb.rerank never switches on a reranker


@pytest.mark.parametrize("text, expected", [
    ("extract:\n  chunk_size: -5\n", "extract.chunk_size"),
    ("extract:\n  chunk_sise: 100\n", "extract.chunk_sise"),
    ("extract: [unclosed\n", "not valid YAML"),
])
def test_bad_params_name_the_file_and_the_field(tmp_path, text, expected):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected) as error:
        load_params(path)
    assert str(path) in str(error.value)


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "countercase.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_missing_input_is_one_clear_line(tmp_path):
    result = _cli("ingest", "--pdfs", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "PDF folder not found" in result.stderr and "nowhere" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_params_file_is_reported(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("ingest:\n  header_footer_band: 2\n")
    result = _cli("ingest", "--pdfs", str(ROOT / "data/raw/pdfs"), "--out", str(tmp_path / "o"),
                  "--params", str(bad))
    assert result.returncode == 2
    assert "ingest.header_footer_band" in result.stderr and "Traceback" not in result.stderr

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


def test_trees_search_their_system_at_their_own_fact_weight():
    from countercase.config import Params
    from countercase.retrieve.choices import Choices
    from countercase.retrieve.registry import system, tree_params

    params = Params.model_validate({"retrieve": {"fact_weight": 0.3, "bm25_depth": 77},
                                    "perturb": {"fact_weight": 0.5}})
    trees = tree_params(params)  # the trees' system: no_rerank
    assert (trees.fact_weight, trees.running("rerank"), trees.bm25_depth) == (0.5, False, 77)
    assert tree_params(params, 0.0).fact_weight == 0.0
    on = params.model_copy(update={"perturb": params.perturb.model_copy(update={"system": "full"})})
    assert tree_params(on).running("rerank")  # configs/reranker_choice.yaml: on
    off = Choices(values={"reranker.use_rerank": False})
    assert not system("full").served(params.retrieve, off).running("rerank")  # as chosen
    docs = params.model_copy(update={"perturb": params.perturb.model_copy(
        update={"system": "bm25_docs"})})
    with pytest.raises(ConfigError, match="bm25_docs"):
        tree_params(docs)  # whole judgments: no pipeline a tree can perturb


@pytest.mark.parametrize("text, expected", [
    ("extract:\n  chunk_size: -5\n", "extract.chunk_size"),
    ("extract:\n  chunk_sise: 100\n", "extract.chunk_sise"),
    ("extract: [unclosed\n", "not valid YAML"),
    ("leakage:\n  systems: []\n", "leakage.systems"),  # a stage with nothing to audit
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

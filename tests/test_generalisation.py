"""Issue 15's generalisation rule where a run cannot check it: nothing in the configuration or in
the code that answers a query may depend on AILA's ids, its masking or its sizes. (Running the
configured pipeline unchanged on the citation collection's held-out half checks it by scores;
`test_scaleout` runs it on PDFs from outside AILA.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from countercase.datasets import aila

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "countercase"
# the code between a query and its ranking: the retrievers, fusion, the reranker at query time
QUERY_TIME = ("retrieve", "index")
# index/run.py builds the Task 2 collection itself (AILA's statutes): what it reads is AILA's
# by definition, so it is the one module allowed to read AILA's files
COLLECTION_BUILDERS = {"index/run.py"}
CONFIGURATION = ("params.yaml", "configs/tuning_choice.yaml", "configs/tuning_ft_choice.yaml")
PROSE_KEYS = {"rule", "system_rule", "tuned_on"}  # descriptions of a choice, not settings
# an AILA query or document id, or a masking placeholder of its queries (P1, A2: parties, acts)
AILA_TOKEN = re.compile(r"\bAILA_Q\d+\b|\b[CS]\d{1,4}\b|\b[PA]\d\b")
# the collection's sizes that no default would hit by chance (its 50 queries would: depths)
AILA_SIZES = {aila.COUNTS["precedents"], aila.COUNTS["statutes"]}


def _settings(node, path=()):
    """Every setting of a YAML document, with its path (prose keys left out)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in PROSE_KEYS:
                yield from _settings(value, path + (str(key),))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _settings(value, path + (str(index),))
    else:
        yield ".".join(path), node


def _query_time_modules():
    for package in QUERY_TIME:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            relative = path.relative_to(PACKAGE).as_posix()
            if relative not in COLLECTION_BUILDERS:
                yield relative, ast.parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", CONFIGURATION)
def test_the_configuration_names_no_aila_id_nor_mask(name):
    document = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
    found = [(key, value) for key, value in _settings(document)
             if AILA_TOKEN.search(key) or AILA_TOKEN.search(str(value))]
    assert not found, f"{name} names AILA ids or placeholders: {found}"


def test_the_configuration_holds_no_aila_size():
    for name in CONFIGURATION:
        document = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
        sizes = [(key, value) for key, value in _settings(document)
                 if isinstance(value, int) and not isinstance(value, bool)
                 and value in AILA_SIZES]
        assert not sizes, f"{name} holds AILA's collection sizes: {sizes}"


def test_the_query_time_code_reads_nothing_of_aila():
    """No module between a query and its ranking imports AILA's reader, nor holds an AILA id, a
    masking placeholder or one of AILA's sizes as a literal."""
    faults = []
    for module, tree in _query_time_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module == "countercase.datasets.aila"
                    or (node.module == "countercase.datasets"
                        and any(a.name == "aila" for a in node.names))):
                faults.append(f"{module}:{node.lineno} imports AILA's reader")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and AILA_TOKEN.fullmatch(node.value.strip()):  # a literal, not prose
                faults.append(f"{module}:{node.lineno} holds {node.value!r}")
            elif isinstance(node, ast.Constant) and type(node.value) is int \
                    and node.value in AILA_SIZES:
                faults.append(f"{module}:{node.lineno} holds AILA's size {node.value}")
    assert not faults, "\n".join(faults)


def test_the_checks_find_what_they_look_for():
    """The patterns above are not vacuous: each kind of dependency is caught."""
    assert AILA_TOKEN.search("AILA_Q12") and AILA_TOKEN.search("C1247")
    assert AILA_TOKEN.search("S57") and AILA_TOKEN.fullmatch("P1")
    assert not AILA_TOKEN.search("bm25_depth") and not AILA_TOKEN.search("onnx-int8")
    assert list(_settings({"a": {"b": ["C12"]}, "rule": "AILA_Q1"})) == [("a.b.0", "C12")]
    assert aila.COUNTS["precedents"] in AILA_SIZES

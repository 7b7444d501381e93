"""The section adjacency map on the real statute texts and real judgments' citations."""

from __future__ import annotations

import pandas as pd
import pytest

from countercase.extract.metadata import extract_metadata
from countercase.extract.statutes import build_constitution_crossrefs, statute_frame
from countercase.ingest.text import text_document
from countercase.legal.adjacency import (build_adjacency, chapter_edges, cocitation_edges,
                                          correspondence, neighbours)

# The correspondences the new codes' own tables publish (checked here, never used to build).
KNOWN_IPC_BNS = {"IPC-302": "BNS-103", "IPC-304": "BNS-105", "IPC-304A": "BNS-106",
                 "IPC-376": "BNS-64", "IPC-420": "BNS-318"}


@pytest.fixture(scope="module")
def table(raw_dir):
    return statute_frame(raw_dir / "statutes")


@pytest.fixture(scope="module")
def cited(aila_files):
    """The act sections of 60 real judgments."""
    texts = aila_files.casedocs(f"C{i}" for i in range(1, 61))
    docs = [text_document(f"C{i}", texts[f"C{i}"].encode(), "") for i in range(1, 61)]
    return [extract_metadata(d).act_sections for d in docs]


@pytest.fixture(scope="module")
def edges(table, raw_dir, cited):
    crossrefs = pd.DataFrame(build_constitution_crossrefs(raw_dir / "statutes"))
    return build_adjacency(table, crossrefs, cited, min_count=2)


def test_known_ipc_to_bns_pairs_are_found_from_the_texts(table):
    found = {e["source"]: e["target"] for e in correspondence(table, "IPC", "BNS")}
    assert {k: found.get(k) for k in KNOWN_IPC_BNS} == KNOWN_IPC_BNS
    assert len(found) > 400  # most IPC sections have a successor
    assert "IPC-379" not in found  # ambiguous between BNS 303 and 318: left out, not guessed


def test_chapter_edges_join_neighbouring_sections_of_one_chapter(table):
    edges = {(e["source"], e["target"]): e["evidence"] for e in chapter_edges(table)}
    assert ("IPC-302", "IPC-303") in edges and "human body" in edges["IPC-302", "IPC-303"].lower()
    assert all(a.split("-")[0] == b.split("-")[0] for a, b in edges)  # never across acts


def test_cocitation_counts_are_the_judgments_citing_both(cited):
    edges = cocitation_edges(cited, 1)
    for edge in edges[:25]:
        a, b = edge["source"], edge["target"]
        n = sum(1 for sections in cited if a in sections and b in sections)
        n_a, n_b = (sum(1 for sections in cited if x in sections) for x in (a, b))
        assert edge["evidence"] == f"cited together in {n} judgments"
        assert edge["weight"] == pytest.approx(n / (n_a * n_b) ** 0.5, abs=1e-4)


def test_the_map_has_every_kind_with_its_evidence(edges):
    assert len(edges) >= 200
    assert set(edges["kind"]) == {"chapter", "constitution_crossref", "co_citation",
                                  "correspondence"}
    assert edges["evidence"].str.len().min() > 10 and (edges["weight"] > 0).all()
    undirected = edges[edges["kind"] != "correspondence"]
    assert (undirected["source"] < undirected["target"]).all()
    assert not edges.duplicated(["source", "target", "kind"]).any()


def test_neighbours_of_murder(edges):
    near = neighbours(edges, "IPC-302")
    assert {"IPC-303", "BNS-103"} <= set(near["neighbour"])
    assert near["weight"].is_monotonic_decreasing

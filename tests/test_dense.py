"""The dense index on real AILA paragraphs embedded with the packaged MiniLM."""

from __future__ import annotations

import tarfile

import numpy as np
import pytest

from countercase.index.dense import DenseIndex, build_embeddings
from countercase.index.encoders import embed, load_encoder


@pytest.fixture(scope="module")
def paragraphs(raw_dir):
    with tarfile.open(raw_dir / "aila2019/Object_casedocs.tar.gz") as archive:
        texts = [archive.extractfile(f"Object_casedocs/C{i}.txt").read().decode() for i in (1, 2, 3)]
    paras = [p.strip() for t in texts for p in t.split("\n") if len(p.split()) > 25]
    return paras[:30]


@pytest.fixture(scope="module")
def encoder():
    return load_encoder("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, paragraphs, encoder):
    out = tmp_path_factory.mktemp("dense")
    ids = [f"p{i:02d}" for i in range(len(paragraphs))]
    assert build_embeddings(ids, paragraphs, "all-MiniLM-L6-v2", out, encoder=encoder)
    return out


def test_a_paragraph_finds_itself(index_dir, paragraphs, encoder):
    index = DenseIndex.load(index_dir)
    assert index.vectors.shape == (len(paragraphs), 384)
    assert np.allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-5)
    query = embed(encoder, [paragraphs[7]], show_progress=False)[0]
    hits = index.search(query, 5)
    assert hits[0][0] == "p07" and hits[0][1] == pytest.approx(1.0, abs=1e-4)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_prefilter_equals_postfilter(index_dir, paragraphs, encoder):
    index = DenseIndex.load(index_dir)
    query = embed(encoder, [paragraphs[3]], show_progress=False)[0]
    allowed = np.arange(0, len(paragraphs), 2)  # even rows pass the filter
    pre = index.search(query, 8, allowed_rows=allowed)
    allowed_ids = {index.ids[r] for r in allowed}
    post = [hit for hit in index.search(query, len(paragraphs)) if hit[0] in allowed_ids][:8]
    assert [d for d, _ in pre] == [d for d, _ in post]
    assert np.allclose([s for _, s in pre], [s for _, s in post], atol=1e-6)
    assert index.search(query, 5, allowed_rows=np.array([], dtype=np.int64)) == []


class CountingEncoder:
    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def encode(self, texts, **kwargs):
        self.calls += 1
        return self.inner.encode(texts, **kwargs)


def test_stored_embeddings_are_reused_until_the_texts_change(index_dir, paragraphs, encoder):
    counting = CountingEncoder(encoder)
    ids = [f"p{i:02d}" for i in range(len(paragraphs))]
    assert not build_embeddings(ids, paragraphs, "all-MiniLM-L6-v2", index_dir, encoder=counting)
    assert counting.calls == 0
    changed = paragraphs[:-1] + [paragraphs[-1] + " (amended)"]
    assert build_embeddings(ids, changed, "all-MiniLM-L6-v2", index_dir, encoder=counting)
    assert counting.calls == 1

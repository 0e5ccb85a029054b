"""Ports written the way inference engines write eviction, for the triage to name.

``python tests/heldout/engine_ports.py NAME`` serves the port ``NAME`` over adapter protocol v1.
:data:`PORTS` maps each name to the catalogued choices the first triage line must name for it.

Each port is SnapKV as SPEC.md states it (:class:`ports.Port`) with one mechanism read from an
engine's own code and written here from that code, not from the catalogue: paged eviction
(OpenVINO GenAI's ``evict_logical_blocks``), deferred eviction (kvpress's ``DecodingPress``),
renormalised rows (keys_values' instantaneous scores), prefix-sum windows, masked caches,
pooling on arrival, step clocks, ``std::stof`` (glibc's own ``strtof`` through ctypes), a scan
mapping sorted scores back to positions, and line readers with a JSON library's habits
(first of repeated names, 64-bit ids, lenient UTF-8, blank lines answered). Nothing here
imports the kit.
"""

from __future__ import annotations

import ctypes
import errno
import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ports import Port, Refused, handle, is_int, to_float32

F32 = np.float32

# -- when and in what units: OpenVINO GenAI and kvpress -----------------------------------------


class PagedPort(Port):
    """OpenVINO GenAI's cache eviction without a start area: the kept tokens in logical blocks
    of 16; no eviction until the sequence is longer than ``max_cache_size + block_size - 1``;
    the evictable blocks run from 0 to ``seq_len / block_size - recent_size / block_size``;
    ``get_num_blocks(evictable_size)`` (a ceiling) of them stay; each block's score is its
    tokens' scores added up; ``nth_element`` on (score, block index) picks the blocks to go."""

    block_size = 16

    def evict(self) -> list[int]:
        seq_len = len(self.kept)
        if seq_len <= self.budget + self.block_size - 1:
            return []
        end = seq_len // self.block_size - self.recent // self.block_size
        evictable_size = self.budget - self.recent
        to_keep = math.ceil(evictable_size / self.block_size)
        if end < to_keep:
            return []
        to_evict = end - to_keep
        token_scores = self.pool(self.sums())
        block_scores = []
        for block in range(end):
            accumulated = 0.0
            for token in range(self.block_size):
                accumulated += token_scores[block * self.block_size + token]
            block_scores.append((accumulated, block))
        chosen = sorted(block_scores)[:to_evict]
        gone = sorted(
            block * self.block_size + token
            for _, block in chosen
            for token in range(self.block_size)
        )
        evicted = [self.kept[i] for i in gone]
        drop = set(gone)
        self.kept = [p for i, p in enumerate(self.kept) if i not in drop]
        self.rings = [r for i, r in enumerate(self.rings) if i not in drop]
        return evicted


class DeferredPort(Port):
    """Compression every so often, as kvpress's DecodingPress compresses every
    ``compression_interval`` steps: nothing until 16 positions are over budget."""

    interval = 16

    def evict(self) -> list[int]:
        if len(self.kept) - self.budget < self.interval:
            return []
        return super().evict()


# -- what a row holds: keys_values, prefix sums -------------------------------------------------


class RenormalisedPort(Port):
    """Each step's weights divided by their sum before they are recorded
    (``scores / scores.sum(dim=-1, keepdim=True)``), stored as float32."""

    def record(self, weights: list[float]) -> None:
        total = 0.0
        for weight in weights:
            total += weight
        if total > 0:
            weights = [to_float32(weight / total) for weight in weights]
        super().record(weights)


class PrefixSumPort(Port):
    """A prefix sum per position, appended at every observed step, and the window read as
    ``cum_now - cum_then`` (float64)."""

    dtype: Any = float

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.cums: list[list[Any]] = []

    def record(self, weights: list[float]) -> None:
        for cum, weight in zip(self.cums, weights, strict=True):
            cum.append(self.dtype(cum[-1] + self.dtype(weight)))
            if len(cum) > self.obs + 1:
                del cum[0]
        super().record(weights)

    def admit(self, pos: int) -> None:
        super().admit(pos)
        self.cums.append([self.dtype(0.0)])

    def sums(self) -> list[float]:
        out = []
        for cum in self.cums:
            then = cum[-1 - self.obs] if len(cum) > self.obs else self.dtype(0.0)
            out.append(float(self.dtype(cum[-1] - then)))
        return out

    def evict(self) -> list[int]:
        before = list(self.kept)
        evicted = super().evict()
        gone = set(evicted)
        self.cums = [c for p, c in zip(before, self.cums, strict=True) if p not in gone]
        return evicted


class PrefixSumFloat32Port(PrefixSumPort):
    """The same prefix sums held in float32, as a GPU tensor holds them; an overflowing total
    makes ``inf - inf``, NaN, which the tensor's max pooling propagates and its sort ranks above
    every number."""

    dtype = F32

    def pool(self, sums: list[float]) -> list[float]:
        r = (self.kernel - 1) // 2
        n = len(sums)
        return [float(np.max(sums[max(0, i - r) : min(n, i + r + 1)])) for i in range(n)]

    def select(self, pooled: list[float], k: int) -> list[int]:
        candidates = range(len(self.kept) - self.recent)
        return sorted(candidates, key=lambda i: (math.isnan(pooled[i]), pooled[i], i))[:k]


# -- masked caches -------------------------------------------------------------------------------


class MaskedPort(Port):
    """A static cache: evicted rows stay in the buffer, masked, and new tokens go after every
    row; pooling runs over the buffer's rows. ``zeroed``: a masked row is cleared."""

    zeroed = False

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.buffer: list[tuple[int, bool, float]] = []  # (position, masked, frozen score)

    def evict(self) -> list[int]:
        k = len(self.kept) - self.budget
        if k <= 0:
            return []
        sums = self.sums()
        live = {p: s for p, s in zip(self.kept, sums, strict=True)}
        rows = [(p, True, s) for p, masked, s in self.buffer if masked]
        rows += [(p, False, live[p]) for p in self.kept]
        rows.sort()
        r = (self.kernel - 1) // 2
        values = [s for _, _, s in rows]
        pooled_all = [
            max(values[max(0, i - r) : min(len(values), i + r + 1)]) for i in range(len(values))
        ]
        pooled = [
            score for (_, masked, _), score in zip(rows, pooled_all, strict=True) if not masked
        ]
        victims = self.select(pooled, k)
        chosen = set(victims)
        evicted = sorted(self.kept[i] for i in victims)
        for i in victims:
            self.buffer.append((self.kept[i], True, 0.0 if self.zeroed else sums[i]))
        self.kept = [p for i, p in enumerate(self.kept) if i not in chosen]
        self.rings = [ring for i, ring in enumerate(self.rings) if i not in chosen]
        return evicted


class MaskedZeroedPort(MaskedPort):
    zeroed = True


# -- pooling on arrival, step clocks -----------------------------------------------------------


class PoolOnArrivalPort(Port):
    """Each step's row max-pooled as it arrives, forward only (``_max_pool`` over idx .. idx +
    window - 1), and the pooled rows summed over the window; nothing pooled at eviction."""

    def record(self, weights: list[float]) -> None:
        n = len(weights)
        pooled = [max(weights[i : min(n, i + self.kernel)]) for i in range(n)]
        super().record(pooled)

    def pool(self, sums: list[float]) -> list[float]:
        return list(sums)


class CallClockPort(Port):
    """The ring slot from the decode loop's step counter: every step call ticks it, null and
    refused ones too."""

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.clock = 0

    def step(self, pos: Any, attn: Any) -> None:
        self.clock += 1
        super().step(pos, attn)

    def record(self, weights: list[float]) -> None:
        self.slot = (self.clock - 1) % self.obs
        super().record(weights)


class PositionClockPort(Port):
    """The ring slot from the position: ``pos % obsWindow``."""

    def step(self, pos: Any, attn: Any) -> None:
        self.admitting = pos
        super().step(pos, attn)

    def record(self, weights: list[float]) -> None:
        self.slot = self.admitting % self.obs
        super().record(weights)


# -- std::stof through glibc ---------------------------------------------------------------------

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.strtof.restype = ctypes.c_float
_LIBC.strtof.argtypes = [ctypes.c_char_p, ctypes.c_void_p]


class StofPort(Port):
    """A C++ port reading each weight's text with ``std::stof``: glibc's ``strtof`` (called
    here), and ``std::out_of_range`` where it sets ERANGE, answered as a refused weight."""

    def read_attention(self, attn: Any) -> list[float] | None:
        if attn is None:
            return None
        if not isinstance(attn, list) or len(attn) != len(self.kept):
            raise Refused("invalid-attention", "attn must be null or one weight per kept position")
        weights = []
        for weight in attn:
            if not isinstance(weight, Text):
                raise Refused("invalid-attention", "a weight is not a number")
            ctypes.set_errno(0)
            value = _LIBC.strtof(str(weight).encode("ascii"), None)
            if ctypes.get_errno() == errno.ERANGE:
                raise Refused("invalid-attention", "std::stof threw std::out_of_range")
            value = struct.unpack("<f", struct.pack("<f", value))[0]
            if not value >= 0 or value == math.inf:
                raise Refused("invalid-attention", "a weight is negative or infinite")
            weights.append(value)
        return weights


class Text(str):
    """A JSON number kept as its text (the reader hands std::stof the token)."""


# -- Java's habits ----------------------------------------------------------------------------


class ThresholdScanPort(Port):
    """The k-th smallest score from a sorted copy of the scores (``Arrays.sort``), then the
    first k candidates, in kept order, whose score is at most it."""

    def select(self, pooled: list[float], k: int) -> list[int]:
        candidates = len(self.kept) - self.recent
        ordered = sorted(pooled[:candidates])
        threshold = ordered[k - 1]
        return [i for i in range(candidates) if pooled[i] <= threshold][:k]


# -- line readers -----------------------------------------------------------------------------


def _first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        out.setdefault(name, value)
    return out


#: name -> (port class, the choices the first triage line must name, line reader options)
PORTS: dict[str, tuple[Any, tuple[str, ...], dict[str, Any]]] = {
    "paged": (PagedPort, ("paged-eviction",), {}),
    "deferred": (DeferredPort, ("deferred-eviction",), {}),
    "renormalised": (RenormalisedPort, ("renormalised-rows",), {}),
    "prefix-sum": (PrefixSumPort, ("prefix-sum-window",), {}),
    "prefix-sum-float32": (
        PrefixSumFloat32Port,
        ("prefix-sum-window", "float32-accumulation"),
        {},
    ),
    "masked-stale": (MaskedPort, ("masked-holes-stale",), {}),
    "masked-zeroed": (MaskedZeroedPort, ("masked-holes-zeroed",), {}),
    "pool-on-arrival": (PoolOnArrivalPort, ("pool-rows-on-arrival", "forward-only-pooling"), {}),
    "call-clock": (CallClockPort, ("slot-from-call-count",), {}),
    "position-clock": (PositionClockPort, ("slot-from-position",), {}),
    "stof": (StofPort, ("std-stof",), {"numbers_as_text": True}),
    "threshold-scan": (ThresholdScanPort, ("threshold-scan-by-score",), {}),
    "first-wins": (Port, ("first-name-wins",), {"pairs": _first_wins}),
    "ids-int64": (Port, ("ids-int64",), {"int64_ids": True}),
    "lenient-utf8": (Port, ("replacement-characters",), {"errors": "replace"}),
    "blank-lines": (Port, ("blank-line-answered",), {"answer_blank": True}),
}


def read_line(line: bytes, options: dict[str, Any]) -> Any:
    """The request a line holds, read with the port's JSON habits; ValueError when it cannot."""
    text = line.decode("utf-8", errors=options.get("errors", "strict"))
    kwargs: dict[str, Any] = {"parse_constant": _constant}
    if "pairs" in options:
        kwargs["object_pairs_hook"] = options["pairs"]
    if options.get("numbers_as_text"):
        kwargs["parse_float"] = Text
    request = json.loads(text, **kwargs)
    if options.get("numbers_as_text") and isinstance(request, dict):
        request = _numbers_back(request)
    if options.get("int64_ids") and isinstance(request, dict):
        ident = request.get("id")
        if is_int(ident) and not -(2**63) <= ident < 2**63:
            raise ValueError("id does not fit in an int64")
    return request


def _numbers_back(request: dict[str, Any]) -> dict[str, Any]:
    """Float literals stay text in ``attn`` (for std::stof), and are numbers elsewhere."""
    out = {}
    for name, value in request.items():
        if name == "attn" and isinstance(value, list):
            out[name] = [Text(str(w)) if is_int(w) else w for w in value]
        elif isinstance(value, Text):
            out[name] = float(value)
        elif isinstance(value, dict):
            out[name] = {k: float(v) if isinstance(v, Text) else v for k, v in value.items()}
        else:
            out[name] = value
    return out


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def main(name: str) -> int:
    factory, _, options = PORTS[name]
    session: dict[str, Any] = {"name": name, "done": False}
    for line in sys.stdin.buffer:
        if not line.strip(b" \t\r\n") and not options.get("answer_blank"):
            continue
        try:
            request = read_line(line, options)
        except (ValueError, RecursionError):
            request = None
        if not isinstance(request, dict) or not is_int(request.get("id")):
            reply = {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "bad"}}
        else:
            try:
                reply = {"id": request["id"], "ok": True, **handle(session, factory, request)}
            except Refused as refusal:
                error = {"kind": refusal.kind, "message": str(refusal)}
                reply = {"id": request["id"], "ok": False, "error": error}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if session["done"]:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

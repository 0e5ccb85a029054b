"""Independent plain-Python oracles for the reference policy: SnapKV, TOVA and H2O.

Why this exists next to ``conformance/policy/reference.py``, which is itself plain Python: the
reference is normative, so it must be checked against something that was *not* derived from it.
This oracle is a deliberately different formulation of SPEC.md §2, written from the text:
victims chosen by sorting every ``(pooled, position)`` pair (the reference takes the k smallest
with a heap), pooling by a naive scan of each window (the reference slides a monotonic deque),
sums recomputed from whole slot lists at every call (the reference keeps partial sums), float32
narrowing one weight at a time, and refusals judged by its own code. It imports nothing from
the package and no numpy, so a bug in the reference cannot leak into it. It is slow on big
windows and budgets; the property tests keep their scenarios small.

:class:`TovaOracle` and :class:`H2OOracle` are the two policies SnapKV reduces to (SPEC.md
§2.7), each written in its own terms: TOVA keeps each position's latest
observed weight, H2O its cumulative attention. They know nothing about rings or pooling.

The benchmark imports this file by path, so it must stay importable on its own.
"""

from __future__ import annotations

import math
import struct
from typing import Any

MAX_INT31 = 2**31 - 1
PARAM_NAMES = ("budget", "recentWindow", "obsWindow", "poolKernel")


class OracleError(Exception):
    """A refused call; ``kind`` is the protocol v1 error kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as a Python float.

    Raises ``OverflowError`` when the float32 would be infinite while ``value`` is finite:
    ``struct`` refuses to pack such a value with ``'f'``.
    """
    return struct.unpack("<f", struct.pack("<f", value))[0]


def narrow_weight(weight: Any) -> float:
    """One attention weight as SPEC.md §2.3 reads it; raise ``invalid-attention`` on any fault."""
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise OracleError("invalid-attention", f"not a number: {weight!r}")
    try:
        narrowed = to_float32(float(weight))  # nearest float64 first, then nearest float32
    except OverflowError:
        raise OracleError("invalid-attention", f"beyond float32: {weight!r}") from None
    if math.isnan(narrowed) or math.isinf(narrowed):
        raise OracleError("invalid-attention", f"not finite: {weight!r}")
    if narrowed < 0:  # -0.0 is not < 0: it counts as zero
        raise OracleError("invalid-attention", f"negative: {weight!r}")
    return narrowed


def parse_params(raw: Any) -> tuple[int, int, int, int]:
    """``(budget, recentWindow, obsWindow, poolKernel)``; raise ``invalid-params`` on any fault."""
    if not isinstance(raw, dict):
        raise OracleError("invalid-params", "params is not an object")
    if sorted(raw) != sorted(PARAM_NAMES):
        raise OracleError("invalid-params", f"wrong parameter names {sorted(raw)}")
    for name in PARAM_NAMES:
        value = raw[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise OracleError("invalid-params", f"{name} is not an integer")
        if value < 0 or value > MAX_INT31:
            raise OracleError("invalid-params", f"{name} out of range")
    budget, recent, obs, kernel = (raw[name] for name in PARAM_NAMES)
    if budget < 1 or recent >= budget or obs < 1 or kernel < 1 or kernel % 2 == 0:
        raise OracleError("invalid-params", "a parameter rule is broken")
    return budget, recent, obs, kernel


def check_position(pos: Any, last: int | None) -> int:
    """A step's position; raise ``invalid-position`` on any fault."""
    if isinstance(pos, bool) or not isinstance(pos, int):
        raise OracleError("invalid-position", f"not an integer: {pos!r}")
    if pos < 0 or pos > MAX_INT31 or (last is not None and pos <= last):
        raise OracleError("invalid-position", f"out of order or range: {pos!r}")
    return pos


def check_attention(attn: Any, kept: int) -> list[float] | None:
    """A step's attention narrowed to float32 values; raise ``invalid-attention``."""
    if attn is None:
        return None
    if not isinstance(attn, list) or len(attn) != kept:
        raise OracleError("invalid-attention", "not null and not a list of len(kept) numbers")
    return [narrow_weight(weight) for weight in attn]


def slot_order_sum(ring: list[float]) -> float:
    """The pinned sum: float64, from +0.0, slot index 0 upward."""
    total = 0.0
    for slot in range(len(ring)):
        total += ring[slot]
    return total


def pool_max(sums: list[float], kernel: int) -> list[float]:
    """``pooled[i] = max(sums[j])`` for kept indices ``j`` in ``[i - r, i + r]``, clamped."""
    radius = (kernel - 1) // 2
    pooled = []
    for i in range(len(sums)):
        best = sums[i]
        for j in range(max(0, i - radius), min(len(sums) - 1, i + radius) + 1):
            if sums[j] > best:
                best = sums[j]
        pooled.append(best)
    return pooled


def lowest(scores: list[float], positions: list[int], count: int) -> list[int]:
    """The ``count`` positions with the smallest ``(score, position)``, ascending by position."""
    ranked = sorted(zip(scores, positions, strict=True))
    return sorted(position for _, position in ranked[:count])


class OracleSnapKV:
    """SnapKV as SPEC.md §2 says, in plain Python.

    ``rings[i]`` is the history of ``kept[i]``: a list indexed by slot. It only grows as far as
    the highest slot written since admission; the slots past its end hold zero, and adding
    ``+0.0`` to a sum of non-negative values that started at ``+0.0`` changes nothing, so the
    short list sums exactly like the full ring. That keeps huge ``obsWindow`` values cheap.
    """

    def __init__(self, params: Any, seed: int = 0) -> None:
        self.budget, self.recent, self.obs, self.kernel = parse_params(params)
        self.kept: list[int] = []
        self.rings: list[list[float]] = []
        self.slot = 0
        self.last: int | None = None

    def step(self, pos: Any, attn: Any) -> None:
        position = check_position(pos, self.last)
        weights = check_attention(attn, len(self.kept))
        if weights is not None:
            for i, weight in enumerate(weights):
                ring = self.rings[i]
                while len(ring) <= self.slot:
                    ring.append(0.0)
                ring[self.slot] = weight
            self.slot = (self.slot + 1) % self.obs
        self.kept.append(position)
        self.rings.append([])  # all zeros, never a stale history
        self.last = position

    def sums(self) -> list[float]:
        return [slot_order_sum(ring) for ring in self.rings]

    def pooled(self) -> list[float]:
        return pool_max(self.sums(), self.kernel)

    def evict(self) -> list[int]:
        count = max(0, len(self.kept) - self.budget)
        if count == 0:
            return []
        candidates = max(0, len(self.kept) - self.recent)
        pooled = self.pooled()
        victims = lowest(pooled[:candidates], self.kept[:candidates], count)
        gone = set(victims)
        survivors = [i for i, pos in enumerate(self.kept) if pos not in gone]
        self.kept = [self.kept[i] for i in survivors]
        self.rings = [self.rings[i] for i in survivors]
        return victims

    def state(self) -> tuple[Any, ...]:
        """Everything a call may change, comparable with ``==`` bit for bit."""
        rings = tuple(tuple(float.hex(v) for v in ring) for ring in self.rings)
        return tuple(self.kept), rings, self.slot, self.last


class ScorePolicyOracle:
    """An oracle that ranks kept positions by one float64 score each (TOVA, H2O).

    Candidates are all kept positions but the ``protected`` highest; the lowest
    ``(score, position)`` are evicted. Subclasses say how an observed weight updates a score.
    """

    def __init__(self, budget: int, protected: int) -> None:
        self.budget = budget
        self.protected = protected
        self.kept: list[int] = []
        self.score: dict[int, float] = {}

    def step(self, pos: int, attn: list[float] | None) -> None:
        if attn is not None:
            for position, weight in zip(self.kept, attn, strict=True):
                self.observe(position, to_float32(float(weight)))
        self.kept.append(pos)
        self.score[pos] = 0.0

    def observe(self, position: int, weight: float) -> None:
        raise NotImplementedError

    def evict(self) -> list[int]:
        count = max(0, len(self.kept) - self.budget)
        candidates = self.kept[: max(0, len(self.kept) - self.protected)]
        victims = lowest([self.score[p] for p in candidates], candidates, count)
        self.kept = [p for p in self.kept if p not in victims]
        return victims


class TovaOracle(ScorePolicyOracle):
    """TOVA: a position's score is the weight it received at the latest observed step."""

    def observe(self, position: int, weight: float) -> None:
        self.score[position] = weight


class H2OOracle(ScorePolicyOracle):
    """H2O: a position's score is the float64 sum of every weight it received, oldest first."""

    def observe(self, position: int, weight: float) -> None:
        self.score[position] += weight


def float_bits(values: Any) -> list[str]:
    """Floats as ``float.hex`` strings, for bit-for-bit comparison (``-0.0`` != ``0.0``)."""
    return [float.hex(float(v)) for v in values]


def params_dict(budget: int, recent: int, obs: int, kernel: int) -> dict[str, int]:
    """A wire ``params`` object."""
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}


def apply(policy: Any, call: tuple[Any, ...]) -> tuple[str, Any]:
    """Run one call ``("step", pos, attn)`` or ``("evict",)``: ``("ok", result)`` or
    ``("error", kind)``. Works for the reference and :class:`OracleSnapKV` alike."""
    try:
        if call[0] == "step":
            return "ok", policy.step(call[1], call[2])
        return "ok", policy.evict()
    except Exception as error:
        kind = getattr(error, "kind", None)
        if kind is None:
            raise
        return "error", kind

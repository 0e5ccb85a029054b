"""The reference SnapKV policy: the single source of truth for what SnapKV evicts.

Everything here follows SPEC.md §2. The implementation is numpy, vectorised across kept
positions and sequential across ring slots, because the summation order is part of the
contract: ``sums[i]`` is ``history[i][0] + history[i][1] + ...`` accumulated left to right in
float64 from ``+0.0``. ``np.sum`` over the ring axis would use pairwise summation and change
bits, so it is never used for sums.

The class is split into small overridable steps (:meth:`SnapKV.window_sums`,
:meth:`SnapKV.pool`, :meth:`SnapKV.select`, ...) so that the mutant catalogue can express each
porting mistake as a one-method override of the reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.protocol import ERROR_KINDS
from conformance.text import json_text

INT31_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)

PARAM_NAMES = ("budget", "recentWindow", "obsWindow", "poolKernel")
DEFAULT_PARAMS: dict[str, int] = {
    "budget": 512,
    "recentWindow": 16,
    "obsWindow": 16,
    "poolKernel": 7,
}


class PolicyError(Exception):
    """A refused call. ``kind`` is one of :data:`ERROR_KINDS`; the message names the value."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __repr__(self) -> str:
        return f"PolicyError({self.kind!r}, {self.message!r})"


def is_json_integer(value: Any) -> bool:
    """True for an integer as a JSON reader gives it: ``int`` but never ``bool``."""
    return type(value) is int


@dataclass(frozen=True)
class Params:
    """Validated construction parameters (SPEC.md §2.1)."""

    budget: int
    recentWindow: int  # camelCase: the wire names, so params round-trip unchanged
    obsWindow: int
    poolKernel: int

    @classmethod
    def parse(cls, raw: Any) -> Params:
        """Validate a ``params`` object from the wire; raise ``invalid-params`` on any fault.

        Exactly the four names, each a JSON integer (not a boolean, string or ``4.5``), with
        ``budget >= 1``, ``0 <= recentWindow < budget``, ``obsWindow >= 1``, ``poolKernel``
        odd and ``>= 1``, and each at most ``2^31 - 1``.
        """
        if isinstance(raw, Params):
            raw = raw.as_dict()
        if not isinstance(raw, Mapping):
            raise PolicyError("invalid-params", f"params must be an object, got {raw!r}")
        missing = [name for name in PARAM_NAMES if name not in raw]
        if missing:
            raise PolicyError("invalid-params", f"params is missing {', '.join(missing)}")
        extra = sorted(set(raw) - set(PARAM_NAMES))
        if extra:
            raise PolicyError("invalid-params", f"params has unknown field(s) {', '.join(extra)}")
        for name in PARAM_NAMES:
            value = raw[name]
            if not is_json_integer(value):
                raise PolicyError(
                    "invalid-params", f"{name} must be an integer, got {json_text(value)}"
                )
            if not 0 <= value <= INT31_MAX:
                raise PolicyError("invalid-params", f"{name} must be in [0, 2^31 - 1], got {value}")
        budget, recent = raw["budget"], raw["recentWindow"]
        obs, kernel = raw["obsWindow"], raw["poolKernel"]
        if budget < 1:
            raise PolicyError("invalid-params", f"budget must be >= 1, got {budget}")
        if recent >= budget:
            raise PolicyError(
                "invalid-params",
                f"recentWindow must be < budget, got recentWindow {recent} with budget {budget}",
            )
        if obs < 1:
            raise PolicyError("invalid-params", f"obsWindow must be >= 1, got {obs}")
        if kernel < 1 or kernel % 2 == 0:
            raise PolicyError("invalid-params", f"poolKernel must be odd and >= 1, got {kernel}")
        return cls(budget, recent, obs, kernel)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in PARAM_NAMES}


@dataclass(frozen=True)
class Scores:
    """What an ``evict`` now would rank by: kept positions with their sums and pooled scores."""

    positions: list[int]
    sums: list[float]
    pooled: list[float]


def parse_position(pos: Any, last_admitted: int | None) -> int:
    """Validate a step's ``pos``; raise ``invalid-position`` on any fault."""
    if not is_json_integer(pos):
        raise PolicyError("invalid-position", f"pos must be an integer, got {json_text(pos)}")
    if not 0 <= pos <= INT31_MAX:
        raise PolicyError("invalid-position", f"pos must be in [0, 2^31 - 1], got {pos}")
    if last_admitted is not None and pos <= last_admitted:
        raise PolicyError(
            "invalid-position",
            f"pos {pos} must be greater than the last admitted position {last_admitted}",
        )
    return pos


_NUMBER_TYPES = frozenset((float, int))  # exactly; bool is not a JSON number


def narrow_attention(attn: Any, kept: int) -> np.ndarray | None:
    """Validate a step's ``attn`` and narrow it to float32; raise ``invalid-attention``.

    Each weight is a JSON number read as the nearest float64 and then rounded to the nearest
    float32; that float32 must be finite and not negative. ``-0.0`` counts as zero.
    """
    if attn is None:
        return None
    if not isinstance(attn, list):
        raise PolicyError(
            "invalid-attention", f"attn must be null or a list, got {json_text(attn)}"
        )
    if len(attn) != kept:
        raise PolicyError(
            "invalid-attention",
            f"attn has {len(attn)} weight(s) but {kept} position(s) are kept",
        )
    # Count exact types in C (list.count compares by identity first); the per-element loop
    # only runs to name the offender. numpy alone would not do: it reads True as 1.0 and
    # "0.5" as 0.5.
    types = list(map(type, attn))
    floats = types.count(float)
    if floats != kept and floats + types.count(int) != kept:
        index, weight = next((i, w) for i, w in enumerate(attn) if type(w) not in _NUMBER_TYPES)
        raise PolicyError(
            "invalid-attention", f"attn[{index}] is not a number: {json_text(weight)}"
        )
    try:
        # fromiter reads each number as float() does (nearest float64), faster than np.array.
        wide = np.fromiter(attn, dtype=np.float64, count=len(attn))
    except OverflowError:  # an integer literal beyond float64, hence beyond float32
        index = next(i for i, w in enumerate(attn) if type(w) is int and abs(w) > FLOAT32_MAX)
        raise PolicyError(
            "invalid-attention", f"attn[{index}] is beyond the float32 range: {attn[index]}"
        ) from None
    with np.errstate(over="ignore"):
        narrow = wide.astype(np.float32)
    # NaN fails both comparisons; -0.0 passes the first (it counts as zero).
    accepted = (narrow >= 0) & (narrow <= FLOAT32_MAX)
    if not accepted.all():
        index = int(np.argmin(accepted))
        if narrow[index] < 0:
            reason = "is negative"
        elif math.isnan(narrow[index]):
            reason = "is not a number"
        else:
            reason = "is beyond the float32 range"
        raise PolicyError("invalid-attention", f"attn[{index}] {reason}: {json_text(attn[index])}")
    return narrow


class SnapKV:
    """The reference decode-time SnapKV policy.

    State: ``kept`` positions ascending, a float32 history ring of ``obsWindow`` values per kept
    position, and one shared ring cursor ``slot``. The ring's columns are allocated lazily (a
    column that was never written holds zeros, which add nothing to a sum that starts from
    ``+0.0``), so parameters up to ``2^31 - 1`` cost only the memory the run actually uses.
    """

    def __init__(self, params: Mapping[str, Any] | Params, seed: int = 0) -> None:
        self.params = self.parse_params(params)
        # The seed feeds the registry's Rng, which SnapKV never uses (SPEC.md §2.1).
        self.seed = seed
        self._positions = np.zeros(16, dtype=np.int64)
        self._history = np.zeros((16, 1), dtype=np.float32)
        self._count = 0
        self._last_admitted: int | None = None
        self.slot = 0

    # -- state views -----------------------------------------------------------------------

    @property
    def kept(self) -> np.ndarray:
        """The kept positions, ascending (a read-only view)."""
        view = self._positions[: self._count]
        view.flags.writeable = False
        return view

    @property
    def history(self) -> np.ndarray:
        """The ``(len(kept), obsWindow)`` float32 history rings (a copy, zero-filled).

        This materialises every column, so it is for inspecting small rings: with a huge
        ``obsWindow`` it refuses rather than allocate gigabytes of zeros.
        """
        if self._count * self.params.obsWindow > 2**26:
            raise MemoryError(
                f"history view of {self._count} x {self.params.obsWindow} floats is too large; "
                "inspect rings through scores() instead"
            )
        full = np.zeros((self._count, self.params.obsWindow), dtype=np.float32)
        width = min(self._history.shape[1], self.params.obsWindow)
        full[:, :width] = self._history[: self._count, :width]
        return full

    @property
    def last_admitted(self) -> int | None:
        """The highest position ever admitted (evicted or not), or None before the first."""
        return self._last_admitted

    # -- the two calls ---------------------------------------------------------------------

    def step(self, pos: Any, attn: Any) -> None:
        """Record one decode step's attention over the kept positions, then admit ``pos``.

        Refusals (``invalid-position`` before ``invalid-attention``) change nothing.
        """
        position = self.check_position(pos)
        weights = self.check_attention(attn)
        if weights is not None:
            self.record(weights)
        self.admit(position)

    def evict(self) -> list[int]:
        """Evict ``max(0, len(kept) - budget)`` positions and return them ascending."""
        excess = self._count - self.params.budget
        if excess <= 0:
            return []
        pooled = self.pool(self.window_sums())
        victims = self.select(pooled, excess)
        # Read the victims' positions before compacting: compaction moves survivors down
        # into the victims' indices.
        evicted = self.order_victims(victims)
        keep = np.ones(self._count, dtype=bool)
        keep[victims] = False
        self._compact(keep)
        return evicted

    def scores(self) -> Scores:
        """The sums and pooled scores that an ``evict`` now would rank by."""
        sums = self.window_sums()
        pooled = self.pool(sums)
        return Scores(
            positions=[int(p) for p in self._positions[: self._count]],
            sums=[float(s) for s in sums],
            pooled=[float(p) for p in pooled],
        )

    # -- the overridable steps ---------------------------------------------------------------

    def parse_params(self, raw: Mapping[str, Any] | Params) -> Params:
        """Validate the construction parameters (raises ``invalid-params``)."""
        return Params.parse(raw)

    def check_position(self, pos: Any) -> int:
        """Validate a step's position (raises ``invalid-position``)."""
        return parse_position(pos, self._last_admitted)

    def check_attention(self, attn: Any) -> np.ndarray | None:
        """Validate and narrow a step's attention (raises ``invalid-attention``)."""
        return narrow_attention(attn, self._count)

    def record(self, weights: np.ndarray) -> None:
        """Write one observed step into the ring at ``slot``, then advance the cursor."""
        self._ensure_width(self.slot + 1)
        self._history[: self._count, self.slot] = weights
        self.slot = (self.slot + 1) % self.params.obsWindow

    def admit(self, position: int) -> None:
        """Append ``position`` with an all-zero history."""
        if self._count == len(self._positions):
            self._grow_rows(2 * self._count)
        self._positions[self._count] = position
        self._history[self._count, :] = 0.0
        self._count += 1
        self._last_admitted = position

    def window_sums(self) -> np.ndarray:
        """float64 sums of each ring in slot index order 0 upward, from ``+0.0``.

        One elementwise addition per slot, in slot order, into an accumulator that starts at
        ``+0.0``. The slots are first copied (widened to float64, which is exact) into one
        contiguous row per slot, so each addition reads memory in order.
        """
        width = min(self._history.shape[1], self.params.obsWindow)
        slots = np.ascontiguousarray(self._history[: self._count, :width].T, dtype=np.float64)
        sums = np.zeros(self._count, dtype=np.float64)
        for column in slots:
            sums += column
        return sums

    def pool(self, sums: np.ndarray) -> np.ndarray:
        """Max over kept entries ``[i - r, i + r]`` clamped to the list, ``r = (k - 1) / 2``."""
        radius = min((self.params.poolKernel - 1) // 2, max(len(sums) - 1, 0))
        pooled = sums.copy()
        for offset in range(1, radius + 1):
            np.maximum(pooled[:-offset], sums[offset:], out=pooled[:-offset])
            np.maximum(pooled[offset:], sums[:-offset], out=pooled[offset:])
        return pooled

    def candidate_count(self) -> int:
        """How many kept entries may be evicted: all but the ``recentWindow`` highest."""
        return max(self._count - self.params.recentWindow, 0)

    def select(self, pooled: np.ndarray, count: int) -> np.ndarray:
        """Indices of the ``count`` candidates with the smallest ``(pooled, position)``, in
        that rank order (lowest first).

        Kept positions ascend with the index, so ``(pooled, index)`` orders like
        ``(pooled, position)``. Rather than sort every candidate, this finds the ``count``-th
        smallest pooled score ``t`` (a partition, linear time), takes every candidate below
        ``t`` and then the lowest-indexed candidates equal to ``t``, and sorts only those.
        """
        scores = pooled[: self.candidate_count()]
        if count <= 0 or scores.size == 0:
            return np.zeros(0, dtype=np.intp)
        if count == 1:  # the common case: argmin returns the first (lowest) index of the min
            return np.array([np.argmin(scores)], dtype=np.intp)
        count = min(count, scores.size)
        threshold = np.partition(scores, count - 1)[count - 1]
        below = np.flatnonzero(scores < threshold)
        tied = np.flatnonzero(scores == threshold)[: count - below.size]
        chosen = np.concatenate((below, tied))
        return chosen[np.lexsort((chosen, scores[chosen]))]

    def order_victims(self, victims: np.ndarray) -> list[int]:
        """The evicted positions in ascending order (victims are kept-list indices)."""
        if len(victims) == 1:
            return [int(self._positions[victims[0]])]
        return [int(p) for p in np.sort(self._positions[victims])]

    # -- storage -----------------------------------------------------------------------------

    def _ensure_width(self, width: int) -> None:
        if width > self._history.shape[1]:
            new_width = min(max(width, 2 * self._history.shape[1]), self.params.obsWindow)
            grown = np.zeros((self._history.shape[0], new_width), dtype=np.float32)
            grown[:, : self._history.shape[1]] = self._history
            self._history = grown

    def _grow_rows(self, rows: int) -> None:
        positions = np.zeros(rows, dtype=np.int64)
        positions[: self._count] = self._positions[: self._count]
        history = np.zeros((rows, self._history.shape[1]), dtype=np.float32)
        history[: self._count] = self._history[: self._count]
        self._positions, self._history = positions, history

    def _compact(self, keep: np.ndarray) -> None:
        """Drop the entries whose ``keep`` is False; the rest keep their order.

        (Mutants that keep extra per-row arrays override this hook to compact them alike.)
        """
        gone = np.flatnonzero(~keep)
        if gone.size == 1:  # the common case: slide the entries above it down by one
            index, end = int(gone[0]), self._count
            self._positions[index : end - 1] = self._positions[index + 1 : end]
            self._history[index : end - 1] = self._history[index + 1 : end]
            self._count -= 1
            return
        survivors = int(keep.sum())
        self._positions[:survivors] = self._positions[: self._count][keep]
        self._history[:survivors] = self._history[: self._count][keep]
        self._count = survivors


def check_weight_literal(value: Any) -> bool:
    """True when ``value`` is exactly a float32 written as DESIGN §2 requires of vectors.

    That is a JSON float whose float64 value is exactly representable as float32 (narrowing
    loses nothing), or an integer that is.
    """
    if type(value) is int:
        return abs(value) <= FLOAT32_MAX and float(np.float32(value)) == value
    if type(value) is not float or not math.isfinite(value):
        return False
    with np.errstate(over="ignore"):
        return float(np.float32(value)) == value


def float32_literal(value: float) -> float:
    """The float64 equal to the nearest float32 of ``value``: what vectors and the wire carry."""
    return float(np.float32(value))


def new_policy(params: Mapping[str, Any] | Params, seed: int = 0) -> SnapKV:
    """Construct the reference policy (the default policy factory)."""
    return SnapKV(params, seed)


__all__ = [
    "DEFAULT_PARAMS",
    "ERROR_KINDS",
    "INT31_MAX",
    "PARAM_NAMES",
    "Params",
    "PolicyError",
    "Scores",
    "SnapKV",
    "check_weight_literal",
    "float32_literal",
    "narrow_attention",
    "new_policy",
    "parse_position",
]

"""The fast path: the reference policy vectorised with numpy, for long traces and big budgets.

:class:`FastSnapKV` answers every call exactly as :class:`conformance.policy.reference.SnapKV` does,
bit for bit (``tests/policy/test_fast.py`` checks it with property tests over refusals,
atomicity, huge parameters and long runs); ``conformance.policy.reference`` stays the normative
text. It exists because the reference adapter serves long traces at budgets in the thousands, where
one numpy operation per ring slot beats a Python loop per kept position
(``benchmarks/bench_reference.py`` prints the ratio). Get it through :func:`fast_policy`, the
counterpart of ``conformance.policy.reference.new_policy``.

How it stays exact: weights are narrowed by the reference's own ``struct`` packing (and any list
the fast check doubts goes through the reference's own function, which also words every
refusal); sums add one float64 column per ring slot, slot 0 upward, into accumulators that
start at ``+0.0`` (``np.sum`` would add pairwise, so it is never used for sums); pooling takes
maxima, which are exact whatever the grouping.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from conformance.policy.reference import (
    FLOAT32_MAX,
    Params,
    Policy,
    Scores,
    narrow_attention,
    parse_position,
)

#: Up to this pooling radius, pooling is one ``np.maximum`` per offset; above it, the van
#: Herk/Gil-Werman block algorithm, whose cost does not grow with the radius.
_SHIFTS_UP_TO = 8


def window_max(sums: np.ndarray, radius: int) -> np.ndarray:
    """``max(sums[i - radius .. i + radius])`` clamped to the array, for every ``i``."""
    count = len(sums)
    radius = min(radius, count - 1)  # a wider window clamps to the same entries
    if radius <= 0:
        return sums.copy()
    if radius <= _SHIFTS_UP_TO:
        pooled = sums.copy()
        for offset in range(1, radius + 1):
            np.maximum(pooled[:-offset], sums[offset:], out=pooled[:-offset])
            np.maximum(pooled[offset:], sums[:-offset], out=pooled[offset:])
        return pooled
    # Pad with -inf (it never wins against a real sum, so the window is clamped), cut into
    # blocks of the kernel's width: every window spans the end of one block and the start of
    # the next, so its maximum is a block suffix maximum and a block prefix maximum.
    kernel = 2 * radius + 1
    blocks = -(-(count + 2 * radius) // kernel)
    padded = np.full(blocks * kernel, -np.inf)
    padded[radius : radius + count] = sums
    rows = padded.reshape(blocks, kernel)
    prefix = np.maximum.accumulate(rows, axis=1).ravel()
    suffix = np.maximum.accumulate(rows[:, ::-1], axis=1)[:, ::-1].ravel()
    return np.maximum(suffix[:count], prefix[kernel - 1 : kernel - 1 + count])


def narrow_weights(attn: Any, kept: int, *, no_booleans: bool = False) -> np.ndarray | None:
    """:func:`conformance.policy.reference.narrow_attention` at numpy speed: the same float32
    weights, and for any ``attn`` it refuses, its refusal.

    Only a list of exactly ``kept`` Python floats is narrowed here (a bool or an integer, legal
    or not, takes the reference's path), by the reference's own ``struct`` packing; if a weight
    overflows the float32 range or comes out negative, NaN or infinite, the reference's
    function runs instead, so the refusal and its message are the reference's.

    ``no_booleans`` says that ``attn`` is a value a JSON decoder made and holds no boolean:
    then each item is a float, an int, a str, None, a list or a dict, and the packing itself
    refuses every one the reference refuses (it reads an int as the reference's packing does),
    so the type of each item is not looked at (a tenth of a decode step's cost).
    """
    if (
        type(attn) is list
        and len(attn) == kept
        and (no_booleans or list(map(type, attn)).count(float) == kept)
    ):
        if not kept:
            return np.zeros(0, dtype=np.float32)
        try:
            weights = np.frombuffer(struct.pack(f"<{kept}f", *attn), dtype="<f4")
        except (OverflowError, struct.error):  # past float32, or not a number: the reference
            pass
        else:  # NaN fails both comparisons; -0.0 passes, as in the reference
            if weights.min() >= 0.0 and weights.max() <= FLOAT32_MAX:
                return weights
    narrowed = narrow_attention(attn, kept)
    return None if narrowed is None else np.array(narrowed, dtype=np.float32)


class FastSnapKV:
    """SnapKV with kept rows in numpy arrays; see :class:`conformance.policy.reference.SnapKV`
    for the rules. ``_history[i, c]`` is kept position ``i``'s float32 weight in ring slot ``c``;
    ``_prefix[c, i]`` is its float64 sum over slots ``0..c`` in slot order. Slots are
    allocated as they are first written, rows as they are admitted.

    A write to slot ``c`` makes the prefixes from ``c`` upward stale, and the next evict
    recomputes only those. Until the ring first wraps, every write is to a new slot, so only
    the last prefix is ever read again: that is the only one kept up to date, and a ring of
    2^31 - 1 slots costs one slot per step, not one per slot ever written.
    """

    def __init__(self, params: Mapping[str, Any] | Params, seed: int = 0) -> None:
        self.params = Params.parse(params)
        self.seed = seed
        self._positions = np.zeros(16, dtype=np.int64)
        self._history = np.zeros((16, 1), dtype=np.float32)
        self._prefix = np.zeros((1, 16), dtype=np.float64)
        self._count = 0
        self._written = 0  # slots below this were written at least once
        self._valid = 0  # prefixes below this are up to date (before a wrap: the last one)
        self._wrapped = False  # a slot was written a second time
        self.slot = 0
        self.last_admitted: int | None = None

    @property
    def kept(self) -> list[int]:
        """The kept positions, ascending."""
        return self._positions[: self._count].tolist()

    def step(self, pos: Any, attn: Any) -> None:
        position = parse_position(pos, self.last_admitted)
        weights = narrow_weights(attn, self._count)
        if weights is not None:
            self._write(weights)
        self._admit(position)

    def step_decoded(self, pos: Any, attn: Any) -> None:
        """:meth:`step` for a ``pos`` and an ``attn`` that a JSON decoder made from a line in
        which neither ``true`` nor ``false`` occurs (the adapter server knows it of its lines):
        the same answer and the same state, sooner (see :func:`narrow_weights`)."""
        position = parse_position(pos, self.last_admitted)
        weights = narrow_weights(attn, self._count, no_booleans=True)
        if weights is not None:
            self._write(weights)
        self._admit(position)

    def evict(self) -> list[int]:
        excess = self._count - self.params.budget
        if excess <= 0:
            return []
        victims = self._select(self._pooled(self._window_sums(copy=False)), excess)
        evicted = sorted(self._positions[victims].tolist())
        self._compact(victims)
        return evicted

    def scores(self) -> Scores:
        sums = self._window_sums()
        return Scores(positions=self.kept, sums=sums.tolist(), pooled=self._pooled(sums).tolist())

    # -- the policy --------------------------------------------------------------------------

    def _write(self, weights: np.ndarray) -> None:
        column = self.slot
        if column >= self._history.shape[1]:
            width = min(max(column + 1, 2 * self._history.shape[1]), self.params.obsWindow)
            self._history = _grown(self._history, width, axis=1)
            self._prefix = _grown(self._prefix, width, axis=0)
        if column < self._written and not self._wrapped:
            # From the first wrap on, every evict re-adds the slots from the one rewritten
            # upward: store slots as contiguous columns from now on (a ring that never wraps
            # keeps rows contiguous, so that removing a row moves one block).
            self._wrapped = True
            self._history = np.asfortranarray(self._history)
        self._history[: self._count, column] = weights
        self._valid = min(self._valid, column)
        self._written = max(self._written, column + 1)
        self.slot = (column + 1) % self.params.obsWindow

    def _admit(self, position: int) -> None:
        if self._count == len(self._positions):
            rows = 2 * self._count
            self._positions = _grown(self._positions, rows, axis=0)
            order: Literal["C", "F"] = "F" if self._wrapped else "C"
            self._history = _grown(self._history, rows, axis=0, order=order)
            self._prefix = _grown(self._prefix, rows, axis=1)
        self._positions[self._count] = position
        # zero in every written slot, so +0.0 in every live prefix
        self._history[self._count, : self._written] = 0.0
        self._live()[:, self._count] = 0.0
        self._count += 1
        self.last_admitted = position

    def _live(self) -> np.ndarray:
        """The prefixes a later evict may read: the up-to-date ones (before a wrap, the last)."""
        if self._wrapped:
            return self._prefix[: self._valid]
        return self._prefix[max(0, self._valid - 1) : self._valid]

    def _window_sums(self, copy: bool = True) -> np.ndarray:
        """float64 sums in slot index order, from ``+0.0`` (zeros past the written slots add
        nothing: a sum from ``+0.0`` is never ``-0.0``). With ``copy=False``, a view that the
        next step or evict may change (an evict reads it before either)."""
        count = self._count
        if self._written == 0:
            return np.zeros(count)
        history, prefix = self._history[:count], self._prefix[:, :count]
        for column in range(self._valid, self._written):
            before = prefix[column - 1] if column else 0.0  # +0.0 + -0.0 is +0.0, as it must be
            np.add(before, history[:, column], out=prefix[column])  # float32 to float64: exact
        self._valid = self._written
        sums = prefix[self._written - 1]
        return sums.copy() if copy else sums

    def _pooled(self, sums: np.ndarray) -> np.ndarray:
        return window_max(sums, (self.params.poolKernel - 1) // 2)

    def _select(self, pooled: np.ndarray, count: int) -> np.ndarray:
        """Indices of the ``count`` candidates with the smallest ``(pooled, index)``.

        Finds the ``count``-th smallest score ``t`` by partition (linear time), takes every
        candidate below ``t`` and then the lowest-indexed candidates equal to ``t``.
        """
        scores = pooled[: max(0, self._count - self.params.recentWindow)]
        count = min(count, scores.size)
        if count <= 0:
            return np.zeros(0, dtype=np.intp)
        if count == 1:  # argmin returns the first (lowest) index of the minimum
            return scores.argmin(axis=0, keepdims=True)
        threshold = np.partition(scores, count - 1)[count - 1]
        below = np.flatnonzero(scores < threshold)
        tied = np.flatnonzero(scores == threshold)[: count - below.size]
        return np.concatenate((below, tied))

    def _compact(self, gone: np.ndarray) -> None:
        """Drop the rows at the indices ``gone``; the rest keep their order.

        Only the written slots and the live prefixes move: the rest are zero or stale."""
        count, history, prefix = self._count, self._history[:, : self._written], self._live()
        if gone.size == 1:  # the common case: slide the rows above it down by one
            index = int(gone[0])
            self._positions[index : count - 1] = self._positions[index + 1 : count]
            history[index : count - 1] = history[index + 1 : count]
            prefix[:, index : count - 1] = prefix[:, index + 1 : count]
            self._count -= 1
            return
        keep = np.ones(count, dtype=bool)
        keep[gone] = False
        survivors = count - gone.size
        self._positions[:survivors] = self._positions[:count][keep]
        history[:survivors] = history[:count][keep]
        prefix[:, :survivors] = prefix[:, :count][:, keep]
        self._count = survivors


def _grown(array: np.ndarray, size: int, axis: int, order: Literal["C", "F"] = "C") -> np.ndarray:
    """``array`` with ``size`` entries along ``axis`` (the new ones zero), in ``order``."""
    shape = list(array.shape)
    shape[axis], old = size, shape[axis]
    grown = np.zeros(shape, dtype=array.dtype, order=order)
    grown[(slice(None),) * axis + (slice(0, old),)] = array
    return grown


def fast_policy(params: Mapping[str, Any] | Params, seed: int = 0) -> Policy:
    """The fast path for ``params``, as a policy factory (what the reference adapter serves)."""
    return FastSnapKV(params, seed)

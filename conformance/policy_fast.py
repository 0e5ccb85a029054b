"""The fast path: the reference policy vectorised with numpy, for long traces and big budgets.

:class:`FastSnapKV` answers every call exactly as :class:`conformance.policy.SnapKV` does, bit
for bit (``tests/test_policy_fast.py`` checks it with property tests over refusals, atomicity,
huge parameters and long runs); ``conformance.policy`` stays the normative text. It exists
because the reference adapter serves long traces at budgets in the thousands, where one numpy
operation per ring slot beats a Python loop per kept position (``benchmarks/bench_reference.py``
prints the ratio). Get it through ``conformance.policy.new_policy(params, seed, fast=True)``.

How it stays exact: weights are narrowed by the same function as the reference's; sums add one
float64 column per ring slot, slot 0 upward, into accumulators that start at ``+0.0``
(``np.sum`` would add pairwise, so it is never used for sums); pooling takes maxima, which are
exact whatever the grouping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from conformance.policy import Params, Scores, narrow_attention, parse_position

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


class FastSnapKV:
    """SnapKV with kept rows in numpy arrays; see :class:`conformance.policy.SnapKV` for the
    rules. Ring columns are allocated as they are first written, rows as they are admitted."""

    def __init__(self, params: Mapping[str, Any] | Params, seed: int = 0) -> None:
        self.params = Params.parse(params)
        self.seed = seed
        self._positions = np.zeros(16, dtype=np.int64)
        self._history = np.zeros((16, 1), dtype=np.float32)
        self._count = 0
        self._written = 0  # columns below this were written at least once
        # _partial[i] is the slot-order sum of row i's columns below _summed: the summed
        # columns were not rewritten since (a rewrite resets _summed to 0).
        self._partial = np.zeros(16, dtype=np.float64)
        self._summed = 0
        self.slot = 0
        self.last_admitted: int | None = None

    @property
    def kept(self) -> list[int]:
        """The kept positions, ascending."""
        return self._positions[: self._count].tolist()

    def step(self, pos: Any, attn: Any) -> None:
        position = parse_position(pos, self.last_admitted)
        weights = narrow_attention(attn, self._count)
        if weights is not None:
            self._write(weights)
        self._admit(position)

    def evict(self) -> list[int]:
        excess = self._count - self.params.budget
        if excess <= 0:
            return []
        victims = self._select(self._pooled(self._window_sums()), excess)
        evicted = sorted(int(p) for p in self._positions[victims])
        keep = np.ones(self._count, dtype=bool)
        keep[victims] = False
        self._compact(keep)
        return evicted

    def scores(self) -> Scores:
        sums = self._window_sums()
        return Scores(positions=self.kept, sums=sums.tolist(), pooled=self._pooled(sums).tolist())

    # -- the policy --------------------------------------------------------------------------

    def _write(self, weights: list[float]) -> None:
        column = self.slot
        if column >= self._history.shape[1]:
            width = min(max(column + 1, 2 * self._history.shape[1]), self.params.obsWindow)
            grown = np.zeros((self._history.shape[0], width), dtype=np.float32)
            grown[:, : self._history.shape[1]] = self._history
            self._history = grown
        self._history[: self._count, column] = weights
        if column < self._summed:
            self._summed = 0
        self._written = max(self._written, column + 1)
        self.slot = (column + 1) % self.params.obsWindow

    def _admit(self, position: int) -> None:
        if self._count == len(self._positions):
            rows = 2 * self._count
            self._positions = _grown(self._positions, rows)
            self._partial = _grown(self._partial, rows)
            history = np.zeros((rows, self._history.shape[1]), dtype=np.float32)
            history[: self._count] = self._history[: self._count]
            self._history = history
        self._positions[self._count] = position
        self._history[self._count, : self._written] = 0.0  # later columns are zero everywhere
        self._partial[self._count] = 0.0  # an all-zero row sums to +0.0 over any columns
        self._count += 1
        self.last_admitted = position

    def _window_sums(self) -> np.ndarray:
        """float64 sums in slot index order, from ``+0.0``, continuing from the partial sums
        of the columns summed before (zeros past the written columns add nothing)."""
        count = self._count
        sums = self._partial[:count]
        if self._summed == 0:
            sums[:] = 0.0
        columns = np.ascontiguousarray(
            self._history[:count, self._summed : self._written].T, dtype=np.float64
        )
        for column in columns:
            sums += column
        self._summed = self._written
        return sums.copy()

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
            return np.array([np.argmin(scores)], dtype=np.intp)
        threshold = np.partition(scores, count - 1)[count - 1]
        below = np.flatnonzero(scores < threshold)
        tied = np.flatnonzero(scores == threshold)[: count - below.size]
        return np.concatenate((below, tied))

    def _compact(self, keep: np.ndarray) -> None:
        """Drop the rows whose ``keep`` is False; the rest keep their order and columns.

        Only the written columns move: the others are zero in every row."""
        count, history = self._count, self._history[:, : self._written]
        gone = np.flatnonzero(~keep)
        if gone.size == 1:  # the common case: slide the rows above it down by one
            index = int(gone[0])
            for array in (self._positions, history, self._partial):
                array[index : count - 1] = array[index + 1 : count]
            self._count -= 1
            return
        survivors = int(keep.sum())
        for array in (self._positions, history, self._partial):
            array[:survivors] = array[:count][keep]
        self._count = survivors


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    grown = np.zeros(rows, dtype=array.dtype)
    grown[: len(array)] = array
    return grown

"""Summation mistakes: window sums that are not float64, slot index order, from ``+0.0``.

SPEC.md §2.4 pins ``sums[i]`` as ``history[i][0] + history[i][1] + ...``, each float32 widened,
accumulated left to right in float64 from ``+0.0`` and recomputed at every eviction. Every
mutant here changes only the rounding, so each witness is a ring on which the change moves a
sum by one unit in the last place: enough to turn a tie into an order, or an order into a tie.

The witnesses use :func:`~conformance.mutants._base.ring_trap`: two subject positions whose
rings are written by a few weighted steps; the reference ranks them one way, the mutant the
other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from conformance.mutants._base import EPS53, mutant, ring_trap
from conformance.policy import SnapKV

EPS24 = 2.0**-24  # half an ulp of 1.0 in float32


class RowState(SnapKV):
    """Keeps extra per-row float64/int64 arrays aligned with the reference's storage rows."""

    ROW_ARRAYS: tuple[tuple[str, Any], ...] = ()

    def __init__(self, params: Mapping[str, Any], seed: int = 0) -> None:
        super().__init__(params, seed)
        for name, dtype in self.ROW_ARRAYS:
            setattr(self, name, np.zeros(len(self._positions), dtype=dtype))

    def admit(self, position: int) -> None:
        super().admit(position)
        for name, _ in self.ROW_ARRAYS:
            getattr(self, name)[self._count - 1] = 0

    def _grow_rows(self, rows: int) -> None:
        super()._grow_rows(rows)
        for name, dtype in self.ROW_ARRAYS:
            grown = np.zeros(rows, dtype=dtype)
            old = getattr(self, name)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def _compact(self, keep: np.ndarray) -> None:
        count = self._count
        super()._compact(keep)
        for name, _ in self.ROW_ARRAYS:
            array = getattr(self, name)
            array[: self._count] = array[:count][keep]

    def _columns(self) -> np.ndarray:
        """The ring columns written so far (never-written columns are zeros)."""
        width = min(self._history.shape[1], self.params.obsWindow)
        return self._history[: self._count, :width]


@mutant(
    "float32-accumulation",
    rule="§2.4: sums are accumulated in float64 (each float32 weight widened first)",
    origin="the history is float32, so the accumulator is declared float32 too "
    "(`float sum = 0` in C, a float32 tensor on GPU)",
    keywords=("float32 accumulation", "float32 sum", "accumulated in float32"),
    witness=ring_trap(3, [[1.0, EPS24, EPS24], [1.0, EPS24]]),
)
class Float32Accumulation(RowState):
    """Sums slot by slot in index order, but in a float32 accumulator."""

    def window_sums(self) -> np.ndarray:
        sums = np.zeros(self._count, dtype=np.float32)
        with np.errstate(over="ignore"):  # a float32 total can overflow; a real port's would
            for column in self._columns().T:
                sums += column
        return sums.astype(np.float64)


@mutant(
    "pairwise-summation",
    rule="§2.4: sums are accumulated left to right, not pairwise",
    origin="`np.sum(history, axis=1)` / `torch.sum`: numpy sums 8 or more elements pairwise",
    keywords=("pairwise",),
    witness=ring_trap(8, [[1.0, 0.0, EPS53, EPS53, 0.0, 0.0, 0.0, 0.0], [1.0]]),
)
class PairwiseSummation(RowState):
    """``np.sum`` over the ring axis, in float64 (pairwise from 8 columns on)."""

    def window_sums(self) -> np.ndarray:
        return self._columns().astype(np.float64).sum(axis=1)


@mutant(
    "reversed-slot-order",
    rule="§2.4: sums run over slots in index order 0 upward",
    origin="a loop written `for (s = obs - 1; s >= 0; --s)`, or summing a ring read newest first",
    keywords=("reversed", "reverse order", "descending slot"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class ReversedSlotOrder(RowState):
    """Sums the ring from slot ``obsWindow - 1`` down to slot 0."""

    def window_sums(self) -> np.ndarray:
        sums = np.zeros(self._count, dtype=np.float64)
        for column in self._columns().T[::-1]:
            sums += column
        return sums


@mutant(
    "chronological-order",
    rule="§2.4: sums run over slots in index order, not chronological order",
    origin="summing the window 'oldest first', starting at the cursor and wrapping round, "
    "as a time-series port naturally would",
    keywords=("chronological", "oldest first"),
    witness=ring_trap(3, [[0.0, EPS53, EPS53, 1.0], [0.0, 0.0, 0.0, 1.0]]),
)
class ChronologicalOrder(RowState):
    """Sums the ring oldest first: slots ``slot .. obsWindow - 1``, then ``0 .. slot - 1``."""

    def window_sums(self) -> np.ndarray:
        columns = self._columns()
        # Columns never written hold zeros and sit after every written one in chronological
        # order, so starting at the cursor only matters when it is inside the written part.
        start = self.slot if self.slot < columns.shape[1] else 0
        sums = np.zeros(self._count, dtype=np.float64)
        for index in [*range(start, columns.shape[1]), *range(start)]:
            sums += columns[:, index]
        return sums


@mutant(
    "kahan-summation",
    rule="§2.4: plain float64 accumulation, no compensated (Kahan) summation",
    origin="a well-meant accuracy improvement: Kahan is what numerics guides recommend",
    keywords=("kahan", "compensated"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class KahanSummation(RowState):
    """Kahan-compensated float64 sums in slot index order."""

    def window_sums(self) -> np.ndarray:
        total = np.zeros(self._count, dtype=np.float64)
        compensation = np.zeros(self._count, dtype=np.float64)
        for column in self._columns().T:
            corrected = column - compensation
            moved = total + corrected
            compensation = (moved - total) - corrected
            total = moved
        return total


@mutant(
    "running-sum",
    rule="§2.4: sums are recomputed from the ring at every eviction, no running totals",
    origin="the obvious O(1) optimisation: keep a total, add the new weight, subtract the one "
    "it overwrites; the rounding drifts",
    keywords=("running sum", "running total", "incremental"),
    witness=ring_trap(1, [[2.0**60, 1.0], [0.0, 0.5]]),
)
class RunningSum(RowState):
    """Keeps a float64 total per position: ``total = (total + new) - overwritten``."""

    ROW_ARRAYS = (("_running", np.float64),)
    _running: np.ndarray

    def record(self, weights: np.ndarray) -> None:
        count = self._count
        if self.slot < self._history.shape[1]:
            overwritten = self._history[:count, self.slot].astype(np.float64)
        else:
            overwritten = np.zeros(count, dtype=np.float64)
        self._running[:count] = (self._running[:count] + weights) - overwritten
        super().record(weights)

    def window_sums(self) -> np.ndarray:
        return self._running[: self._count].copy()


@mutant(
    "per-position-cursor",
    rule="§2.3: one ring cursor `slot` is shared by every kept position",
    origin="a ring buffer object per token, each with its own write index starting at 0, so "
    "each ring holds the same weights rotated and sums them in a different order",
    keywords=("shared cursor", "per-position cursor", "own cursor"),
    witness=ring_trap(3, [[EPS53, EPS53, 1.0], [0.0, 0.0, 1.0]], lead=True),
)
class PerPositionCursor(RowState):
    """Each kept position writes its ``t``-th observed weight to its own slot ``t % obsWindow``."""

    ROW_ARRAYS = (("_writes", np.int64),)
    _writes: np.ndarray

    def record(self, weights: np.ndarray) -> None:
        count = self._count
        columns = self._writes[:count] % self.params.obsWindow
        if count:
            self._ensure_width(int(columns.max()) + 1)
            self._history[np.arange(count), columns] = weights
        self._writes[:count] += 1
        self.slot = (self.slot + 1) % self.params.obsWindow

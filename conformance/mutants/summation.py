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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from conformance.mutants._base import EPS53, mutant, ring_trap
from conformance.policy.reference import Ring, SnapKV, float32_literal

EPS24 = 2.0**-24  # half an ulp of 1.0 in float32


class PerRow(SnapKV):
    """Keeps one extra value per kept entry in ``self.per_row``, aligned with ``kept``."""

    def __init__(self, params: Mapping[str, Any], seed: int = 0) -> None:
        self.per_row: list[Any] = []
        super().__init__(params, seed)

    def fresh(self) -> Any:
        """The value of a newly admitted entry."""
        return 0

    def admit(self, position: int) -> None:
        super().admit(position)
        self.per_row.append(self.fresh())

    def remove(self, victims: Iterable[int]) -> None:
        gone = set(victims)
        super().remove(gone)
        self.per_row = [value for index, value in enumerate(self.per_row) if index not in gone]


def full_ring(ring: Ring, obs: int) -> list[float]:
    """The ring as a port stores it: ``obs`` slots, the unwritten ones zero (a huge window is
    cut to the written slots: no witness or vector tells the two apart)."""
    width = obs if obs <= 4096 else len(ring.values)
    return ring.values + [0.0] * (width - len(ring.values))


@mutant(
    "float32-accumulation",
    rule="§2.4: sums are accumulated in float64 (each float32 weight widened first)",
    origin="the history is float32, so the accumulator is declared float32 too "
    "(`float sum = 0` in C, a float32 tensor on GPU)",
    keywords=("float32 accumulation", "float32 sum", "accumulated in float32"),
    witness=ring_trap(3, [[1.0, EPS24, EPS24], [1.0, EPS24]]),
)
class Float32Accumulation(SnapKV):
    """Sums slot by slot in index order, but in a float32 accumulator."""

    def window_sums(self) -> list[float]:
        sums = []
        for ring in self.rings:
            total = 0.0
            for weight in ring.values:
                # The float64 sum of two float32 values rounded to float32 is their float32
                # sum (double rounding is harmless when 53 >= 2 * 24 + 2).
                total = float32_literal(total + weight)
            sums.append(total)
        return sums


@mutant(
    "pairwise-summation",
    rule="§2.4: sums are accumulated left to right, not pairwise",
    origin="`np.sum(history, axis=1)` / `torch.sum`: numpy sums 8 or more elements pairwise",
    keywords=("pairwise",),
    witness=ring_trap(8, [[1.0, 0.0, EPS53, EPS53, 0.0, 0.0, 0.0, 0.0], [1.0]]),
)
class PairwiseSummation(SnapKV):
    """``np.sum`` over the ring axis, in float64 (pairwise from 8 columns on)."""

    def window_sums(self) -> list[float]:
        obs = self.params.obsWindow
        return [float(np.sum(np.array(full_ring(ring, obs)))) for ring in self.rings]


@mutant(
    "reversed-slot-order",
    rule="§2.4: sums run over slots in index order 0 upward",
    origin="a loop written `for (s = obs - 1; s >= 0; --s)`, or summing a ring read newest first",
    keywords=("reversed", "reverse order", "descending slot"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class ReversedSlotOrder(SnapKV):
    """Sums the ring from slot ``obsWindow - 1`` down to slot 0."""

    def window_sums(self) -> list[float]:
        return [ordered_sum(ring.values, reversed(range(len(ring.values)))) for ring in self.rings]


def ordered_sum(values: Sequence[float], slots: Iterable[int]) -> float:
    """float64 sum from ``+0.0`` of ``values[s]`` for ``s`` in ``slots``, in that order (the
    unwritten zero slots are left out: they add nothing to a sum that is not ``-0.0``)."""
    total = 0.0
    for slot in slots:
        total += values[slot]
    return total


@mutant(
    "chronological-order",
    rule="§2.4: sums run over slots in index order, not chronological order",
    origin="summing the window 'oldest first', starting at the cursor and wrapping round, "
    "as a time-series port naturally would",
    keywords=("chronological", "oldest first"),
    witness=ring_trap(3, [[0.0, EPS53, EPS53, 1.0], [0.0, 0.0, 0.0, 1.0]]),
)
class ChronologicalOrder(SnapKV):
    """Sums the ring oldest first: slots ``slot .. obsWindow - 1``, then ``0 .. slot - 1``."""

    def window_sums(self) -> list[float]:
        sums = []
        for ring in self.rings:
            written = len(ring.values)
            start = min(self.slot, written)
            sums.append(ordered_sum(ring.values, [*range(start, written), *range(start)]))
        return sums


@mutant(
    "kahan-summation",
    rule="§2.4: plain float64 accumulation, no compensated (Kahan) summation",
    origin="a well-meant accuracy improvement: Kahan is what numerics guides recommend",
    keywords=("kahan", "compensated"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class KahanSummation(SnapKV):
    """Kahan-compensated float64 sums in slot index order."""

    def window_sums(self) -> list[float]:
        sums = []
        for ring in self.rings:
            total = compensation = 0.0
            # The zero slots after the written ones still apply the pending compensation;
            # a few of them reach a fixed point, after which the rest change nothing.
            zeros = min(self.params.obsWindow - len(ring.values), 64)
            for weight in [*ring.values, *[0.0] * zeros]:
                corrected = weight - compensation
                moved = total + corrected
                compensation = (moved - total) - corrected
                total = moved
            sums.append(total)
        return sums


@mutant(
    "running-sum",
    rule="§2.4: sums are recomputed from the ring at every eviction, no running totals",
    origin="the obvious O(1) optimisation: keep a total, add the new weight, subtract the one "
    "it overwrites; the rounding drifts",
    keywords=("running sum", "running total", "incremental"),
    witness=ring_trap(1, [[2.0**60, 1.0], [0.0, 0.5]]),
)
class RunningSum(PerRow):
    """Keeps a float64 total per position: ``total = (total + new) - overwritten``."""

    def fresh(self) -> float:
        return 0.0

    def write(self, weights: Sequence[float]) -> None:
        slot = self.slot
        for index, (ring, weight) in enumerate(zip(self.rings, weights, strict=True)):
            overwritten = ring.values[slot] if slot < len(ring.values) else 0.0
            self.per_row[index] = (self.per_row[index] + weight) - overwritten
        super().write(weights)

    def window_sums(self) -> list[float]:
        return list(self.per_row)


@mutant(
    "per-position-cursor",
    rule="§2.3: one ring cursor `slot` is shared by every kept position",
    origin="a ring buffer object per token, each with its own write index starting at 0, so "
    "each ring holds the same weights rotated and sums them in a different order",
    keywords=("shared cursor", "per-position cursor", "own cursor"),
    witness=ring_trap(3, [[EPS53, EPS53, 1.0], [0.0, 0.0, 1.0]], lead=True),
)
class PerPositionCursor(PerRow):
    """Each kept position writes its ``t``-th observed weight to its own slot ``t % obsWindow``."""

    def write(self, weights: Sequence[float]) -> None:
        for index, (ring, weight) in enumerate(zip(self.rings, weights, strict=True)):
            ring.write(self.per_row[index] % self.params.obsWindow, weight)
            self.per_row[index] += 1
        self.slot = (self.slot + 1) % self.params.obsWindow

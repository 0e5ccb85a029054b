"""Pooling mistakes: which sums a position's pooled score is the maximum of.

SPEC.md §2.4: ``pooled[i] = max(sums[j])`` for kept indices ``j`` in ``[i - r, i + r]``
clamped to the kept list, ``r = (poolKernel - 1) / 2``; neighbours are adjacent kept entries (not
position numbers) and the protected recent entries count as neighbours.
"""

from __future__ import annotations

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.policy import SnapKV


def window_max(sums: np.ndarray, behind: int, ahead: int) -> np.ndarray:
    """``max(sums[i - behind .. i + ahead])`` clamped to the list, for every ``i``."""
    pooled = sums.copy()
    for offset in range(1, min(ahead, len(sums) - 1) + 1):
        np.maximum(pooled[:-offset], sums[offset:], out=pooled[:-offset])
    for offset in range(1, min(behind, len(sums) - 1) + 1):
        np.maximum(pooled[offset:], sums[:-offset], out=pooled[offset:])
    return pooled


def radius(policy: SnapKV) -> int:
    return (policy.params.poolKernel - 1) // 2


@mutant(
    "pool-over-position-numbers",
    rule="§2.4: neighbours are adjacent kept entries, not adjacent position numbers",
    origin="the paper pools over token indices of a dense prompt; after evictions leave holes, "
    "a port still pools over positions within r by number",
    keywords=("position numbers", "across eviction holes", "kept-entry adjacency", "holes"),
    witness=Witness(
        params(3, 1, 1, 3),
        (step(0), step(10), step(20), step(30, [0.5, 0.25, 1.0]), EVICT),
    ),
)
class PoolOverPositionNumbers(SnapKV):
    """Pools each position over kept positions whose *numbers* are within ``r`` of its own."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        positions = self._positions[: self._count]
        pooled = sums.copy()
        for offset in range(1, min(radius(self), len(sums) - 1) + 1):
            # Positions strictly increase, so a position within r by number is also within r
            # kept entries; the test below keeps only the neighbours close enough by number.
            near = positions[offset:] - positions[:-offset] <= radius(self)
            ahead = np.where(near, sums[offset:], pooled[:-offset])
            np.maximum(pooled[:-offset], ahead, out=pooled[:-offset])
            behind = np.where(near, sums[:-offset], pooled[offset:])
            np.maximum(pooled[offset:], behind, out=pooled[offset:])
        return pooled


FORWARD_WITNESS = Witness(params(3, 1, 1, 3), (*steps(0, 3), step(3, [1.0, 0.25, 0.5]), EVICT))


@mutant(
    "forward-only-pooling",
    rule="§2.4: the pooling window is [i - r, i + r], centred",
    origin="a pooling loop over `j = i .. i + k - 1` with the padding forgotten, as one C++ "
    "engine does: the window only looks ahead",
    keywords=("forward-only", "centred", "centered", "both sides", "both directions"),
    witness=FORWARD_WITNESS,
)
class ForwardOnlyPooling(SnapKV):
    """Pools over ``[i, i + r]`` only."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        return window_max(sums, 0, radius(self))


@mutant(
    "backward-only-pooling",
    rule="§2.4: the pooling window is [i - r, i + r], centred",
    origin="a causal (look-back only) pooling window, natural in decode loops that only see "
    "the past",
    keywords=("backward-only", "centred", "centered", "both sides", "both directions"),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.0, 0.25, 0.0]), EVICT)),
)
class BackwardOnlyPooling(SnapKV):
    """Pools over ``[i - r, i]`` only."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        return window_max(sums, radius(self), 0)


@mutant(
    "kernel-as-radius",
    rule="§2.4: r = (poolKernel - 1) / 2",
    origin="reading poolKernel as a half-width (`window = 2 * poolKernel + 1`)",
    keywords=("radius", "half-width", "(poolkernel - 1) / 2"),
    witness=Witness(params(4, 1, 1, 3), (*steps(0, 4), step(4, [1.0, 0.5, 0.0, 0.25]), EVICT)),
)
class KernelAsRadius(SnapKV):
    """Pools over ``[i - poolKernel, i + poolKernel]``."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        kernel = self.params.poolKernel
        return window_max(sums, kernel, kernel)


@mutant(
    "wrap-around-pooling",
    rule="§2.4: the pooling window is clamped to the kept list at both ends",
    origin="circular padding, or indexing `sums[(i + d) % n]` so the first and last kept "
    "entries become neighbours",
    keywords=("wrap-around pooling", "clamp", "circular"),
    witness=Witness(params(2, 0, 1, 3), (*steps(0, 2), step(2, [1.0, 0.5]), EVICT)),
)
class WrapAroundPooling(SnapKV):
    """Pools over ``[i - r, i + r]`` modulo the kept count (the ends wrap round)."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        pooled = sums.copy()
        for offset in range(1, min(radius(self), len(sums) - 1) + 1):
            np.maximum(pooled, np.roll(sums, offset), out=pooled)
            np.maximum(pooled, np.roll(sums, -offset), out=pooled)
        return pooled


@mutant(
    "average-pooling",
    rule="§2.4: pooled scores are the maximum over the window, not the mean",
    origin="the official SnapKV code defaults to `F.avg_pool1d` (zero padding, divided by "
    "the kernel)",
    keywords=("average", "avg_pool"),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.25, 0.25, 0.25]), EVICT)),
)
class AveragePooling(SnapKV):
    """Pooled score = sum over the clamped window / ``poolKernel`` (avg_pool1d with padding)."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        total = sums.copy()
        for offset in range(1, min(radius(self), len(sums) - 1) + 1):
            total[:-offset] += sums[offset:]
            total[offset:] += sums[:-offset]
        return total / self.params.poolKernel


@mutant(
    "recent-excluded-from-pooling",
    rule="§2.4: the protected recent entries count as neighbours in the pooling",
    origin="slicing the candidates off first (`sums[:-recent]`) and pooling only the slice",
    keywords=(
        "excluded from pooling",
        "left out of pooling",
        "recent entries take part",
        "recent neighbour",
    ),
    witness=Witness(params(4, 2, 1, 3), (*steps(0, 4), step(4, [1.0, 0.25, 0.5, 2.0]), EVICT)),
)
class RecentExcludedFromPooling(SnapKV):
    """Pools the candidates among themselves; the recent entries do not defend neighbours."""

    def pool(self, sums: np.ndarray) -> np.ndarray:
        candidates = self.candidate_count()
        pooled = sums.copy()
        pooled[:candidates] = super().pool(sums[:candidates])
        return pooled


@mutant(
    "pool-then-sum",
    rule="§2.4: sum each ring first, then max-pool the sums",
    origin="max-pooling each step's attention row (as the prefill paper pools the votes) and "
    "summing the pooled rows over the window",
    keywords=("pool-then-sum", "pooled per step", "pooling each step", "summed first"),
    witness=Witness(
        params(3, 1, 2, 3),
        (*steps(0, 3), step(3, [1.0, 0.0, 0.0]), step(4, [0.0, 0.0, 1.0, 0.0]), EVICT),
    ),
)
class PoolThenSum(SnapKV):
    """Max-pools every ring column over the window, then sums the pooled columns."""

    def window_sums(self) -> np.ndarray:
        width = min(self._history.shape[1], self.params.obsWindow)
        sums = np.zeros(self._count, dtype=np.float64)
        for column in range(width):
            sums += super().pool(self._history[: self._count, column].astype(np.float64))
        return sums

    def pool(self, sums: np.ndarray) -> np.ndarray:
        return sums.copy()

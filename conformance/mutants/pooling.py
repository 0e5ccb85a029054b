"""Pooling mistakes: which sums a position's pooled score is made of, and how.

SPEC.md §2.4: ``pooled[i] = max(sums[j])`` for kept indices ``j`` in ``[i - r, i + r]``
clamped to the kept list, ``r = (poolKernel - 1) / 2``; neighbours are adjacent kept entries (not
position numbers) and the protected recent entries count as neighbours. The choices change one
of four steps: which entries are pooled together (``pool-members``), each entry's window
(``pool-window``), what is taken over it (``pool-kind``), and whether sums are pooled at all
(``pool-structure``).
"""

from __future__ import annotations

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants.model import Model, positions_window, window_sum


def radius(policy: Model) -> int:
    return (policy.params.poolKernel - 1) // 2


def offsets(count: int, behind: int, ahead: int) -> tuple[np.ndarray, np.ndarray, bool]:
    index = np.arange(count)
    return index - behind, index + ahead + 1, False


# -- the window ------------------------------------------------------------------------------------


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
class PoolOverPositionNumbers(Model):
    """Pools each position over kept positions whose *numbers* are within ``r`` of its own."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        low, high = positions_window(self.kept[:count], radius(self))
        return low, high, False


@mutant(
    "forward-only-pooling",
    rule="§2.4: the pooling window is [i - r, i + r], centred",
    origin="a pooling loop over `j = i .. i + k - 1` with the padding forgotten, as "
    "OpenVINO GenAI's `_max_pool` does: the window only looks ahead",
    keywords=("forward-only", "centred", "centered", "both sides", "both directions"),
    witness=Witness(params(3, 1, 1, 3), (*steps(0, 3), step(3, [1.0, 0.25, 0.5]), EVICT)),
)
class ForwardOnlyPooling(Model):
    """Pools over ``[i, i + poolKernel - 1]`` (ahead only)."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        return offsets(count, 0, self.params.poolKernel - 1)


@mutant(
    "backward-only-pooling",
    rule="§2.4: the pooling window is [i - r, i + r], centred",
    origin="a causal (look-back only) pooling window, natural in decode loops that only see "
    "the past",
    keywords=("backward-only", "centred", "centered", "both sides", "both directions"),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.0, 0.25, 0.0]), EVICT)),
)
class BackwardOnlyPooling(Model):
    """Pools over ``[i - r, i]`` only."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        return offsets(count, radius(self), 0)


@mutant(
    "kernel-as-radius",
    rule="§2.4: r = (poolKernel - 1) / 2",
    origin="reading poolKernel as a half-width (`window = 2 * poolKernel + 1`)",
    keywords=("radius", "half-width", "(poolkernel - 1) / 2", "kernel used as the radius"),
    witness=Witness(params(4, 1, 1, 3), (*steps(0, 4), step(4, [1.0, 0.5, 0.0, 0.25]), EVICT)),
)
class KernelAsRadius(Model):
    """Pools over ``[i - poolKernel, i + poolKernel]``."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        kernel = self.params.poolKernel
        return offsets(count, kernel, kernel)


@mutant(
    "radius-one-too-wide",
    rule="§2.4: r = (poolKernel - 1) / 2",
    origin="`r = poolKernel / 2 + 1`, an off-by-one in the half-width",
    keywords=("off-by-one radius", "off-by-one pooling radius"),
)
class RadiusOneTooWide(Model):
    """Pools over ``[i - r - 1, i + r + 1]``."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        return offsets(count, radius(self) + 1, radius(self) + 1)


@mutant(
    "radius-one-too-narrow",
    rule="§2.4: r = (poolKernel - 1) / 2",
    origin="`r - 1` for the half-width (an exclusive bound taken for an inclusive one)",
    keywords=("off-by-one radius", "off-by-one pooling radius"),
)
class RadiusOneTooNarrow(Model):
    """Pools over ``[i - r + 1, i + r - 1]``."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        narrow = max(0, radius(self) - 1)
        return offsets(count, narrow, narrow)


@mutant(
    "pooling-at-kernel-one",
    rule="§2.4: poolKernel 1 (r = 0) pools nothing",
    origin="a radius of at least 1 (`max(1, k // 2)`), so pooling is never switched off",
    keywords=("not switched off at kernel 1", "pooling left on at kernel 1"),
)
class PoolingAtKernelOne(Model):
    """Pools with a radius of at least 1, even at poolKernel 1."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        width = max(1, radius(self))
        return offsets(count, width, width)


@mutant(
    "kernel-capped",
    rule="§2.4: a window wider than the kept list is clamped to the list",
    origin="the kernel capped at the kept count (`min(poolKernel, len(kept))`) before the "
    "radius is taken, which narrows it",
    keywords=("silently capped",),
)
class KernelCapped(Model):
    """Takes the radius of ``min(poolKernel, len(kept))``."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        width = (min(self.params.poolKernel, count) - 1) // 2
        return offsets(count, width, width)


@mutant(
    "pool-out-of-bounds",
    rule="§2.4: a window wider than the kept list is clamped to the list",
    origin="a pooling window read without clamping (`sums[i + d]` past the end): an "
    "IndexError, or garbage in C",
    keywords=("out-of-bounds",),
)
class PoolOutOfBounds(Model):
    """Fails (an exception) when a pooling window reaches past the kept list."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        width = radius(self)
        if count and width >= count:
            raise IndexError(f"index {count} is out of bounds for axis 0 with size {count}")
        return offsets(count, width, width)


@mutant(
    "edges-unpooled",
    rule="§2.4: the window is clamped to the kept list, so edge entries are pooled too",
    origin="a 'valid' convolution or a loop over `r <= i < n - r`, which leaves the first "
    "and last r entries with their own sums",
    keywords=("unpooled", "'valid' convolution"),
)
class EdgesUnpooled(Model):
    """Leaves the first and last ``r`` entries unpooled (their own sums)."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        width = radius(self)
        low, high, _ = offsets(count, width, width)
        edge = (low < 0) | (high > count)
        index = np.arange(count)
        return np.where(edge, index, low), np.where(edge, index + 1, high), False


@mutant(
    "wrap-around-pooling",
    rule="§2.4: the pooling window is clamped to the kept list at both ends",
    origin="circular padding, or indexing `sums[(i + d) % n]` so the first and last kept "
    "entries become neighbours",
    keywords=("wrap-around pooling", "clamp", "circular"),
    witness=Witness(params(2, 0, 1, 3), (*steps(0, 2), step(2, [1.0, 0.5]), EVICT)),
)
class WrapAroundPooling(Model):
    """Pools over ``[i - r, i + r]`` modulo the kept count (the ends wrap round)."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        width = radius(self)
        low, high, _ = offsets(count, width, width)
        return low, high, True


@mutant(
    "positions-as-indices",
    rule="§2.4: pooling runs over kept indices; a position number is not an index",
    origin="`sums[pos]` for `sums[i]`: the position used as an index into the kept arrays, "
    "which only works while positions are 0, 1, 2, ... with nothing evicted",
    keywords=("indices derived from positions",),
)
class PositionsAsIndices(Model):
    """Indexes the kept arrays by position number: past the kept count, an IndexError."""

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        kept = np.array(self.kept[:count], dtype=np.int64)
        if count and int(kept.max()) >= count:
            raise IndexError(f"index {int(kept.max())} is out of bounds for size {count}")
        width = radius(self)
        return kept - width, kept + width + 1, False


# -- what is taken over the window ------------------------------------------------------------


@mutant(
    "average-pooling",
    rule="§2.4: pooled scores are the maximum over the window, not the mean",
    origin="the official SnapKV code's `F.avg_pool1d(kernel, padding=kernel // 2)` (zero "
    "padding, divided by the kernel): the window added left to right, then divided",
    keywords=("average", "avg_pool"),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.25, 0.25, 0.25]), EVICT)),
)
class AveragePooling(Model):
    """Pooled score = the window's sum (left to right, past the ends zero) / poolKernel, in
    the accumulator's precision."""

    def pool_reduce(
        self, values: np.ndarray, low: np.ndarray, high: np.ndarray, wrap: bool
    ) -> np.ndarray:
        dtype = self.ACCUMULATOR
        total, _ = window_sum(values, low, high, dtype)
        return (total / dtype(self.params.poolKernel)).astype(np.float64)


@mutant(
    "mean-pooling",
    rule="§2.4: pooled scores are the maximum over the window, not the mean",
    origin="`avg_pool1d(..., count_include_pad=False)` or a mean over the clamped window: "
    "each window's sum divided by how many entries it holds",
    keywords=("average pooling", "avg_pool"),
)
class MeanPooling(Model):
    """Pooled score = the clamped window's sum / the entries it holds."""

    def pool_reduce(
        self, values: np.ndarray, low: np.ndarray, high: np.ndarray, wrap: bool
    ) -> np.ndarray:
        dtype = self.ACCUMULATOR
        total, held = window_sum(values, low, high, dtype)
        return (total / np.maximum(held, 1).astype(dtype)).astype(np.float64)


# -- which entries are pooled together ---------------------------------------------------------


@mutant(
    "recent-excluded-from-pooling",
    rule="§2.4: the protected recent entries count as neighbours in the pooling",
    origin="slicing the candidates off first (`sums[:-recent]`) and pooling only the slice, "
    "as the official SnapKV and kvpress code do for the observation window",
    keywords=(
        "excluded from pooling",
        "left out of pooling",
        "recent entries take part",
        "recent neighbour",
    ),
    witness=Witness(params(4, 2, 1, 3), (*steps(0, 4), step(4, [1.0, 0.25, 0.5, 2.0]), EVICT)),
)
class RecentExcludedFromPooling(Model):
    """Pools the candidates among themselves; the recent entries do not defend neighbours."""

    def pool_members(self) -> int:
        return len(self.kept) - self.params.recentWindow


# -- whether sums are pooled ---------------------------------------------------------------------


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
class PoolThenSum(Model):
    """At each eviction, pools every ring column over the kept entries, then sums the pooled
    columns; no pooling after summing."""

    def ring_view(self, ring: np.ndarray) -> np.ndarray:
        if not ring.size:
            return ring
        return self.pool_values(ring)  # every column at once (pooling runs along the rows)

    def pool(self, sums: np.ndarray) -> np.ndarray:
        return sums.copy()


@mutant(
    "pool-rows-on-arrival",
    rule="§2.4: sum each ring first, then pool the sums at eviction",
    origin="OpenVINO GenAI's cache eviction: each step's attention row is pooled when it "
    "arrives, and the pooled row is what the scores accumulate",
    keywords=("max-pooling each step's attention row", "pooled when it arrives"),
)
class PoolRowsOnArrival(Model):
    """Pools each step's weights over the kept entries as they arrive and records the pooled
    row; no pooling at eviction."""

    def arriving(self, weights: np.ndarray) -> np.ndarray:
        return self.pool_values(weights) if len(weights) else weights

    def pool(self, sums: np.ndarray) -> np.ndarray:
        return sums.copy()

"""Pooling mistakes: which sums a position's pooled score is the maximum of.

SPEC.md §2.4: ``pooled[i] = max(sums[j])`` for kept indices ``j`` in ``[i - r, i + r]``
clamped to the kept list, ``r = (poolKernel - 1) / 2``; neighbours are adjacent kept entries (not
position numbers) and the protected recent entries count as neighbours.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Sequence

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.policy.reference import SnapKV, sliding_max


def window_max(sums: Sequence[float], behind: int, ahead: int) -> list[float]:
    """``max(sums[i - behind .. i + ahead])`` clamped to the list, for every ``i`` (a
    monotonic deque, as :func:`conformance.policy.reference.sliding_max`, with a window off
    centre)."""
    count = len(sums)
    pooled: list[float] = []
    window: deque[int] = deque()
    right = 0  # the next index to enter the window
    for i in range(count):
        while right < count and right <= i + ahead:
            while window and sums[window[-1]] <= sums[right]:
                window.pop()
            window.append(right)
            right += 1
        while window[0] < i - behind:
            window.popleft()
        pooled.append(sums[window[0]])
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

    def pool(self, sums: Sequence[float]) -> list[float]:
        kept, r = self.kept, radius(self)
        pooled = []
        for position in kept:
            low = bisect.bisect_left(kept, position - r)
            high = bisect.bisect_right(kept, position + r)
            pooled.append(max(sums[low:high]))
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

    def pool(self, sums: Sequence[float]) -> list[float]:
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

    def pool(self, sums: Sequence[float]) -> list[float]:
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

    def pool(self, sums: Sequence[float]) -> list[float]:
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

    def pool(self, sums: Sequence[float]) -> list[float]:
        count = len(sums)
        r = min(radius(self), count - 1)
        if r <= 0:
            return list(sums)
        # The list with r entries of the other end on each side: its inner windows wrap.
        wrapped = [*sums[count - r :], *sums, *sums[:r]]
        return sliding_max(wrapped, r)[r : r + count]


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

    def pool(self, sums: Sequence[float]) -> list[float]:
        count = len(sums)
        r = min(radius(self), count - 1)
        pooled = []
        for i in range(count):
            total = sums[i]
            for offset in range(1, r + 1):  # right neighbour, then left, nearest first
                if i + offset < count:
                    total += sums[i + offset]
                if i - offset >= 0:
                    total += sums[i - offset]
            pooled.append(total / self.params.poolKernel)
        return pooled


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

    def pool(self, sums: Sequence[float]) -> list[float]:
        candidates = self.candidate_count()
        return [*super().pool(sums[:candidates]), *sums[candidates:]]


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

    def window_sums(self) -> list[float]:
        sums = [0.0] * len(self.rings)
        width = max((len(ring.values) for ring in self.rings), default=0)
        for slot in range(width):
            column = [ring.values[slot] if slot < len(ring.values) else 0.0 for ring in self.rings]
            for index, pooled in enumerate(super().pool(column)):
                sums[index] += pooled
        return sums

    def pool(self, sums: Sequence[float]) -> list[float]:
        return list(sums)

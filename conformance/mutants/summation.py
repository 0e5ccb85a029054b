"""Summation mistakes: window sums that are not float64, not in slot index order, not from
``+0.0``, not recomputed, or not the ring at all.

SPEC.md §2.4 pins ``sums[i]`` as ``history[i][0] + history[i][1] + ...``, each float32 widened,
accumulated left to right in float64 from ``+0.0`` and recomputed at every eviction. The order
choices here (step ``summation-order``) are written over numpy columns in the model's
:attr:`~conformance.mutants.model.Model.ACCUMULATOR`, so each composes with the precision
choices (step ``summation-precision``): numpy's pairwise sum in float32 is
``pairwise-summation`` with ``float32-accumulation``, exactly as ``np.sum`` of a float32 array
adds.

The witnesses use :func:`~conformance.mutants._base.ring_trap`: two subject positions whose
rings are written by a few weighted steps; the reference ranks them one way, the mutant the
other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from conformance.mutants._base import EPS53, EVICT, Witness, mutant, params, ring_trap, step
from conformance.mutants.model import Model

EPS24 = 2.0**-24  # half an ulp of 1.0 in float32
#: A ring longer than this is summed over its written slots only (a port cannot hold 2^31
#: columns; no vector tells the two apart).
FULL_RING_UP_TO = 4096


def columns(ring: np.ndarray, dtype: Any, order: Sequence[int] | range) -> list[np.ndarray]:
    return [ring[:, column].astype(dtype) for column in order]


def sequential(values: list[np.ndarray], count: int, dtype: Any) -> np.ndarray:
    total = np.zeros(count, dtype=dtype)
    for value in values:
        total += value
    return total


def full_width(model: Model) -> int:
    """The ring's slots as a port stores them (unwritten ones zero), or the written slots for
    a huge window."""
    size = model.ring_size()
    return size if size <= FULL_RING_UP_TO else model.width


def padded(ring: np.ndarray, width: int) -> np.ndarray:
    if ring.shape[1] >= width:
        return ring[:, :width]
    out = np.zeros((ring.shape[0], width))
    out[:, : ring.shape[1]] = ring
    return out


# -- precision -----------------------------------------------------------------------------------


@mutant(
    "float32-accumulation",
    rule="§2.4: sums are accumulated in float64 (each float32 weight widened first)",
    origin="the history is float32, so the accumulator is declared float32 too "
    "(`float sum = 0` in C, a float32 tensor on GPU)",
    keywords=(
        "float32 accumulation",
        "float32 sum",
        "accumulated in float32",
        "accumulated or stored in float32",
    ),
    witness=ring_trap(3, [[1.0, EPS24, EPS24], [1.0, EPS24]]),
)
class Float32Accumulation(Model):
    """Sums in a float32 accumulator (each addition rounded to float32)."""

    ACCUMULATOR = np.float32


@mutant(
    "sums-stored-as-float32",
    rule="§2.4: sums are float64",
    origin="summing in float64 but keeping the sums in a float32 array (`float sums[n]`, "
    "`scores.astype(np.float32)`)",
    keywords=("sums stored as float32", "stored in float32"),
)
class SumsStoredAsFloat32(Model):
    """Rounds each float64 sum to float32 before pooling."""

    def finish_sums(self, sums: np.ndarray) -> np.ndarray:
        return sums.astype(np.float32).astype(np.float64)


# -- order -----------------------------------------------------------------------------------------


@mutant(
    "pairwise-summation",
    rule="§2.4: sums are accumulated left to right, not pairwise",
    origin="`np.sum(history, axis=1)` / `torch.sum`: numpy sums 8 or more elements pairwise",
    keywords=("pairwise",),
    witness=ring_trap(8, [[1.0, 0.0, EPS53, EPS53, 0.0, 0.0, 0.0, 0.0], [1.0]]),
)
class PairwiseSummation(Model):
    """`np.sum` over the ring axis (pairwise from 8 slots on), every slot of the ring."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        full = padded(ring, full_width(self)).astype(self.ACCUMULATOR)
        return np.sum(full, axis=1, dtype=self.ACCUMULATOR).astype(np.float64)


@mutant(
    "reversed-slot-order",
    rule="§2.4: sums run over slots in index order 0 upward",
    origin="a loop written `for (s = obs - 1; s >= 0; --s)`, or summing a ring read newest first",
    keywords=("reversed", "reverse order", "descending slot"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class ReversedSlotOrder(Model):
    """Sums the ring from the last slot down to slot 0."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        order = range(ring.shape[1] - 1, -1, -1)
        values = columns(ring, self.ACCUMULATOR, order)
        return sequential(values, len(ring), self.ACCUMULATOR).astype(np.float64)


@mutant(
    "chronological-order",
    rule="§2.4: sums run over slots in index order, not chronological order",
    origin="summing the window 'oldest first', starting at the cursor and wrapping round, "
    "as a time-series port naturally would",
    keywords=("chronological", "oldest first"),
    witness=ring_trap(3, [[0.0, EPS53, EPS53, 1.0], [0.0, 0.0, 0.0, 1.0]]),
)
class ChronologicalOrder(Model):
    """Sums the ring oldest first: from the cursor to the last slot, then from slot 0."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        written = ring.shape[1]
        start = min(self.slot, written)
        values = columns(ring, self.ACCUMULATOR, [*range(start, written), *range(start)])
        return sequential(values, len(ring), self.ACCUMULATOR).astype(np.float64)


@mutant(
    "kahan-summation",
    rule="§2.4: plain float64 accumulation, no compensated (Kahan) summation",
    origin="a well-meant accuracy improvement: Kahan is what numerics guides recommend",
    keywords=("kahan", "compensated"),
    witness=ring_trap(3, [[1.0, EPS53, EPS53], [1.0]]),
)
class KahanSummation(Model):
    """Kahan-compensated sums in slot index order."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        dtype = self.ACCUMULATOR
        total, compensation = self.fold(ring, ("kahan", dtype), ((), ()), dtype, kahan_step)
        # The zero slots after the written ones still apply the pending compensation; a few
        # of them reach a fixed point, after which the rest change nothing.
        zero = np.zeros(len(ring), dtype=dtype)
        for index in range(min(self.ring_size() - ring.shape[1], 64)):
            total, compensation = kahan_step((total, compensation), zero, index)
        return total.astype(np.float64)


def kahan_step(state: tuple[np.ndarray, ...], value: np.ndarray, index: int) -> tuple:
    total, compensation = state
    corrected = value.astype(total.dtype, copy=False) - compensation
    moved = total + corrected
    return moved, (moved - total) - corrected


@mutant(
    "neumaier-summation",
    rule="§2.4: plain float64 accumulation, no compensated (Neumaier) summation",
    origin="Kahan's improved variant (Neumaier, as in Python's `math.fsum` precursors and "
    "Julia's `sum_kbn`)",
    keywords=("neumaier",),
)
class NeumaierSummation(Model):
    """Neumaier-compensated sums in slot index order (the compensation added at the end)."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        dtype = self.ACCUMULATOR
        total, compensation = self.fold(ring, ("neumaier", dtype), ((), ()), dtype, neumaier_step)
        return (total + compensation).astype(np.float64)


def neumaier_step(state: tuple[np.ndarray, ...], value: np.ndarray, index: int) -> tuple:
    total, compensation = state
    value = value.astype(total.dtype, copy=False)
    moved = total + value
    bigger = np.abs(total) >= np.abs(value)
    return moved, compensation + np.where(bigger, (total - moved) + value, (value - moved) + total)


class SimdLanes(Model):
    """Sums the written slots in ``LANES`` interleaved partial sums (slot ``s`` into lane
    ``s % LANES`` for the whole blocks), the lanes reduced by halving, then the tail added in
    order."""

    LANES: ClassVar[int] = 4

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        dtype, width = self.ACCUMULATOR, self.LANES
        body = ring.shape[1] - ring.shape[1] % width

        def add(state: tuple[np.ndarray, ...], value: np.ndarray, index: int) -> tuple:
            (partial,) = state  # a fresh copy of the fold's state: safe to change in place
            partial[:, index % width] += value.astype(dtype, copy=False)
            return (partial,)

        (partial,) = self.fold(ring, ("lanes", width, dtype), ((width,),), dtype, add, body)
        lanes = [partial[:, lane] for lane in range(width)]
        while len(lanes) > 1:
            half = len(lanes) // 2
            lanes = [lanes[i] + lanes[i + half] for i in range(half)]
        total = lanes[0].copy()
        for index in range(body, ring.shape[1]):
            total += ring[:, index].astype(dtype)
        return total.astype(np.float64)


SIMD_ORIGIN = (
    "a sum loop vectorised by the compiler (`-ffast-math`, `-Ofast`, `#pragma omp simd`, "
    "explicit intrinsics) or a BLAS dot product with a ones vector: {lanes} partial sums, "
    "reduced by halving, then the tail"
)


@mutant(
    "simd-lanes-4",
    rule="§2.4: sums are accumulated left to right, one slot at a time",
    origin=SIMD_ORIGIN.format(lanes=4),
    keywords=("simd lanes", "4, 8 or 16 partial sums"),
)
class SimdLanes4(SimdLanes):
    """Sums the written slots in 4 interleaved partial sums (slot s into lane s % 4), reduced
    by halving, then the tail in order."""

    LANES = 4


@mutant(
    "simd-lanes-8",
    rule="§2.4: sums are accumulated left to right, one slot at a time",
    origin=SIMD_ORIGIN.format(lanes=8),
    keywords=("simd lanes", "4, 8 or 16 partial sums"),
)
class SimdLanes8(SimdLanes):
    """Sums the written slots in 8 interleaved partial sums, reduced by halving, then the tail
    in order."""

    LANES = 8


@mutant(
    "simd-lanes-16",
    rule="§2.4: sums are accumulated left to right, one slot at a time",
    origin=SIMD_ORIGIN.format(lanes=16),
    keywords=("simd lanes", "4, 8 or 16 partial sums"),
)
class SimdLanes16(SimdLanes):
    """Sums the written slots in 16 interleaved partial sums, reduced by halving, then the
    tail in order."""

    LANES = 16


def gcc_avx_sum(values: list[np.ndarray], count: int, dtype: Any) -> np.ndarray:
    """What gcc 12 ``-O3 -ffast-math -march=native`` makes of the C template's
    ``for (c = 0; c < used; c++) sum += (double)row[c];`` on x86-64 with AVX2/AVX-512 (256-bit
    vectors of 4 doubles), read from its assembly: blocks of 8 floats, each block's two halves
    added first and then into 4 lane accumulators; the lanes reduced as (0 + 2) + (1 + 3); a
    last group of 4 added as (x0 + x2) and (x1 + x3) into those two lane pairs before they
    meet; then the last 1 to 3 slots one by one."""
    length = len(values)
    zero = np.zeros(count, dtype=dtype)
    blocks = length // 8
    acc = [zero.copy() for _ in range(4)]
    for block in range(blocks):
        base = 8 * block
        for lane in range(4):
            acc[lane] = acc[lane] + (values[base + lane] + values[base + lane + 4])
    low, high = acc[0] + acc[2], acc[1] + acc[3]
    index = 8 * blocks
    if length - index >= 4:
        low = (values[index] + values[index + 2]) + low
        high = (values[index + 1] + values[index + 3]) + high
        total = low + high
        index += 4
    elif blocks:
        total = low + high
    else:
        total = zero.copy()
    for value in values[index:]:
        total = total + value
    return total


@mutant(
    "fast-math-vectorised-sums",
    rule="§2.4: sums are accumulated left to right, one slot at a time",
    origin="the kit's C template built with `-O3 -ffast-math -march=native` (or `-Ofast`): "
    "gcc vectorises the loop that re-sums a wrapped ring (before the ring wraps, the template "
    "adds each weight as it arrives, which stays in order)",
    keywords=("simd lanes", "fast-math"),
)
class FastMathVectorisedSums(Model):
    """Once the ring has wrapped, sums its slots as gcc -O3 -ffast-math vectorises a plain
    loop on x86-64: 4 lanes of doubles over blocks of 8, a group of 4, then the tail."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        if self.writes < self.ring_size():
            return super().sum_ring(ring)
        values = columns(ring, self.ACCUMULATOR, range(ring.shape[1]))
        return gcc_avx_sum(values, len(ring), self.ACCUMULATOR).astype(np.float64)


# -- not the ring at all ---------------------------------------------------------------------


@mutant(
    "running-sum",
    rule="§2.4: sums are recomputed from the ring at every eviction, no running totals",
    origin="the obvious O(1) optimisation: keep a total, add the new weight, subtract the one "
    "it overwrites; the rounding drifts",
    keywords=("running sum", "running total", "incremental", "drifting running sum"),
    witness=ring_trap(1, [[2.0**60, 1.0], [0.0, 0.5]]),
)
class RunningSum(Model):
    """Keeps a total per position: ``total = (total + new) - overwritten``."""

    PER_ROW: ClassVar[dict[str, Any]] = {"running": lambda model: 0.0}

    def observe(self, weights: np.ndarray) -> None:
        count = len(weights)
        if not count:
            return
        dtype = self.ACCUMULATOR
        slot = self.slot
        overwritten = self.hist[:count, slot] if slot < self.width else np.zeros(count)
        total = np.array(self.per_row["running"], dtype=dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            total = (total + weights.astype(dtype)) - overwritten.astype(dtype)
        self.per_row["running"] = total.tolist()

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        return np.array(self.per_row["running"], dtype=np.float64).reshape(len(ring))


@mutant(
    "cumulative-sums",
    rule="§2.4: a sum covers the last obsWindow observed steps (the ring), not every step "
    "since admission",
    origin="H2O's accumulated attention and OpenVINO GenAI's SUM aggregation: each step's "
    "weights are added to a score that is never forgotten",
    keywords=("cumulative", "never forgotten", "accumulated since admission", "never wraps"),
    witness=Witness(
        params(2, 1, 1, 1),
        (step(0), step(1), step(2, [1.0, 0.0]), step(3, [0.0, 0.5, 0.0]), {"op": "evict"}),
    ),
)
class CumulativeSums(Model):
    """Adds every observed step's weight to a score kept since admission (in step order, from
    ``+0.0``); the ring's window is ignored."""

    PER_ROW: ClassVar[dict[str, Any]] = {"cumulative": lambda model: 0.0}

    def observe(self, weights: np.ndarray) -> None:
        if not len(weights):
            return
        dtype = self.ACCUMULATOR
        with np.errstate(over="ignore"):  # a float32 total may overflow, as in the port
            total = np.array(self.per_row["cumulative"], dtype=dtype) + weights.astype(dtype)
        self.per_row["cumulative"] = total.tolist()

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        return np.array(self.per_row["cumulative"], dtype=np.float64).reshape(len(ring))


@mutant(
    "prefix-sum-window",
    rule="§2.4: a sum adds the ring's slots, not a difference of running totals",
    origin="a prefix sum per position (`cum[t] = cum[t - 1] + w`) and the window taken as "
    "`cum_now - cum_then` (`cum[t] - cum[t - obsWindow]`), the O(1) window of signal "
    "processing and cumulative-attention caches: the subtraction rounds, and a huge early "
    "weight leaves its rounding behind",
    keywords=("prefix sum", "cum_now - cum_then"),
    # Answers otherwise than the reference and than running-sum, in float64 and in float32.
    witness=Witness(
        params(4, 1, 1, 1),
        (
            step(0),
            step(1),
            step(2, [2.0**60, 1.0]),
            step(3, [0.5, 0.5, 0.0]),
            step(4, [3.0, 0.0, 3.0, 1.0]),
            EVICT,
        ),
    ),
)
class PrefixSumWindow(Model):
    """Keeps each position's running total after every observed step since its admission (in
    step order, from ``+0.0``) and scores the window as the latest total minus the one
    obsWindow observed steps before (or the latest total itself, when fewer were observed)."""

    PER_ROW: ClassVar[dict[str, Any]] = {"prefix": lambda model: (0.0,)}

    def observe(self, weights: np.ndarray) -> None:
        if not len(weights):
            return
        dtype = self.ACCUMULATOR
        keep = self.ring_size() + 1
        latest = np.array([totals[-1] for totals in self.per_row["prefix"]], dtype=dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            latest = latest + weights.astype(dtype)
        self.per_row["prefix"] = [
            (*totals, total)[-keep:]
            for totals, total in zip(self.per_row["prefix"], latest.tolist(), strict=True)
        ]

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        dtype = self.ACCUMULATOR
        window = self.ring_size()
        prefix = self.per_row["prefix"]
        now = np.array([totals[-1] for totals in prefix], dtype=dtype)
        then = np.array(
            [totals[-1 - window] if len(totals) > window else 0.0 for totals in prefix],
            dtype=dtype,
        )
        with np.errstate(over="ignore", invalid="ignore"):
            return (now - then).astype(np.float64).reshape(len(ring))


@mutant(
    "crash-on-unwritten-ring",
    rule="§2.4: a ring never written sums to 0",
    origin="a sum over the written slots that fails when there are none (`max()` of an empty "
    "list, a division by the written count, a NULL history)",
    keywords=("crash on a ring that was never written",),
)
class CrashOnUnwrittenRing(Model):
    """Fails (an exception) scoring while no ring slot has been written."""

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        if not ring.shape[1]:
            raise ValueError("zero-size array to reduction operation maximum")
        return super().sum_ring(ring)


# -- scale -----------------------------------------------------------------------------------------


@mutant(
    "renormalised-rows",
    rule="§2.3: a step records its weights exactly as they are sent",
    origin="each step's attention row divided by its own sum before it is recorded "
    "(`scores / scores.sum(dim=-1, keepdim=True)`, as awslabs keys_values' instantaneous "
    "scores do), so that every row sums to 1 even after the cache dropped some keys",
    keywords=("renormalised", "renormalized", "rows divided by their sum"),
    witness=Witness(
        params(3, 2, 2, 1),
        (step(0), step(1), step(2, [0.5, 0.0]), step(3, [0.0, 0.75, 2.25]), EVICT),
    ),
)
class RenormalisedRows(Model):
    """Divides each recorded row by its sum (added left to right from ``+0.0`` in the
    accumulator's precision, the division in it too, the result stored as float32); a row
    summing to zero is recorded as it is."""

    def rescale_row(self, weights: np.ndarray) -> np.ndarray:
        if not len(weights):
            return weights
        dtype = self.ACCUMULATOR
        values = weights.astype(dtype)
        total = dtype(0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            for value in values:
                total = dtype(total + value)
            if not total > 0:
                return weights
            scaled = values / total
        return scaled.astype(np.float32).astype(np.float64)


@mutant(
    "mean-over-window",
    rule="§2.4: a score is the window's sum, not its mean",
    origin="`attn_weights.mean(dim=-2)` over the observation window, as kvpress's SnapKVPress "
    "does: the sum divided by obsWindow, one more rounding",
    keywords=("window's mean", "averages the window"),
)
class MeanOverWindow(Model):
    """Divides each window sum by obsWindow (in the accumulator's precision)."""

    def scale(self, sums: np.ndarray) -> np.ndarray:
        dtype = self.ACCUMULATOR
        divisor = dtype(self.params.obsWindow)
        return (sums.astype(dtype) / divisor).astype(np.float64)


@mutant(
    "norm-by-age",
    rule="§2.4: scores are window sums, not sums divided by the age of the position",
    origin="OpenVINO GenAI's NORM_SUM aggregation: each score divided by the number of steps "
    "its position has lived",
    keywords=("norm_sum", "norm-sum", "normalised by age", "steps it has lived"),
)
class NormByAge(Model):
    """Divides each score by the number of observed steps since its position was admitted."""

    PER_ROW: ClassVar[dict[str, Any]] = {"admitted_after": lambda model: model.writes}

    def scale(self, sums: np.ndarray) -> np.ndarray:
        lived = self.writes - np.array(self.per_row["admitted_after"], dtype=np.float64)
        lived = lived.reshape(len(sums))
        return np.divide(sums, lived, out=np.zeros_like(sums), where=lived > 0)

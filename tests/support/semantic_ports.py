"""Semantic mistakes on top of a precision-only port: what a GPU or BLAS port gets wrong beyond
its rounding, each written here in numpy, independently of the mutant catalogue.

A semantic port is one of the precision ports of :mod:`tests.support.precision_ports` (or the
reference's own arithmetic, for ``exact``) with one mistake that changes *what* is decided, not
how it is rounded. Under a numerics profile ``P`` the mistake is written over the port of
``P``'s own arithmetic (:data:`BASE_OF`), which passes under ``P`` alone; so when the semantic
port fails under ``P``, the mistake is what failed it. Every mistake here must fail under every
profile on the committed suite, but :data:`EQUIVALENT_UNDER` says where one cannot (and why).

The mistakes:

- ``prefix-sums``: each window sum as the difference of two running prefix sums of the
  position's whole history (``cumsum[t] - cumsum[t - obsWindow]``), in the port's accumulator:
  right in real numbers, but its error grows with the whole history, not the window.
- ``running-sums``: a running total per position, the new weight added and the overwritten one
  subtracted, in the port's accumulator.
- ``renormalised-rows``: each step's attention row divided by its sum before it is written (a
  port re-normalising after evictions removed part of the softmax mass).
- ``step-clock``: the ring cursor is the step count, so a null step moves it too.
- ``value-only-topk``: the victims as ``topk`` by value alone; ties go to the higher position.
- ``masked-cache``: evicted rows are masked, not removed, and pooling runs over the physical
  rows, holes included (a hole scores 0).
- ``paged-eviction``: candidates ranked by the best pooled score of their page (two kept
  entries), as block-granular caches evict.
- ``protects-one-more`` and ``protects-one-fewer``: the protected window off by one.
- ``flush-to-zero``: a fast-math build's denormals-are-zero: every subnormal float32 weight is
  read as 0 by the kernel (the request reader still validates the weight as written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from conformance.policy.reference import SnapKV, sliding_max
from tests.support.precision_ports import (
    Bf16Warp,
    F16Result,
    F16Ring,
    F32Tree,
    F64Tree,
    to_bfloat16,
    to_float16,
)

#: The smallest normal float32: a denormals-are-zero build reads anything below it as 0.
FLOAT32_TINY = 2.0**-126


def _identity(values: np.ndarray) -> np.ndarray:
    return values


def _as_float16(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return values.astype(np.float16).astype(np.float64)


class Arithmetic:
    """How a base port stores a weight (``store``), adds (``accumulator``) and keeps a finished
    sum (``finish``): what the mistakes that compute their own sums use."""

    def __init__(
        self,
        base: type[SnapKV],
        store: Callable[[np.ndarray], np.ndarray],
        accumulator: type,
        finish: Callable[[np.ndarray], np.ndarray] = _identity,
    ) -> None:
        self.base, self.store, self.accumulator, self.finish = base, store, accumulator, finish


#: For each profile, the port whose arithmetic it is (passing under it alone).
BASE_OF: dict[str, Arithmetic] = {
    "exact": Arithmetic(SnapKV, _identity, np.float64),
    "float64": Arithmetic(F64Tree, _identity, np.float64),
    "float32": Arithmetic(F32Tree, _identity, np.float32),
    "bfloat16": Arithmetic(Bf16Warp, to_bfloat16, np.float32),
    "float16": Arithmetic(F16Ring, to_float16, np.float32),
    "float16-result": Arithmetic(F16Result, to_float16, np.float32, _as_float16),
}


class _Mistake:
    """A mixin placed before a base port; ``arithmetic`` is set on the class made from both."""

    arithmetic: Arithmetic

    def stored(self, weights: Sequence[float]) -> np.ndarray:
        """The weights as the base port holds them, in its accumulator."""
        values = np.array(weights, np.float32).reshape(len(weights))
        return self.arithmetic.store(values).astype(self.arithmetic.accumulator)


class PrefixSums(_Mistake, SnapKV):
    def __init__(self, params: Any, seed: int = 0) -> None:
        super().__init__(params, seed)
        self.prefix: list[list[Any]] = []

    def write(self, weights: Sequence[float]) -> None:
        add = self.arithmetic.accumulator
        with np.errstate(over="ignore"):
            for row, weight in zip(self.prefix, self.stored(weights), strict=True):
                row.append(add(row[-1] + weight))
        super().write(weights)

    def admit(self, position: int) -> None:
        super().admit(position)
        self.prefix.append([self.arithmetic.accumulator(0)])

    def remove(self, victims: Any) -> None:
        gone = set(victims)
        self.prefix = [row for index, row in enumerate(self.prefix) if index not in gone]
        super().remove(victims)

    def window_sums(self) -> list[float]:
        size = self.params.obsWindow
        with np.errstate(invalid="ignore"):  # infinity minus infinity, past the range
            sums = [row[-1] - row[-1 - size] if len(row) > size else row[-1] for row in self.prefix]
        finished = self.arithmetic.finish(np.array(sums, self.arithmetic.accumulator))
        return [float(value) for value in finished]


class RunningSums(_Mistake, SnapKV):
    def __init__(self, params: Any, seed: int = 0) -> None:
        super().__init__(params, seed)
        self.totals: list[Any] = []

    def write(self, weights: Sequence[float]) -> None:
        slot, add = self.slot, self.arithmetic.accumulator
        old = [ring.values[slot] if slot < len(ring.values) else 0.0 for ring in self.rings]
        pairs = zip(self.stored(weights), self.stored(old), strict=True)
        with np.errstate(over="ignore", invalid="ignore"):
            for index, (new, gone) in enumerate(pairs):
                self.totals[index] = add(add(self.totals[index] + new) - gone)
        super().write(weights)

    def admit(self, position: int) -> None:
        super().admit(position)
        self.totals.append(self.arithmetic.accumulator(0))

    def remove(self, victims: Any) -> None:
        gone = set(victims)
        self.totals = [total for index, total in enumerate(self.totals) if index not in gone]
        super().remove(victims)

    def window_sums(self) -> list[float]:
        finished = self.arithmetic.finish(np.array(self.totals, self.arithmetic.accumulator))
        return [float(value) for value in finished]


class RenormalisedRows(_Mistake, SnapKV):
    def write(self, weights: Sequence[float]) -> None:
        row = np.array(weights, np.float32).reshape(len(weights))
        with np.errstate(over="ignore"):
            total = np.float32(row.sum(dtype=np.float32))
        if total > 0:
            row = (row / total).astype(np.float32)
        super().write([float(value) for value in row])


class StepClock(_Mistake, SnapKV):
    def step(self, pos: Any, attn: Any) -> None:
        super().step(pos, attn)  # a refusal raises before the clock moves
        if attn is None:
            self.slot = (self.slot + 1) % self.params.obsWindow


class ValueOnlyTopk(_Mistake, SnapKV):
    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        candidates = range(self.candidate_count())
        return sorted(candidates, key=lambda index: (pooled[index], -index))[:count]


class MaskedCache(_Mistake, SnapKV):
    def __init__(self, params: Any, seed: int = 0) -> None:
        super().__init__(params, seed)
        self.layout: list[int | None] = []  # the physical rows: a position, or None (masked)

    def admit(self, position: int) -> None:
        super().admit(position)
        self.layout.append(position)

    def remove(self, victims: Any) -> None:
        gone = {self.kept[index] for index in victims}
        self.layout = [None if row in gone else row for row in self.layout]
        super().remove(victims)

    def pool(self, sums: Sequence[float]) -> list[float]:
        score = dict(zip(self.kept, sums, strict=True))
        physical = [0.0 if row is None else score[row] for row in self.layout]
        pooled = sliding_max(physical, (self.params.poolKernel - 1) // 2)
        where = {row: index for index, row in enumerate(self.layout) if row is not None}
        return [pooled[where[position]] for position in self.kept]


class PagedEviction(_Mistake, SnapKV):
    PAGE = 2

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        candidates = range(self.candidate_count())
        best: dict[int, float] = {}
        for index in candidates:
            page = index // self.PAGE
            best[page] = max(best.get(page, pooled[index]), pooled[index])
        return sorted(candidates, key=lambda index: (best[index // self.PAGE], index))[:count]


class ProtectsOneMore(_Mistake, SnapKV):
    def candidate_count(self) -> int:
        return max(0, len(self.kept) - self.params.recentWindow - 1)


class ProtectsOneFewer(_Mistake, SnapKV):
    def candidate_count(self) -> int:
        return min(len(self.kept), max(0, len(self.kept) - self.params.recentWindow + 1))


class FlushToZero(_Mistake, SnapKV):
    def write(self, weights: Sequence[float]) -> None:
        super().write([0.0 if abs(weight) < FLOAT32_TINY else weight for weight in weights])


MISTAKES: dict[str, type[_Mistake]] = {
    "prefix-sums": PrefixSums,
    "running-sums": RunningSums,
    "renormalised-rows": RenormalisedRows,
    "step-clock": StepClock,
    "value-only-topk": ValueOnlyTopk,
    "masked-cache": MaskedCache,
    "paged-eviction": PagedEviction,
    "protects-one-more": ProtectsOneMore,
    "protects-one-fewer": ProtectsOneFewer,
    "flush-to-zero": FlushToZero,
}

#: The profiles under which a mistake cannot be told from rounding, and why.
EQUIVALENT_UNDER: dict[str, tuple[tuple[str, ...], str]] = {
    "flush-to-zero": (
        ("float16", "float16-result"),
        "every subnormal float32 is below half float16's smallest subnormal (2^-25), so a "
        "float16 history stores it as 0 anyway: the flush changes nothing there",
    ),
}


def semantic_port(mistake: str, profile: str) -> type[SnapKV]:
    """The mistake ``mistake`` written over the port of ``profile``'s arithmetic."""
    arithmetic = BASE_OF[profile]
    return type(
        f"{MISTAKES[mistake].__name__}Over{arithmetic.base.__name__}",
        (MISTAKES[mistake], arithmetic.base),
        {"arithmetic": arithmetic},
    )

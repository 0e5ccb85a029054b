"""Real-world variants: what shipping KV-cache eviction code and vectorised ports do instead.

Each mutant here is a policy that real code implements or that an idiom of vectorised code
produces, with its source named in its docstring. Where a variant is several catalogued
mistakes at once, it is built from their classes (the method resolution order chains their
steps) rather than copied, so the triage can name the parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants.params import BooleanParamAccepted
from conformance.mutants.pooling import AveragePooling, RecentExcludedFromPooling, window_max
from conformance.mutants.selection import VictimsInRankOrder
from conformance.mutants.steps import BooleanWeightAccepted
from conformance.mutants.summation import PerRow
from conformance.policy.reference import SnapKV

# -- accumulating scores (H2O, OpenVINO GenAI) -------------------------------------------------


@mutant(
    "cumulative-sums",
    rule="§2.4: a sum covers the last obsWindow observed steps (the ring), not every step "
    "since admission",
    origin="H2O's accumulated attention and OpenVINO GenAI's SUM aggregation: each step's "
    "weights are added to a score that is never forgotten",
    keywords=("cumulative", "never forgotten", "accumulated since admission"),
    witness=Witness(
        params(2, 1, 1, 1),
        (step(0), step(1), step(2, [1.0, 0.0]), step(3, [0.0, 0.5, 0.0]), EVICT),
    ),
)
class CumulativeSums(PerRow):
    """Adds every observed step's weight to a float64 score kept since admission (in step
    order, from ``+0.0``); the ring's window is ignored."""

    def fresh(self) -> Any:
        return 0.0

    def step_scores(self, weights: Sequence[float]) -> list[float]:
        """What one step adds to each kept entry's score: its weight."""
        return list(weights)

    def write(self, weights: Sequence[float]) -> None:
        for index, score in enumerate(self.step_scores(weights)):
            self.per_row[index] += score
        super().write(weights)

    def window_sums(self) -> list[float]:
        return list(self.per_row)


def forward_kernel_max(values: Sequence[float], kernel: int) -> list[float]:
    """``max(values[i .. i + kernel - 1])`` clamped to the list: a pooling window that starts
    at the entry instead of being centred on it."""
    return window_max(values, 0, kernel - 1)


@mutant(
    "openvino-sum",
    rule="§2.4: sum the last obsWindow steps of each ring, then max-pool the sums over the "
    "centred window [i - r, i + r]",
    origin="OpenVINO GenAI's decode-time cache eviction, SUM aggregation "
    "(src/cpp/src/continuous_batching/cache/cache_eviction.cpp): scores accumulate for as long "
    "as a position lives, and each step's row is max-pooled (`_max_pool` over idx .. "
    "idx + window - 1) before it is added",
    keywords=("openvino", "cumulative", "forward-only", "pool-then-sum"),
    witness=Witness(
        params(3, 1, 1, 3),
        (*steps(0, 3), step(3, [1.0, 0.0, 0.5]), EVICT),
    ),
)
class OpenVinoSum(CumulativeSums):
    """Cumulative scores since admission (never forgotten); each step's row is max-pooled
    over ``[i, i + poolKernel - 1]`` (forward only) before it is added; no pooling after
    summing."""

    def step_scores(self, weights: Sequence[float]) -> list[float]:
        return forward_kernel_max(weights, self.params.poolKernel)

    def pool(self, sums: Sequence[float]) -> list[float]:
        return list(sums)


@mutant(
    "openvino-norm-sum",
    rule="§2.4: scores are window sums, not cumulative sums divided by the age of the position",
    origin="OpenVINO GenAI's NORM_SUM aggregation (cache_eviction.cpp): the SUM score of each "
    "position divided by the number of steps it has lived",
    keywords=("norm_sum", "norm-sum", "normalised by age", "steps it has lived"),
    witness=Witness(
        params(2, 1, 4, 1),
        (step(0), step(1, [1.0]), step(2, [0.25, 0.75]), EVICT),
    ),
)
class OpenVinoNormSum(OpenVinoSum):
    """OpenVINO's SUM score divided by the number of observed steps since admission."""

    def fresh(self) -> Any:
        return [0.0, 0]  # the score, and the observed steps the position has lived

    def write(self, weights: Sequence[float]) -> None:
        for index, score in enumerate(self.step_scores(weights)):
            total, lived = self.per_row[index]
            self.per_row[index] = [total + score, lived + 1]
        SnapKV.write(self, weights)

    def window_sums(self) -> list[float]:
        return [total / lived if lived else 0.0 for total, lived in self.per_row]


# -- kvpress ---------------------------------------------------------------------------------


class MeanOverWindow(SnapKV):
    """Each window sum divided by ``obsWindow``: the mean of the window's weights."""

    def window_sums(self) -> list[float]:
        return [total / self.params.obsWindow for total in super().window_sums()]


@mutant(
    "kvpress-snapkv",
    rule="§2.4: max pooling over the window (recent entries included) of the window sums",
    origin="NVIDIA kvpress's SnapKVPress: the window's attention averaged, scores smoothed by "
    "`F.avg_pool1d` with zero padding, and the observation window left out of the pooling",
    keywords=("kvpress", "average", "avg_pool", "excluded from pooling"),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.25, 0.25, 0.25]), EVICT)),
)
class KvpressSnapKV(MeanOverWindow, RecentExcludedFromPooling, AveragePooling):
    """The mean over the window, average pooling with zero padding, and the recent entries
    left out of the pooling (composed from the catalogue's average-pooling and
    recent-excluded-from-pooling)."""


# -- vectorised idioms -------------------------------------------------------------------------

#: 20 candidates with tied scores that numpy's default argsort puts out of index order (up to
#: 16 elements it sorts by insertion, which is stable).
UNSTABLE = [0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.5, 0.0]
UNSTABLE += [0.0, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.5]


@mutant(
    "unstable-argsort",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="`np.argsort(pooled[:candidates])[:k]` with numpy's default kind (introsort, not "
    "stable): among equal scores the order is the sort's accident",
    keywords=("unstable", "argsort", "tie", "ties"),
    witness=Witness(params(20, 1, 1, 1), (*steps(0, 20), step(20, UNSTABLE), EVICT)),
)
class UnstableArgsort(SnapKV):
    """Ranks the candidates with numpy's default (unstable) argsort."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        scores = np.asarray(pooled[: self.candidate_count()], dtype=np.float64)
        return [int(index) for index in np.argsort(scores)[:count]]


@mutant(
    "argpartition-selection",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="`np.argpartition(pooled, k - 1)[:k]` (or `torch.topk(..., largest=False)`): the "
    "k smallest scores, but among equal ones whichever the partition left in front",
    keywords=("argpartition", "topk", "tie", "ties"),
    witness=Witness(params(4, 1, 1, 1), (*steps(0, 4), step(4, [0.5, 0.5, 0.0, 0.0]), EVICT)),
)
class ArgpartitionSelection(SnapKV):
    """Selects the victims with ``np.argpartition`` (no order among equal scores)."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        scores = np.asarray(pooled[: self.candidate_count()], dtype=np.float64)
        if count >= len(scores):
            return list(range(len(scores)))
        chosen = np.argpartition(scores, count - 1)[:count]
        return [int(index) for index in chosen[np.argsort(scores[chosen], kind="stable")]]


@mutant(
    "topk-unordered",
    rule="§2.4: equal pooled scores evict the lower position, and victims come back ascending",
    origin="`torch.topk(-pooled, k).indices` returned as they come: ties in no fixed order, and "
    "the victims in rank order rather than ascending",
    keywords=("topk", "rank order", "tie"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), step(2, [0.5, 0.25]), EVICT)),
)
class TopkUnordered(ArgpartitionSelection, VictimsInRankOrder):
    """argpartition-selection and victims-in-rank-order at once: what `topk` gives."""


# -- storage ---------------------------------------------------------------------------------


@mutant(
    "budget-plus-one-storage",
    rule="§2.4: a port must not assume len(kept) <= budget + 1; several steps may pass "
    "between evictions",
    origin="a numpy port preallocating `np.zeros((budget + 1, obs))` for the kept rows, as if "
    "every step were followed by an evict: the next admission raises IndexError",
    keywords=("budget + 1", "budget+1", "preallocat", "several steps between"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 3), EVICT)),
)
class BudgetPlusOneStorage(SnapKV):
    """Storage for ``budget + 1`` kept rows allocated at construction: admitting one more row
    raises IndexError, and a budget whose rows cannot be allocated (over 2^28 of them, each a
    row of weights) raises MemoryError (both crashes)."""

    def __init__(self, params: Mapping[str, Any], seed: int = 0) -> None:
        super().__init__(params, seed)
        rows = self.params.budget + 1
        if rows > 2**28:
            raise MemoryError(f"Unable to allocate an array with {rows} rows")

    def admit(self, position: int) -> None:
        rows = self.params.budget + 1
        if len(self.kept) >= rows:
            raise IndexError(f"index {rows} is out of bounds for axis 0 with size {rows}")
        super().admit(position)


# -- JSON numbers -------------------------------------------------------------------------------


class BooleanPositionAccepted(SnapKV):
    """Accepts ``true``/``false`` as the position 1/0."""

    def check_position(self, pos: Any) -> int:
        return super().check_position(int(pos) if type(pos) is bool else pos)


@mutant(
    "bool-as-integer",
    rule="§1: true and false are never numbers (refused in params, pos and attn)",
    origin="Python's `isinstance(x, int)` (True is an int) used for every integer and number "
    "check of a port",
    keywords=("boolean", "isinstance"),
    witness=Witness(params(1, 0, 1, 1), (step(False),)),
)
class BoolAsInteger(BooleanPositionAccepted, BooleanParamAccepted, BooleanWeightAccepted):
    """Booleans accepted as 0/1 wherever an integer or a number is read (composed from the
    catalogue's boolean-param-accepted and boolean-weight-accepted, and the position)."""


__all__ = [
    "ArgpartitionSelection",
    "BoolAsInteger",
    "BudgetPlusOneStorage",
    "CumulativeSums",
    "KvpressSnapKV",
    "OpenVinoNormSum",
    "OpenVinoSum",
    "TopkUnordered",
    "UnstableArgsort",
]

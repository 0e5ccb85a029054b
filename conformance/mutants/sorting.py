"""Selection by value alone, with the sorts and selections libraries ship.

SPEC.md §2.4 ranks the candidates by ``(pooled, position)``: among equal pooled scores the lower
position goes first. A port that hands the scores alone to its library's sort or selection
evicts, among equal scores, whichever positions the algorithm's comparisons and swaps leave in
front: a fact of the algorithm, not of chance. Each choice here runs the library's own
algorithm, written out step for step in :mod:`conformance.mutants._sorts` (libstdc++'s
``std::sort``, ``std::nth_element`` and ``std::partial_sort``, PyTorch's CPU ``topk``,
``java.util.PriorityQueue``), so that it answers as the port does, on every machine.

The candidates' scores are handed over in the model's accumulator (the scores' dtype), in kept
order, each with its kept index; the victims are returned in rank order where the library leaves
one, and :meth:`~conformance.mutants.model.Model.order_victims` sorts them as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants._sorts import (
    java_priority_queue_polls,
    numpy_argpartition,
    std_nth_element,
    std_partial_sort,
    std_sort,
    torch_topk,
)
from conformance.mutants.model import Model


def _candidate_scores(model: Model, pooled: np.ndarray, candidates: int) -> list[float]:
    """The candidates' pooled scores as the port holds them (the accumulator's dtype)."""
    return np.asarray(pooled[:candidates]).astype(model.ACCUMULATOR).astype(float).tolist()


def _by_value(x: tuple[float, int], y: tuple[float, int]) -> bool:
    """A comparator on the score alone (what the port hands its sort)."""
    return x[0] < y[0]


#: Sixteen positions with no history, every score 0.0, and a few evicted: among the tied the
#: library's algorithm picks, where the reference takes the lowest positions.
TIED = Witness(params(13, 0, 1, 1), (*steps(0, 16), step(16, [0.0] * 16), EVICT))


# -- C++ (libstdc++) -----------------------------------------------------------------------------


@mutant(
    "std-sort-by-score",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="a C++ port ranking (score, index) pairs with `std::sort` and a comparator on the "
    "score alone (`a.first < b.first`), then taking the first k: libstdc++'s introsort is not "
    "stable, so among equal scores its partitions decide",
    keywords=("std::sort", "introsort"),
    witness=Witness(params(2, 0, 1, 1), (*steps(0, 19), step(19, [0.0] * 19), EVICT)),
)
class StdSortByScore(Model):
    """Ranks the candidates with libstdc++'s ``std::sort`` comparing scores alone."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        items = [
            (score, index)
            for index, score in enumerate(_candidate_scores(self, pooled, candidates))
        ]
        std_sort(items, _by_value)
        return [index for _, index in items[:count]]


@mutant(
    "std-nth-element-by-score",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="a C++ port selecting with `std::nth_element(v.begin(), v.begin() + k, v.end(), "
    "cmp)` on (score, index) pairs compared by score alone and keeping the first k (as "
    "OpenVINO GenAI selects blocks, without its index tie-break): libstdc++'s introselect "
    "leaves equal scores where its partitions put them",
    keywords=("nth_element", "introselect"),
    witness=TIED,
)
class StdNthElementByScore(Model):
    """Selects the victims with libstdc++'s ``std::nth_element`` at ``begin() + k``, comparing
    scores alone, and takes the first k."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        items = [
            (score, index)
            for index, score in enumerate(_candidate_scores(self, pooled, candidates))
        ]
        std_nth_element(items, min(count, len(items)), _by_value)
        chosen = items[:count]
        return [index for _, index in sorted(chosen, key=lambda item: item)]


@mutant(
    "std-partial-sort-by-score",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="a C++ port selecting with `std::partial_sort(v.begin(), v.begin() + k, v.end(), "
    "cmp)` on (score, index) pairs compared by score alone: libstdc++'s heap selection keeps "
    "whichever equal scores its heap holds",
    keywords=("partial_sort", "heap selection"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 5), step(5, [0.0, 0.0, 1.0, 1.0, 0.0]), EVICT)),
)
class StdPartialSortByScore(Model):
    """Selects the victims with libstdc++'s ``std::partial_sort`` of the first k, comparing
    scores alone."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        items = [
            (score, index)
            for index, score in enumerate(_candidate_scores(self, pooled, candidates))
        ]
        std_partial_sort(items, min(count, len(items)), _by_value)
        return [index for _, index in items[:count]]


# -- PyTorch on the CPU ----------------------------------------------------------------------


@mutant(
    "torch-topk-smallest",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="`torch.topk(pooled[:candidates], k, largest=False).indices` on the CPU: PyTorch's "
    "TopKImpl.h compares scores alone, with `std::partial_sort` when k * 64 <= n and "
    "`std::nth_element` otherwise, so among equal scores libstdc++'s swaps decide",
    keywords=("torch.topk", "largest=false"),
    witness=TIED,
)
class TorchTopkSmallest(Model):
    """Takes the victims as ``torch.topk(scores, k, largest=False)`` on the CPU gives them."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = _candidate_scores(self, pooled, candidates)
        return torch_topk(scores, min(count, len(scores)), largest=False)


@mutant(
    "torch-topk-keepers",
    rule="§2.4: the victims are the k smallest (pooled, position); ties evict the lower",
    origin="the official SnapKV and kvpress code run on the CPU: `scores.topk(n_keep).indices` "
    "keeps the highest scores and evicts the rest, and PyTorch's TopKImpl.h selects them with "
    "libstdc++'s `std::nth_element` (or `std::partial_sort` when n_keep * 64 <= n) comparing "
    "scores alone",
    keywords=("topk", "keepers"),
    witness=TIED,
)
class TorchTopkKeepers(Model):
    """Keeps the candidates ``torch.topk(scores, n_keep)`` (largest) gives on the CPU and
    evicts the others."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = _candidate_scores(self, pooled, candidates)
        keep = len(scores) - count
        if keep <= 0:
            return list(range(len(scores)))
        kept = set(torch_topk(scores, keep, largest=True))
        losers = [index for index in range(len(scores)) if index not in kept]
        return sorted(losers, key=lambda index: (scores[index], index))


# -- kvpress ---------------------------------------------------------------------------------


@mutant(
    "window-padded-keepers",
    rule="§2.4: the recentWindow highest are never evicted, and the victims are the k smallest "
    "(pooled, position) candidates",
    origin="NVIDIA kvpress's SnapKVPress and ScorerPress: the observation window's scores padded "
    "with the candidates' maximum (`F.pad(scores, (0, window), value=scores.max())`) and the "
    "keepers chosen by `scores.topk(n_keep)` over every entry (here `np.argpartition(-scores, "
    "n_keep - 1)`, as a numpy transcription writes it): where the candidates' scores tie at "
    "their maximum, the protected window ties with them and may be evicted",
    keywords=("padded with the maximum", "window padded"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 4), EVICT)),
)
class WindowPaddedKeepers(Model):
    """Scores the protected entries with the candidates' highest pooled score, chooses the
    ``len(kept) - k`` keepers with ``np.argpartition(-scores, keep - 1)`` over every kept entry
    (numpy's portable introselect), and evicts the others."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        total = len(pooled)
        scores = _candidate_scores(self, pooled, candidates)
        top = max(scores) if scores else 0.0
        padded = [*scores, *([top] * (total - candidates))]
        keep = total - count
        if keep <= 0:
            return list(range(total))
        kept = set(numpy_argpartition([-score for score in padded], keep - 1)[:keep])
        losers = [index for index in range(total) if index not in kept]
        return sorted(losers, key=lambda index: (padded[index], index))


# -- Java ------------------------------------------------------------------------------------


@mutant(
    "java-priority-queue-by-score",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="a Java port adding the candidates' indices, in kept order, to a "
    "`java.util.PriorityQueue` ordered by `Double.compare(pooled[a], pooled[b])` and polling "
    "k of them: a binary heap, so among equal scores its sifts decide",
    keywords=("priorityqueue", "priority queue"),
    witness=TIED,
)
class JavaPriorityQueueByScore(Model):
    """Polls the victims from a ``java.util.PriorityQueue`` of the candidates' indices ordered
    by score alone."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = _candidate_scores(self, pooled, candidates)
        return java_priority_queue_polls(scores, min(count, len(scores)))


@mutant(
    "threshold-scan-by-score",
    rule="§2.4: the victims are the k smallest (pooled, position)",
    origin="the k-th smallest score found on a sorted copy of the scores alone "
    "(`Arrays.sort(copy)`, `std::sort`), then the victims mapped back to positions by value: "
    "the first k candidates, in kept order, scoring at most that threshold, so a tied lower "
    "position can take the place of a strictly lower score further on",
    keywords=("mapped back to positions by value", "threshold scan"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 3), step(3, [1.0, 1.0, 0.0]), EVICT)),
)
class ThresholdScanByScore(Model):
    """Finds the k-th smallest candidate score, then evicts the first k candidates in kept
    order whose score is at most it."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = _candidate_scores(self, pooled, candidates)
        if count <= 0:
            return []
        if count >= len(scores):
            return list(range(len(scores)))
        threshold = sorted(scores)[count - 1]
        chosen = [index for index, score in enumerate(scores) if score <= threshold][:count]
        return sorted(chosen, key=lambda index: (scores[index], index))


__all__: list[Any] = []

"""Selection mistakes: how many victims, from which candidates, in what order, broken how.

SPEC.md §2.4: ``k = max(0, len(kept) - budget)``; candidates are all kept positions but the
``recentWindow`` highest; the ``k`` candidates with the smallest ``(pooled, position)`` are
evicted (ties evict the lower position), all from one scoring, and returned in ascending
position order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, steps
from conformance.mutants._sorts import numpy_argpartition, numpy_argsort
from conformance.mutants.model import Model

# -- how many ----------------------------------------------------------------------------------


@mutant(
    "one-victim-per-evict",
    rule="§2.4: one call evicts max(0, len(kept) - budget) positions, possibly many",
    origin="assuming the harness evicts after every step, so the cache is at most one over "
    "budget (`len(kept) <= budget + 1`)",
    keywords=("one victim per call", "many victims", "multi-victim", "several victims"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 3), EVICT)),
)
class OneVictimPerEvict(Model):
    """Evicts at most one position per call."""

    def excess(self) -> int:
        return min(super().excess(), 1)


@mutant(
    "evict-count-off-by-one",
    rule="§2.4: k = max(0, len(kept) - budget), leaving exactly budget positions",
    origin="evicting while `len(kept) >= budget` (to make room for the next admission) "
    "rather than while `len(kept) > budget`",
    keywords=("leaves budget - 1",),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class EvictCountOffByOne(Model):
    """Evicts down to ``budget - 1`` kept positions whenever it evicts at all."""

    def excess(self) -> int:
        count = super().excess()
        return count + 1 if count else 0


@mutant(
    "unsigned-excess",
    rule="§2.4: k = max(0, len(kept) - budget)",
    origin="`len(kept) - budget` in unsigned arithmetic (`size_t`, `usize` with wrapping): "
    "below budget it wraps to a huge count, and every candidate goes",
    keywords=("unsigned len(kept) - budget",),
)
class UnsignedExcess(Model):
    """Computes k as an unsigned difference: below budget it wraps, and every candidate is
    evicted."""

    def excess(self) -> int:
        return (len(self.kept) - self.params.budget) % 2**64


@mutant(
    "evict-always-one",
    rule="§2.4: when len(kept) <= budget, evict returns [] and changes nothing",
    origin="`k = max(1, len(kept) - budget)`, or a do-while loop that evicts before it tests",
    keywords=("always removes one",),
)
class EvictAlwaysOne(Model):
    """Evicts at least one candidate on every call."""

    def excess(self) -> int:
        if not self.kept:
            return 0
        return max(1, super().excess())


@mutant(
    "count-not-decremented",
    rule="§2.4: k = max(0, len(kept) - budget), counted on the kept list as it is now",
    origin="a kept counter incremented on admission and never decremented on eviction, so a "
    "second evict sees the cache still over budget and evicts again",
    keywords=("evicts again",),
)
class CountNotDecremented(Model):
    """Counts the kept entries as every position ever admitted."""

    def excess(self) -> int:
        return max(0, self.admissions - self.params.budget)


# -- from one scoring ----------------------------------------------------------------------


@mutant(
    "greedy-rescoring",
    rule="§2.4: all k victims are chosen from one scoring of the kept list",
    origin="implementing a bulk eviction as k single evictions, re-pooling after each removal "
    "(neighbourhoods close up, so later victims change)",
    keywords=("one scoring", "rescor", "re-pool", "one ranking"),
    witness=Witness(
        params(4, 0, 1, 5),
        (*steps(0, 5), {"op": "step", "pos": 5, "attn": [0.5, 0.25, 0.0, 0.25, 0.0]}, EVICT),
    ),
)
class GreedyRescoring(Model):
    """Evicts one victim at a time, recomputing sums and pooling after each removal."""

    def evict(self) -> list[int]:
        victims: list[int] = []
        for _ in range(self.excess()):
            sums, pooled = self.score()
            candidates = max(0, min(self.candidate_count(), len(self.kept)))
            chosen = self.select(sums, pooled, candidates, 1)
            if not chosen:
                break
            victims += self.order_victims(chosen)
            self.remove(chosen)
        return sorted(victims)


# -- which candidates ----------------------------------------------------------------------------


@mutant(
    "recent-made-candidates",
    rule="§2.4: the recentWindow highest kept positions are never candidates",
    origin="dropping the recent-window guard, or applying it only to the positions admitted "
    "since the last eviction",
    keywords=("made candidates", "recent window ignored", "nothing protected"),
    witness=Witness(
        params(2, 1, 1, 1), (*steps(0, 2), {"op": "step", "pos": 2, "attn": [1.0, 1.0]}, EVICT)
    ),
)
class RecentMadeCandidates(Model):
    """Every kept position is a candidate: the recent window protects nothing."""

    def candidate_count(self) -> int:
        return len(self.kept)


@mutant(
    "recent-window-one-short",
    rule="§2.4: exactly the recentWindow highest kept positions are protected",
    origin="an off-by-one in the guard (`i < n - recent + 1`, or `recent - 1` from a 1-based "
    "source)",
    keywords=("recent window", "recentWindow", "off-by-one"),
    witness=Witness(
        params(2, 1, 1, 1), (*steps(0, 2), {"op": "step", "pos": 2, "attn": [1.0, 1.0]}, EVICT)
    ),
)
class RecentWindowOneShort(Model):
    """Protects only the ``recentWindow - 1`` highest positions."""

    def candidate_count(self) -> int:
        return min(super().candidate_count() + 1, len(self.kept))


@mutant(
    "recent-window-one-long",
    rule="§2.4: exactly the recentWindow highest kept positions are protected",
    origin="an off-by-one in the guard (`i < n - recent - 1`, or protecting the position "
    "being admitted on top of the window)",
    keywords=("recent window", "recentWindow", "off-by-one"),
    witness=Witness(
        params(2, 1, 1, 1), (*steps(0, 2), {"op": "step", "pos": 2, "attn": [1.0, 0.0]}, EVICT)
    ),
)
class RecentWindowOneLong(Model):
    """Protects the ``recentWindow + 1`` highest positions."""

    def candidate_count(self) -> int:
        return max(super().candidate_count() - 1, 0)


@mutant(
    "recent-by-position-numbers",
    rule="§2.4: the recentWindow highest *kept* positions are protected, whatever their numbers",
    origin="recency measured in position numbers, `pos > last - recentWindow`: after gaps "
    "and evictions fewer entries fall within that range",
    keywords=("recency measured in position numbers", "pos > last - recentwindow"),
)
class RecentByPositionNumbers(Model):
    """Protects the kept positions above ``last admitted - recentWindow``."""

    def candidate_count(self) -> int:
        last = self.last_admitted
        if last is None:
            return len(self.kept)
        return sum(1 for position in self.kept if position <= last - self.params.recentWindow)


@mutant(
    "candidates-slice-empty-at-zero",
    rule="§2.4: with recentWindow 0 every kept position is a candidate",
    origin="candidates taken as `kept[:-recentWindow]`, which is empty when recentWindow is 0 "
    "(`-0` is 0)",
    keywords=("kept[:-recentwindow]", "empty candidate list"),
)
class CandidatesSliceEmptyAtZero(Model):
    """Takes the candidates as ``kept[:-recentWindow]``: none at all when recentWindow is 0."""

    def candidate_count(self) -> int:
        recent = self.params.recentWindow
        return len(self.kept[:-recent]) if recent else 0


@mutant(
    "newest-always-protected",
    rule="§2.4: with recentWindow 0 the newest position is a candidate too",
    origin="protecting at least the position just admitted (`max(recentWindow, 1)`), as if "
    "the newest token always survives its own step",
    keywords=("newest entry protected by default",),
)
class NewestAlwaysProtected(Model):
    """Protects ``max(recentWindow, 1)`` highest positions."""

    def candidate_count(self) -> int:
        return len(self.kept) - max(self.params.recentWindow, 1)


@mutant(
    "recent-by-calls",
    rule="§2.4: the recentWindow highest kept positions are protected (a refused call "
    "changes nothing)",
    origin="recency counted in step calls (`admitted_at > calls - recentWindow`), the "
    "refused calls ticking the clock too: after a refusal fewer positions are protected",
    keywords=("protected window counted in step calls",),
)
class RecentByCalls(Model):
    """Protects the positions admitted within the last recentWindow step calls, refused calls
    included."""

    PER_ROW: ClassVar[dict[str, Any]] = {"admitted_at": lambda model: model.calls}

    def candidate_count(self) -> int:
        horizon = self.calls - self.params.recentWindow
        return sum(1 for at in self.per_row["admitted_at"] if at <= horizon)


# -- ranking -------------------------------------------------------------------------------------


@mutant(
    "ties-to-higher-position",
    rule="§2.4: equal pooled scores evict the lower position",
    origin="a max-heap or a descending sort on position as the secondary key; or `<=` "
    "where `<` was meant when scanning for the minimum",
    keywords=("tie", "ties", "reversed comparison"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class TiesToHigherPosition(Model):
    """Equal pooled scores evict the higher position."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        order = np.lexsort((-np.arange(candidates), pooled[:candidates]))
        return [int(index) for index in order[:count]]


@mutant(
    "ties-by-raw-sum",
    rule="§2.4: candidates rank by (pooled, position); the raw sum plays no part",
    origin="sorting by (pooled, sum, position), the raw sum as a tiebreaker 'for stability'",
    keywords=("broken by the raw", "ties among pooled scores broken by the raw sum"),
)
class TiesByRawSum(Model):
    """Breaks ties among equal pooled scores by the raw window sum, then the position."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        order = np.lexsort((np.arange(candidates), sums[:candidates], pooled[:candidates]))
        return [int(index) for index in order[:count]]


@mutant(
    "rank-by-sums",
    rule="§2.4: candidates are ranked by pooled score",
    origin="computing the pooled scores (they show in debug output) but ranking by the raw sums",
    keywords=("pooling skipped", "unpooled", "raw sum", "pooling ignored", "or ignored"),
    witness=Witness(
        params(3, 1, 1, 3),
        (*steps(0, 3), {"op": "step", "pos": 3, "attn": [0.5, 0.25, 1.0]}, EVICT),
    ),
)
class RankBySums(Model):
    """Ranks candidates by their window sums; pooling is computed and ignored."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        return super().select(sums, sums, candidates, count)


@mutant(
    "negative-zero-ranked-lower",
    rule="§2.4: scores compare as numbers, and -0.0 equals +0.0",
    origin="sums started from -0.0 (Rust's `Iterator::sum` for floats does) and ranked with a "
    "total order (`f64::total_cmp`, bit-pattern sorts) that puts -0.0 below +0.0",
    keywords=("total order that puts -0.0 below +0.0", "sums started from -0.0"),
)
class NegativeZeroRankedLower(Model):
    """Sums start from -0.0, so a ring written only with -0.0 in every slot sums to -0.0,
    and candidates rank by a total order where -0.0 < +0.0."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        rows = self.hist[: len(self.kept), : self.width]
        full = self.width >= self.ring_size()
        negative = [
            bool(full and pooled[i] == 0 and rows.shape[1] and np.all(np.signbit(rows[i])))
            for i in range(len(self.kept))
        ]
        signed = self.pool(
            np.array([-0.0 if flag else s for flag, s in zip(negative, sums, strict=True)])
        )
        signs = np.signbit(signed[:candidates]).astype(np.int64)
        order = np.lexsort((np.arange(candidates), 1 - signs, pooled[:candidates]))
        return [int(index) for index in order[:count]]


@mutant(
    "heap-select-by-pooled",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="a bounded max-heap of the k lowest candidates (the C template's selection) whose "
    "comparison forgets the position: among equal scores the heap's order decides",
    keywords=("heap keyed on the score alone",),
)
class HeapSelectByPooled(Model):
    """Selects the victims with a bounded max-heap keyed on the pooled score alone (the C
    template's `select_victims` without the position in its comparison)."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = pooled[:candidates].tolist()
        heap: list[int] = []

        def before(a: int, b: int) -> bool:  # a ranks before (is evicted before) b
            return scores[a] < scores[b]

        for index in range(candidates):
            if len(heap) < count:
                heap.append(index)
                at = len(heap) - 1
                while at > 0 and before(heap[(at - 1) // 2], heap[at]):
                    parent = (at - 1) // 2
                    heap[at], heap[parent] = heap[parent], heap[at]
                    at = parent
            elif count and before(index, heap[0]):
                heap[0] = index
                at = 0
                while True:
                    child, worst = 2 * at + 1, at
                    if child < len(heap) and before(heap[worst], heap[child]):
                        worst = child
                    if child + 1 < len(heap) and before(heap[worst], heap[child + 1]):
                        worst = child + 1
                    if worst == at:
                        break
                    heap[at], heap[worst] = heap[worst], heap[at]
                    at = worst
        return heap


@mutant(
    "unstable-argsort",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="`np.argsort(pooled[:candidates])[:k]` with numpy's default kind (introsort, not "
    "stable): among equal scores the order is the sort's accident (modelled as numpy's portable "
    "introsort orders them; a SIMD build may order them otherwise)",
    keywords=("unstable", "argsort", "quicksort", "tie", "ties"),
)
class UnstableArgsort(Model):
    """Ranks the candidates with numpy's default (unstable) argsort, as its portable introsort
    does (:func:`conformance.mutants._sorts.numpy_argsort`)."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = np.asarray(pooled[:candidates]).astype(self.ACCUMULATOR)  # the scores' dtype
        return numpy_argsort(scores.tolist())[:count]


@mutant(
    "argpartition-selection",
    rule="§2.4: equal pooled scores evict the lower position first",
    origin="`np.argpartition(pooled, k - 1)[:k]` (a partial selection): the k smallest "
    "scores, but among equal ones whichever the partition left in front (modelled as numpy's "
    "portable introselect leaves them; a SIMD build may leave others)",
    keywords=("argpartition", "partial selection", "tie", "ties"),
)
class ArgpartitionSelection(Model):
    """Selects the victims with ``np.argpartition`` (no order among equal scores), as its
    portable introselect does (:func:`conformance.mutants._sorts.numpy_argpartition`)."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = np.asarray(pooled[:candidates]).astype(self.ACCUMULATOR)  # the scores' dtype
        if count >= len(scores):
            return list(range(len(scores)))
        chosen = np.array(numpy_argpartition(scores.tolist(), count - 1)[:count])
        return [int(index) for index in chosen[np.argsort(scores[chosen], kind="stable")]]


@mutant(
    "topk-keepers",
    rule="§2.4: the victims are the k smallest (pooled, position); ties evict the lower",
    origin="the official SnapKV and kvpress code: `scores.topk(n_keep).indices` keeps the "
    "highest scores and evicts the rest, so among equal scores the partial selection decides "
    "(here `np.argpartition(-scores, n_keep - 1)`, as a numpy transcription writes it, modelled "
    "as numpy's portable introselect runs it)",
    keywords=("topk",),
)
class TopkKeepers(Model):
    """Chooses the candidates to keep with ``np.argpartition(-pooled, keep - 1)[:keep]`` and
    evicts the others (numpy's portable introselect:
    :func:`conformance.mutants._sorts.numpy_argpartition`)."""

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        scores = np.asarray(pooled[:candidates]).astype(self.ACCUMULATOR)  # the scores' dtype
        keep = len(scores) - count
        if keep <= 0:
            return list(range(len(scores)))
        kept = set(numpy_argpartition((-scores).tolist(), keep - 1)[:keep])
        losers = [index for index in range(len(scores)) if index not in kept]
        return sorted(losers, key=lambda index: (scores[index], index))


# -- in what order -----------------------------------------------------------------------------


@mutant(
    "victims-in-rank-order",
    rule="§2.4: victims are returned in ascending position order",
    origin="returning the victims as they come off the sort or the heap (lowest score first)",
    keywords=("ascending", "rank order"),
    witness=Witness(
        params(1, 0, 1, 1), (*steps(0, 2), {"op": "step", "pos": 2, "attn": [0.5, 0.25]}, EVICT)
    ),
)
class VictimsInRankOrder(Model):
    """Returns the victims in rank order (lowest pooled score first), not ascending."""

    def order_victims(self, victims: Sequence[int]) -> list[int]:
        return [self.kept[index] for index in victims]


@mutant(
    "victims-in-removal-order",
    rule="§2.4: victims are returned in ascending position order",
    origin="returning the victims in the order they are deleted in: from the highest index "
    "down, so that deleting one does not shift the indices of those still to go",
    keywords=("order they are deleted in",),
)
class VictimsInRemovalOrder(Model):
    """Returns the victims from the highest position down."""

    def order_victims(self, victims: Sequence[int]) -> list[int]:
        return sorted((self.kept[index] for index in victims), reverse=True)

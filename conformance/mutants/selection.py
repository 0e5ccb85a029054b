"""Selection mistakes: how many victims, from which candidates, in what order, broken how.

SPEC.md §2.4: ``k = max(0, len(kept) - budget)``; candidates are all kept positions but the
``recentWindow`` highest; the ``k`` candidates with the smallest ``(pooled, position)`` are
evicted (ties evict the lower position) and returned in ascending position order.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.policy.reference import SnapKV


@mutant(
    "ties-to-higher-position",
    rule="§2.4: equal pooled scores evict the lower position",
    origin="a max-heap or a descending sort on position as the secondary key; or `<=` "
    "where `<` was meant when scanning for the minimum",
    keywords=("tie", "ties"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class TiesToHigherPosition(SnapKV):
    """Equal pooled scores evict the higher position."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        candidates = range(self.candidate_count())
        return heapq.nsmallest(count, candidates, key=lambda index: (pooled[index], -index))


@mutant(
    "victims-in-rank-order",
    rule="§2.4: victims are returned in ascending position order",
    origin="returning the victims as they come off the sort or the heap (lowest score first)",
    keywords=("ascending", "rank order"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), step(2, [0.5, 0.25]), EVICT)),
)
class VictimsInRankOrder(SnapKV):
    """Returns the victims in rank order (lowest pooled score first), not ascending."""

    def order_victims(self, victims: Sequence[int]) -> list[int]:
        return [self.kept[index] for index in victims]  # select gives them in rank order


@mutant(
    "one-victim-per-evict",
    rule="§2.4: one call evicts max(0, len(kept) - budget) positions, possibly many",
    origin="assuming the harness evicts after every step, so the cache is at most one over "
    "budget (`len(kept) <= budget + 1`)",
    keywords=("one victim per call", "many victims", "multi-victim", "several victims"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 3), EVICT)),
)
class OneVictimPerEvict(SnapKV):
    """Evicts at most one position per call."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        return super().select(pooled, min(count, 1))


@mutant(
    "evict-count-off-by-one",
    rule="§2.4: k = max(0, len(kept) - budget), leaving exactly budget positions",
    origin="evicting while `len(kept) >= budget` (to make room for the next admission) "
    "rather than while `len(kept) > budget`",
    keywords=("len(kept) - budget", "right count", "exactly budget", "number of victims"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class EvictCountOffByOne(SnapKV):
    """Evicts down to ``budget - 1`` kept positions whenever it evicts at all."""

    def excess(self) -> int:
        count = super().excess()
        return count + 1 if count else 0


@mutant(
    "greedy-rescoring",
    rule="§2.4: all k victims are chosen from one scoring of the kept list",
    origin="implementing a bulk eviction as k single evictions, re-pooling after each removal "
    "(neighbourhoods close up, so later victims change)",
    keywords=("one scoring", "rescor", "re-pool", "one ranking"),
    witness=Witness(
        params(4, 0, 1, 5), (*steps(0, 5), step(5, [0.5, 0.25, 0.0, 0.25, 0.0]), EVICT)
    ),
)
class GreedyRescoring(SnapKV):
    """Evicts one victim at a time, recomputing sums and pooling after each removal."""

    def evict(self) -> list[int]:
        victims: list[int] = []
        while self.excess() > 0:
            chosen = self.select(self.pool(self.window_sums()), 1)
            victims += self.order_victims(chosen)
            self.remove(chosen)
        return sorted(victims)


@mutant(
    "rank-by-sums",
    rule="§2.4: candidates are ranked by pooled score",
    origin="computing the pooled scores (they show in debug output) but ranking by the raw sums",
    keywords=("pooling skipped", "unpooled", "raw sum", "pooling ignored"),
    witness=Witness(params(3, 1, 1, 3), (*steps(0, 3), step(3, [0.5, 0.25, 1.0]), EVICT)),
)
class RankBySums(SnapKV):
    """Ranks candidates by their window sums; pooling is computed and ignored."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        return super().select(self.window_sums(), count)


@mutant(
    "recent-made-candidates",
    rule="§2.4: the recentWindow highest kept positions are never candidates",
    origin="dropping the recent-window guard, or applying it only to the positions admitted "
    "since the last eviction",
    keywords=("made candidates", "recent window ignored", "nothing protected"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 2), step(2, [1.0, 1.0]), EVICT)),
)
class RecentMadeCandidates(SnapKV):
    """Every kept position is a candidate: the recent window protects nothing."""

    def candidate_count(self) -> int:
        return len(self.kept)


@mutant(
    "recent-window-one-short",
    rule="§2.4: exactly the recentWindow highest kept positions are protected",
    origin="an off-by-one in the guard (`i < n - recent + 1`, or `recent - 1` from a 1-based "
    "source)",
    keywords=("recent window", "recentWindow", "off-by-one"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 2), step(2, [1.0, 1.0]), EVICT)),
)
class RecentWindowOneShort(SnapKV):
    """Protects only the ``recentWindow - 1`` highest positions."""

    def candidate_count(self) -> int:
        return min(super().candidate_count() + 1, len(self.kept))


@mutant(
    "recent-window-one-long",
    rule="§2.4: exactly the recentWindow highest kept positions are protected",
    origin="an off-by-one in the guard (`i < n - recent - 1`, or protecting the position "
    "being admitted on top of the window)",
    keywords=("recent window", "recentWindow", "off-by-one"),
    witness=Witness(params(2, 1, 1, 1), (*steps(0, 2), step(2, [1.0, 0.0]), EVICT)),
)
class RecentWindowOneLong(SnapKV):
    """Protects the ``recentWindow + 1`` highest positions."""

    def candidate_count(self) -> int:
        return max(super().candidate_count() - 1, 0)

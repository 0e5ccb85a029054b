"""The committed suite: valid and reproduced by the reference, big enough, small enough, every
coverage item present, and every trap shown to trap.

A trap is shown by replaying its vector on a deliberately wrong policy (a catalogued mutant
from :mod:`conformance.mutants`, or a small subclass of the reference written here for a
mistake the catalogue does not hold) and checking that the expectations fail. The reduction
vectors are checked against independent TOVA and H2O implementations in plain Python.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from conformance import cli
from conformance.adapter.server import Session
from conformance.mutants import Mutant, lookup
from conformance.policy.reference import Params, PolicyError, Ring, SnapKV
from conformance.spec.resources import suite_dir
from conformance.suite.tags import load_vocabulary
from conformance.suite.vectors import Vector, load_suite


@pytest.fixture(scope="module")
def suite() -> dict[str, Vector]:
    return {vector.id: vector for vector in load_suite([suite_dir()])}


def test_validate_accepts_the_committed_suite(capsys):
    """Schema, rules and a replay of every vector on the reference (SPEC.md §4.3)."""
    assert cli.main(["validate"]) == 0
    assert capsys.readouterr().out.endswith("checked: all valid\n")


def test_suite_size_bounds(suite):
    assert len(suite) >= 60
    size = sum(path.stat().st_size for path in suite_dir().rglob("*.json"))
    assert size <= 10 * 1024 * 1024


def test_every_vector_names_its_mistake_and_every_tag_is_used(suite):
    assert all("Catches: " in vector.description for vector in suite.values())
    used = {tag for vector in suite.values() for tag in vector.tags}
    # `fuzz` is reserved for findings kept from fuzzing; there may be none yet.
    assert set(load_vocabulary()) - used <= {"fuzz"}


#: What the suite must cover and the vectors that cover it.
COVERAGE: dict[str, list[str]] = {
    "params: each rule": [
        "params/budget-zero",
        "params/budget-negative",
        "params/budget-above-int31",
        "params/recent-window-equals-budget",
        "params/recent-window-above-budget",
        "params/recent-window-negative",
        "params/obs-window-zero",
        "params/obs-window-negative",
        "params/obs-window-above-int31",
        "params/pool-kernel-even",
        "params/pool-kernel-zero",
        "params/pool-kernel-negative-odd",
        "params/pool-kernel-above-int31-odd",
        "params/budget-fraction",
        "params/budget-string",
        "params/budget-boolean",
        "params/budget-null",
        "params/missing-pool-kernel",
        "params/extra-field",
        "params/snake-case-names",
        "params/not-an-object",
        "params/seed-string",
        "params/seed-fraction",
    ],
    "maximum params accepted": [
        "limits/maximum-params-accepted",
        "limits/maximum-window-and-kernel",
    ],
    "attention wrong length, both ways": [
        "attention/too-short",
        "attention/too-long-counts-the-new-position",
        "attention/non-empty-before-any-position",
    ],
    "attention negative": ["attention/negative", "attention/negative-subnormal"],
    "attention beyond float32": [
        "attention/beyond-float32",
        "attention/float32-rounding-midpoint",
        "attention/huge-integer-literal",
    ],
    "attention non-number": [
        "attention/string-weight",
        "attention/boolean-weight",
        "attention/null-weight",
        "attention/nested-list",
        "attention/not-a-list",
        "attention/object",
    ],
    "position equal": ["position/equal-to-last", "position/equal-to-evicted"],
    "position decreasing": ["position/decreasing"],
    "position negative": ["position/negative"],
    "position 2^31": ["position/above-int31", "position/near-int31-max"],
    "position judged before attention": ["position/judged-before-attention"],
    "atomicity": [
        "atomicity/refused-position-writes-nothing",
        "atomicity/refused-position-not-admitted",
        "atomicity/refused-attention-admits-nothing",
        "atomicity/refused-attention-partial-write",
        "atomicity/refused-attention-cursor-unmoved",
        "lifecycle/refused-new-keeps-policy",
    ],
    "new replaces the policy": ["lifecycle/new-replaces-policy"],
    "null-inert steps": [
        "null/does-not-advance-ring",
        "null/writes-nothing",
        "null/only-null-steps",
    ],
    "ring wrap-around": ["ring/wrap-around", "summation/chronological-order-trap"],
    "empty list moves the cursor": ["ring/empty-attention-advances"],
    "stale history on slot reuse": ["ring/stale-history-on-slot-reuse"],
    "obsWindow 1": ["ring/obs-window-one", "reduction/tova-kernel-one-window-one"],
    "obsWindow longer than the run (H2O)": ["reduction/h2o-window-longer-than-run"],
    "poolKernel 1 (TOVA)": [
        "reduction/tova-kernel-one-window-one",
        "workload/heavy-hitter-epochs-tova",
        "limits/minimum-params",
    ],
    "kernels 3, 5, 7": [
        "pooling/kernel-3-radius-1",
        "pooling/kernel-5-radius-2",
        "pooling/kernel-7-radius-3",
    ],
    "max, not average": ["pooling/max-not-average"],
    "clamping at both ends": [
        "pooling/clamp-left-defended",
        "pooling/clamp-left-no-wrap",
        "pooling/clamp-right-no-wrap",
        "pooling/clamp-right-defended",
    ],
    "kernel wider than the kept list": [
        "pooling/kernel-wider-than-list",
        "limits/maximum-window-and-kernel",
    ],
    "pooling across eviction holes": ["pooling/across-eviction-holes", "pooling/gapped-positions"],
    "protected recent entries defend neighbours": ["recent/defends-neighbour"],
    "recent window size": ["recent/window-off-by-one"],
    "recentWindow 0": [
        "recent/window-zero",
        "pooling/clamp-right-no-wrap",
        "limits/minimum-params",
    ],
    "ties among many candidates": [
        "ties/lower-position-first",
        "ties/many-candidates",
        "ties/pooled-not-raw",
    ],
    "victims ascending": ["order/victims-ascending"],
    "one evict, many victims": [
        "evict/many-victims-one-call",
        "null/only-null-steps",
        "workload/phrase-runs-evict-every-4",
    ],
    "nothing to evict": ["evict/nothing-to-evict"],
    "gaps": ["pooling/gapped-positions", "recent/window-off-by-one", "position/decreasing"],
    "positions near 2^31 - 1 and above 16 bits": [
        "position/near-int31-max",
        "position/above-16-bits",
    ],
    "-0.0": ["weights/negative-zero"],
    "subnormal weights": ["weights/subnormal", "attention/negative-subnormal"],
    "very large weights": ["weights/sums-beyond-float32", "attention/float32-rounding-midpoint"],
    "integer weight literals": ["weights/integer-literals"],
    "summation-order traps": [
        "summation/float32-accumulation-trap",
        "summation/pairwise-trap",
        "summation/reversed-order-trap",
        "summation/chronological-order-trap",
        "summation/kahan-trap",
        "summation/running-sum-trap",
    ],
    "heavy-hitter epochs": [
        "workload/heavy-hitter-epochs-budget-8",
        "workload/heavy-hitter-epochs-budget-16-kernel-7",
        "workload/heavy-hitter-epochs-tova",
    ],
    "phrase-like runs": ["workload/phrase-runs-kernel-5", "workload/phrase-runs-evict-every-4"],
    "noisy attention": [
        "workload/noisy-attention-window-8",
        "workload/noisy-attention-gaps-and-nulls",
    ],
    "seeded random": [f"random/seed-{seed:02d}" for seed in range(1, 13)],
}


def test_every_coverage_item_is_in_the_suite(suite):
    missing = {item: [i for i in ids if i not in suite] for item, ids in COVERAGE.items()}
    assert {item: ids for item, ids in missing.items() if ids} == {}


# -- replaying on wrong policies --------------------------------------------------------------

Factory = Callable[[Mapping[str, Any], int], SnapKV]


def outcomes(vector: Vector, factory: Factory) -> list[Any]:
    """What each call decides on ``factory``'s policy: an error kind, victims, or ok."""
    session = Session(factory)
    decided = []
    for index, call in enumerate(vector.calls):
        response = session.handle({**call.request, "id": index})
        if not response["ok"]:
            decided.append(("error", response["error"]["kind"]))
        else:
            decided.append(("victims", response["victims"]) if "victims" in response else "ok")
    return decided


def expected(vector: Vector) -> list[Any]:
    return [
        ("error", call.expected_error)
        if call.expected_error
        else ("victims", call.expected_victims)
        if call.op == "evict"
        else "ok"
        for call in vector.calls
    ]


#: Each alternative summation, by the word a trap's description names it with, as its mutant.
SUMMATIONS: dict[str, Mutant] = {
    "float32": lookup("float32-accumulation"),
    "pairwise": lookup("pairwise-summation"),
    "reversed": lookup("reversed-slot-order"),
    "chronological": lookup("chronological-order"),
    "kahan": lookup("kahan-summation"),
    "running": lookup("running-sum"),
}

#: Each summation trap and the alternatives its description says it catches.
SUMMATION_TRAPS: dict[str, list[str]] = {
    "summation/float32-accumulation-trap": ["float32"],
    "summation/pairwise-trap": ["pairwise", "reversed", "kahan"],
    "summation/reversed-order-trap": ["reversed", "kahan"],
    "summation/chronological-order-trap": ["chronological", "running", "reversed"],
    "summation/kahan-trap": ["kahan"],
    "summation/running-sum-trap": ["running"],
    "weights/sums-beyond-float32": ["float32"],
    "ring/empty-attention-advances": ["chronological"],
}


@pytest.mark.parametrize(
    ("vector_id", "alternative"),
    [(vid, alt) for vid, alts in SUMMATION_TRAPS.items() for alt in alts],
)
def test_summation_trap_evicts_differently_under_the_alternative(suite, vector_id, alternative):
    vector = suite[vector_id]
    assert outcomes(vector, SnapKV) == expected(vector)
    assert outcomes(vector, SUMMATIONS[alternative].factory) != expected(vector)
    assert alternative in vector.description.lower()


def test_every_summation_alternative_is_trapped():
    assert {alt for alts in SUMMATION_TRAPS.values() for alt in alts} == set(SUMMATIONS)


# Other porting mistakes, each one method of the reference done wrong: catalogued mutants
# (by name) where the catalogue holds the mistake, else a subclass written here.


class TiesByRawSum(SnapKV):
    def select(self, pooled, count):
        sums = self.window_sums()
        return heapq.nsmallest(
            count, range(self.candidate_count()), key=lambda i: (pooled[i], sums[i], i)
        )


class UnsignedCount(SnapKV):
    def evict(self):
        if len(self.kept) >= self.params.budget:
            return super().evict()
        budget = self.params
        self.params = Params(1, 0, *_ring(budget))  # k wraps to a huge count
        try:
            return super().evict()
        finally:
            self.params = budget


def _ring(params: Params) -> tuple[int, int]:
    return params.obsWindow, params.poolKernel


class WindowPlusOne(SnapKV):
    def __init__(self, params, seed=0):
        super().__init__(params, seed)
        p = self.params
        self.params = Params(p.budget, p.recentWindow, p.obsWindow + 1, p.poolKernel)


class NeverWraps(SnapKV):
    def __init__(self, params, seed=0):
        super().__init__(params, seed)
        p = self.params
        self.params = Params(p.budget, p.recentWindow, 10**6, p.poolKernel)


class StaleRowLeftByCompaction(SnapKV):
    """Rings live in storage rows compacted in place; a new entry's row is not cleared."""

    def __init__(self, params, seed=0):
        self.left_behind: dict[int, Ring] = {}  # storage row -> what compaction left there
        super().__init__(params, seed)

    def remove(self, victims):
        rows = list(self.rings)
        super().remove(victims)
        for row in range(len(self.rings), len(rows)):
            self.left_behind[row] = rows[row].copy()

    def admit(self, position):
        super().admit(position)
        row = len(self.rings) - 1
        if row in self.left_behind:
            self.rings[row] = self.left_behind.pop(row)


def _windowed(policy: SnapKV, sums: Sequence[float], low: int, high: int, *, mean=False):
    """Max (or, with ``mean``, the mean) over kept indices ``i + low .. i + high``, clamped."""
    count = len(sums)
    pooled = []
    for i in range(count):
        offsets = range(max(low, -count), min(high, count) + 1)
        window = [sums[i + o] for o in offsets if 0 <= i + o < count]
        pooled.append(sum(window) / len(window) if mean else max(window))
    return pooled


def pooling(low: Callable[[int], int], high: Callable[[int], int], **how) -> type[SnapKV]:
    class WrongPooling(SnapKV):
        def pool(self, sums):
            radius = (self.params.poolKernel - 1) // 2
            return _windowed(self, sums, low(radius), high(radius), **how) if len(sums) else sums

    return WrongPooling


class EdgesUnpooled(SnapKV):
    def pool(self, sums):
        radius = (self.params.poolKernel - 1) // 2
        pooled = sums.copy()
        for i in range(radius, len(sums) - radius):
            pooled[i] = max(sums[i - radius : i + radius + 1])
        return pooled


def recent(count: Callable[[SnapKV], int]) -> type[SnapKV]:
    class WrongRecentWindow(SnapKV):
        def candidate_count(self):
            return max(count(self), 0)

    return WrongRecentWindow


class RecentByPositionNumber(SnapKV):
    def candidate_count(self):
        last = self.last_admitted
        return sum(1 for position in self.kept if position <= last - self.params.recentWindow)


class NegativeZeroBelowZero(SnapKV):
    """Sums start from -0.0 (Rust's float Sum) and rank with a total order (-0.0 < +0.0)."""

    def window_sums(self):
        sums = []
        for ring in self.rings:
            total = -0.0
            for weight in ring.values:
                total += weight
            if len(ring.values) < self.params.obsWindow:
                total += 0.0  # an unwritten slot
            sums.append(total)
        return sums

    def select(self, pooled, count):
        def key(i):
            return (pooled[i], math.copysign(1.0, pooled[i]) > 0, i)

        return heapq.nsmallest(count, range(self.candidate_count()), key=key)


class FlushesSubnormals(SnapKV):
    def check_attention(self, attn):
        weights = super().check_attention(attn)
        if weights is not None:
            weights = [0.0 if abs(w) < 2.0**-126 else w for w in weights]
        return weights


class WritesBeforeJudgingPosition(SnapKV):
    def step(self, pos, attn):
        weights = self.check_attention(attn)
        if weights is not None:
            self.write(weights)
        self.admit(self.check_position(pos))


class CursorMovesOnRefusal(SnapKV):
    def check_attention(self, attn):
        try:
            return super().check_attention(attn)
        except PolicyError:
            self.slot = (self.slot + 1) % self.params.obsWindow
            raise


def keeps_cursor_across_new() -> Factory:
    """A session whose new policy inherits the previous policy's ring cursor."""
    previous: list[SnapKV] = []

    def factory(params, seed):
        policy = SnapKV(params, seed)
        if previous:
            policy.slot = previous[-1].slot % policy.params.obsWindow
        previous.append(policy)
        return policy

    return factory


def refused_new_sets_budget() -> Factory:
    """A session whose refused new has already copied its budget into the current policy."""
    current: list[SnapKV] = []

    def factory(params, seed):
        try:
            policy = SnapKV(params, seed)
        except PolicyError:
            if current and isinstance(params.get("budget"), int):
                p = current[-1].params
                current[-1].params = Params(params["budget"], 0, p.obsWindow, p.poolKernel)
            raise
        current.append(policy)
        return policy

    return factory


def _factory(mistake: Any) -> Factory:
    """The policy factory of a trap's wrong policy: a mutant name, a class or a factory maker."""
    if isinstance(mistake, str):
        return lookup(mistake).factory
    return mistake() if callable(mistake) and not isinstance(mistake, type) else mistake


#: Each hand-built trap and the wrong policies it must catch (the mistake its description names):
#: a catalogued mutant's name, a wrong policy class, or a maker of a session's policy factory.
TRAPS: dict[str, list[Any]] = {
    "ties/lower-position-first": ["ties-to-higher-position"],
    "ties/many-candidates": ["ties-to-higher-position", "one-victim-per-evict"],
    "ties/pooled-not-raw": [TiesByRawSum],
    "order/victims-ascending": ["victims-in-rank-order"],
    "evict/many-victims-one-call": ["one-victim-per-evict"],
    "evict/nothing-to-evict": [UnsignedCount],
    "null/does-not-advance-ring": ["null-advances-ring", "null-writes-zeros"],
    "null/writes-nothing": ["null-writes-zeros"],
    "ring/wrap-around": [NeverWraps],
    "ring/empty-attention-advances": ["empty-attention-as-null"],
    "ring/obs-window-one": [WindowPlusOne],
    # Two storages: a row left behind by compaction, and the victim's ring (the catalogued one).
    "ring/stale-history-on-slot-reuse": [StaleRowLeftByCompaction, "stale-history-on-reuse"],
    "pooling/kernel-3-radius-1": [
        pooling(lambda r: -r - 1, lambda r: r + 1),
        pooling(lambda r: 1 - r, lambda r: r - 1),
        "kernel-as-radius",
        pooling(lambda r: 0, lambda r: 2 * r),
    ],
    "pooling/kernel-5-radius-2": [
        pooling(lambda r: -r - 1, lambda r: r + 1),
        pooling(lambda r: 1 - r, lambda r: r - 1),
        pooling(lambda r: 0, lambda r: 2 * r),
    ],
    "pooling/kernel-7-radius-3": [
        pooling(lambda r: -r - 1, lambda r: r + 1),
        pooling(lambda r: 1 - r, lambda r: r - 1),
        pooling(lambda r: 0, lambda r: 2 * r),
    ],
    # The mean over the clamped window (avg_pool1d without count_include_pad); the catalogued
    # average-pooling divides by poolKernel instead, a different policy at the ends.
    "pooling/max-not-average": [pooling(lambda r: -r, lambda r: r, mean=True)],
    "pooling/clamp-left-defended": [EdgesUnpooled],
    "pooling/clamp-right-defended": [EdgesUnpooled],
    "pooling/clamp-left-no-wrap": ["wrap-around-pooling"],
    "pooling/clamp-right-no-wrap": ["wrap-around-pooling"],
    "pooling/across-eviction-holes": ["pool-over-position-numbers"],
    "pooling/gapped-positions": ["pool-over-position-numbers"],
    "recent/defends-neighbour": ["recent-excluded-from-pooling", "recent-made-candidates"],
    "recent/window-off-by-one": [
        "recent-window-one-long",
        "recent-window-one-short",
        RecentByPositionNumber,
    ],
    "recent/window-zero": [recent(lambda p: len(p.kept) - (p.params.recentWindow or len(p.kept)))],
    "weights/negative-zero": [NegativeZeroBelowZero],
    "weights/subnormal": [FlushesSubnormals],
    "atomicity/refused-position-writes-nothing": [WritesBeforeJudgingPosition],
    "atomicity/refused-attention-admits-nothing": ["refused-step-still-admits"],
    "atomicity/refused-attention-partial-write": ["partial-write-on-refusal"],
    "atomicity/refused-attention-cursor-unmoved": [CursorMovesOnRefusal],
    "position/equal-to-evicted": ["position-checked-against-kept"],
    "position/near-int31-max": ["positions-truncated-16-bit"],
    "position/above-16-bits": ["positions-truncated-16-bit"],
    "lifecycle/new-replaces-policy": [keeps_cursor_across_new],
    "lifecycle/refused-new-keeps-policy": [refused_new_sets_budget],
}


@pytest.mark.parametrize(
    ("vector_id", "mistake"),
    [(vid, mistake) for vid, mistakes in TRAPS.items() for mistake in mistakes],
    ids=lambda value: value if isinstance(value, str) else getattr(value, "__name__", "m"),
)
def test_trap_catches_its_mistake(suite, vector_id, mistake):
    vector = suite[vector_id]
    assert outcomes(vector, _factory(mistake)) != expected(vector)


# -- the reductions against independent implementations ----------------------------------------


def score_policy_victims(vector: Vector, cumulative: bool) -> list[list[int]]:
    """Replay ``vector`` on TOVA (latest weight) or H2O (cumulative weight), in plain Python."""
    budget = vector.params["budget"]
    protected = vector.params["recentWindow"]
    kept: list[int] = []
    score: dict[int, float] = {}
    victims = []
    for call in vector.calls[1:]:
        if call.expected_error:
            continue  # a refused call changes nothing
        if call.op == "step":
            for position, weight in zip(kept, call.request["attn"] or [], strict=False):
                score[position] = score[position] + weight if cumulative else float(weight)
            kept.append(call.request["pos"])
            score[kept[-1]] = 0.0
        elif call.op == "evict":
            count = max(0, len(kept) - budget)
            candidates = kept[: len(kept) - protected]
            chosen = sorted(sorted(candidates, key=lambda p: (score[p], p))[:count])
            kept = [p for p in kept if p not in chosen]
            victims.append(chosen)
    return victims


@pytest.mark.parametrize(
    ("tag", "cumulative"), [("reduction-tova", False), ("reduction-h2o", True)]
)
def test_reduction_vectors_match_an_independent_implementation(suite, tag, cumulative):
    vectors = [v for v in suite.values() if tag in v.tags]
    assert vectors
    for vector in vectors:
        p = vector.params
        assert p["poolKernel"] == 1
        writes = sum(1 for c in vector.calls if c.op == "step" and c.request["attn"] is not None)
        assert p["obsWindow"] == 1 if not cumulative else p["obsWindow"] > writes
        want = [c.expected_victims for c in vector.calls if c.op == "evict"]
        assert score_policy_victims(vector, cumulative) == want, vector.id
        other = score_policy_victims(vector, not cumulative)
        assert other != want, f"{vector.id} does not tell TOVA from H2O"

"""Slips in the policy (SPEC.md §2): the mutant catalogue served through the reference adapter,
each mutant under the sentence it breaks, and a few policies of this family's own.

The policy mutants (:mod:`conformance.mutants`) are whole-policy mistakes with their own
kill matrix; here each gets the id of the SPEC.md sentence it breaks (:data:`MUTANT_SENTENCES`)
and becomes a slip of the ``policy`` family served by the reference adapter, so that every
sentence's score counts them. The classes below are slips of the policy that the mutant
catalogue does not model: a running sum kept too long, rings rotated at evict, an epsilon in
comparisons, a seed that breaks ties.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.policy.reference import Params, PolicyFactory, Ring, SnapKV
from conformance.slips.slip_adapter import Slip, SlipAdapter, add, slip

if TYPE_CHECKING:  # the catalogue is numpy: imported when the mutants join, not before
    from conformance.mutants._base import Mutant

#: The sentence each catalogued policy mutant breaks.
MUTANT_SENTENCES: dict[str, str] = {
    # §2.1 construction
    "case-insensitive-names": "S2.1-names",
    "snake-case-names-accepted": "S2.1-names",
    "unknown-params-ignored": "S2.1-names",
    "missing-param-defaulted": "S2.1-names",
    "positional-params": "S2.1-object",
    "boolean-param-accepted": "S2.1-types",
    "fractional-param-truncated": "S2.1-types",
    "string-params-coerced": "S2.1-types",
    "null-param-defaulted": "S2.1-types",
    "null-param-as-zero": "S2.1-types",
    "unsigned-params": "S2.1-ranges",
    "param-above-int31-accepted": "S2.1-ranges",
    "budget-zero-accepted": "S2.1-ranges",
    "budget-one-refused": "S2.1-ranges",
    "recent-window-equal-budget-accepted": "S2.1-ranges",
    "recent-window-unchecked": "S2.1-ranges",
    "negative-recent-window-accepted": "S2.1-ranges",
    "zero-obs-window-accepted": "S2.1-ranges",
    "negative-obs-window-accepted": "S2.1-ranges",
    "obs-window-one-refused": "S2.1-ranges",
    "even-kernel-accepted": "S2.1-ranges",
    "kernel-oddness-only": "S2.1-ranges",
    "kernel-unchecked": "S2.1-ranges",
    "seed-unvalidated": "S2.1-seed",
    "seed-truncated": "S2.1-seed",
    "seed-too-narrow": "S2.1-seed-range",
    "memory-sized-by-params": "S2.1-large",
    "budget-plus-one-overflow": "S2.1-large",
    "budget-plus-one-storage": "S2.4-count",
    "ring-allocated-up-front": "S2.1-large",
    "new-keeps-last-position": "S3.2-new",
    "new-keeps-kept": "S3.2-new",
    "new-keeps-cursor": "S3.2-new",
    "refused-new-clears-policy": "S3.2-new-refused",
    "refused-new-assigns-budget": "S3.2-new-refused",
    # §2.3 step
    "attention-judged-before-position": "S3.4-position-first",
    "writes-before-position-judged": "S2.3-atomic",
    "admitted-before-recording": "S2.3-attn-shape",
    "refused-step-still-admits": "S2.3-atomic",
    "admitted-before-judged": "S2.3-atomic",
    "partial-write-on-refusal": "S2.3-atomic",
    "refused-step-moves-cursor": "S2.3-atomic",
    "non-integer-position-bad-request": "S2.3-pos",
    "position-strings-coerced": "S2.3-pos",
    "position-fractions-truncated": "S2.3-pos",
    "boolean-position-accepted": "S2.3-pos",
    "position-bool-null-as-number": "S2.3-pos",
    "position-above-int31-accepted": "S2.3-pos",
    "negative-position-accepted": "S2.3-pos",
    "gaps-refused": "S2.3-increasing",
    "equal-position-accepted": "S2.3-increasing",
    "position-checked-against-kept": "S2.3-increasing",
    "position-order-unchecked": "S2.3-increasing",
    "next-position-overflow": "S2.3-increasing",
    "positions-truncated-16-bit": "S1-integers",
    "positions-as-float32": "S1-integers",
    "wrong-length-bad-request": "S2.3-attn-shape",
    "scalar-attention-broadcast": "S2.3-attn-shape",
    "sparse-attention-map": "S2.3-attn-shape",
    "nested-attention-flattened": "S2.3-weight-type",
    "nested-weight-first-element": "S2.3-weight-type",
    "short-attention-padded": "S2.3-attn-shape",
    "short-attention-zipped": "S2.3-attn-shape",
    "extra-weights-ignored": "S2.3-attn-shape",
    "empty-kept-length-unchecked": "S2.3-attn-shape",
    "boolean-weight-accepted": "S2.3-weight-type",
    "string-weights-coerced": "S2.3-weight-type",
    "null-weight-as-zero": "S2.3-weight-type",
    "null-weight-as-nan": "S2.3-weight-type",
    "integer-weights-refused": "S2.3-weight-type",
    "integer-weights-as-zero": "S2.3-weight-type",
    "huge-integer-saturated": "S2.3-weight-range",
    "huge-integer-bad-request": "S3.1-limits",
    "single-rounding": "S2.3-rounding",
    "narrowing-half-away": "S2.3-rounding",
    "range-checked-on-float64": "S2.3-weight-range",
    "narrowing-truncates": "S2.3-rounding",
    "no-float32-narrowing": "S2.3-weight-range",
    "range-checked-before-narrowing": "S2.3-weight-range",
    "flush-subnormals": "S2.3-rounding",
    "negative-weights-accepted": "S2.3-weight-range",
    "negative-zero-refused": "S2.3-weight-range",
    "float32-max-refused": "S2.3-weight-range",
    # §2.3 the ring
    "null-advances-ring": "S2.3-null",
    "null-writes-zeros": "S2.3-null",
    "null-as-empty": "S2.3-null",
    "null-step-refused": "S2.3-attn-shape",
    "empty-attention-as-null": "S2.3-write",
    "float16-history": "S2.4-sums",
    "bfloat16-history": "S2.4-sums",
    "per-position-cursor": "S2.3-write",
    "cursor-sticks-at-end": "S2.3-write",
    "window-one-long": "S2.4-sums",
    "window-one-short": "S2.4-sums",
    "latest-step-only": "S2.4-sums",
    "stale-history-on-reuse": "S2.3-admit",
    "stale-row-after-compaction": "S2.3-admit",
    "cursor-reset-on-evict": "S2.4-removal",
    # §2.4 sums
    "float32-accumulation": "S2.4-sums",
    "sums-stored-as-float32": "S2.4-sums",
    "pairwise-summation": "S2.4-sums",
    "reversed-slot-order": "S2.4-sums",
    "chronological-order": "S2.4-sums",
    "kahan-summation": "S2.4-sums",
    "neumaier-summation": "S2.4-sums",
    "simd-lanes-4": "S2.4-sums",
    "simd-lanes-8": "S2.4-sums",
    "simd-lanes-16": "S2.4-sums",
    "fast-math-vectorised-sums": "S2.4-sums",
    "running-sum": "S2.4-fresh-sums",
    "cumulative-sums": "S2.4-sums",
    "crash-on-unwritten-ring": "S2.4-sums",
    "mean-over-window": "S2.4-sums",
    "norm-by-age": "S2.4-sums",
    # §2.4 pooling
    "pool-over-position-numbers": "S2.4-pooling",
    "forward-only-pooling": "S2.4-pooling",
    "backward-only-pooling": "S2.4-pooling",
    "kernel-as-radius": "S2.4-pooling",
    "radius-one-too-wide": "S2.4-pooling",
    "radius-one-too-narrow": "S2.4-pooling",
    "pooling-at-kernel-one": "S2.4-pooling",
    "kernel-capped": "S2.4-pooling",
    "pool-out-of-bounds": "S2.4-pooling",
    "edges-unpooled": "S2.4-pooling",
    "wrap-around-pooling": "S2.4-pooling",
    "positions-as-indices": "S2.4-pooling",
    "average-pooling": "S2.4-pooling",
    "mean-pooling": "S2.4-pooling",
    "recent-excluded-from-pooling": "S2.4-pooling",
    "pool-then-sum": "S2.4-pooling",
    "pool-rows-on-arrival": "S2.4-pooling",
    # §2.4 selection
    "one-victim-per-evict": "S2.4-count",
    "evict-count-off-by-one": "S2.4-count",
    "unsigned-excess": "S2.4-count",
    "evict-always-one": "S2.4-count",
    "count-not-decremented": "S2.4-count",
    "greedy-rescoring": "S2.4-one-scoring",
    "recent-made-candidates": "S2.4-candidates",
    "recent-window-one-short": "S2.4-candidates",
    "recent-window-one-long": "S2.4-candidates",
    "recent-by-position-numbers": "S2.4-candidates",
    "candidates-slice-empty-at-zero": "S2.4-candidates",
    "newest-always-protected": "S2.4-candidates",
    "recent-by-calls": "S2.3-atomic",
    "ties-to-higher-position": "S2.4-selection",
    "ties-by-raw-sum": "S2.4-selection",
    "rank-by-sums": "S2.4-selection",
    "negative-zero-ranked-lower": "S2.4-selection",
    "heap-select-by-pooled": "S2.4-selection",
    "unstable-argsort": "S2.4-selection",
    "argpartition-selection": "S2.4-selection",
    "topk-keepers": "S2.4-selection",
    "victims-in-rank-order": "S2.4-victims",
    "victims-in-removal-order": "S2.4-victims",
    # named points: the sentence of their first part
    "openvino-sum": "S2.4-sums",
    "openvino-norm-sum": "S2.4-sums",
    "official-snapkv-maxpool": "S2.4-sums",
    "official-snapkv-avgpool": "S2.4-pooling",
    "kvpress-snapkv": "S2.4-pooling",
    "c-template-fast-math": "S2.4-sums",
    "topk-unordered": "S2.4-selection",
    "bool-as-integer": "S1-integers",
    # what engines do (the triage's round of real engines)
    "std-stof": "S2.3-rounding",
    "slot-from-call-count": "S2.3-write",
    "slot-from-position": "S2.3-write",
    "renormalised-rows": "S2.3-write",
    "prefix-sum-window": "S2.4-sums",
    "pool-forward-on-arrival": "S2.4-pooling",
    "window-padded-keepers": "S2.4-candidates",
    "std-sort-by-score": "S2.4-selection",
    "std-nth-element-by-score": "S2.4-selection",
    "std-partial-sort-by-score": "S2.4-selection",
    "torch-topk-smallest": "S2.4-selection",
    "torch-topk-keepers": "S2.4-selection",
    "java-priority-queue-by-score": "S2.4-selection",
    "threshold-scan-by-score": "S2.4-selection",
    "paged-eviction": "S2.4-count",
    "deferred-eviction": "S2.4-count",
    "openvino-paged": "S2.4-count",
    "masked-holes-stale": "S2.4-removal",
    "masked-holes-zeroed": "S2.4-removal",
}


def add_mutants() -> None:
    """Register every catalogued policy mutant as a ``policy`` slip under its sentence; raise
    KeyError naming a mutant :data:`MUTANT_SENTENCES` does not place."""
    from conformance import mutants

    missing = [m.name for m in mutants.CATALOGUE if m.name not in MUTANT_SENTENCES]
    if missing:
        raise KeyError(
            f"policy mutant(s) {', '.join(missing)} have no sentence: add them to "
            "conformance.slips.policy_slips.MUTANT_SENTENCES"
        )
    for mutant in mutants.CATALOGUE:
        add(mutant_slip(mutant))


def mutant_slip(mutant: Mutant) -> Slip:
    """The ``policy`` slip serving the catalogued mutant ``mutant`` under the sentence it
    breaks; KeyError when :data:`MUTANT_SENTENCES` does not place it."""
    return Slip(
        mutant.name,
        MUTANT_SENTENCES[mutant.name],
        "policy",
        mutant.origin,
        (mutant.doc or mutant.rule).split("\n\n")[0],
        functools.partial(_serving, mutant.factory),
        mutant=mutant.name,
    )


def _serving(factory: PolicyFactory, implementation: Mapping[str, str] | None = None) -> Any:
    return SlipAdapter(factory, implementation)


# -- policies of this family's own -------------------------------------------------------------


class RunningSums(SnapKV):
    """Keeps a running sum per position until its ring has been written ``obsWindow`` times,
    then sums the ring afresh: the cursor's return to slot 0 is missed."""

    def __init__(self, params: Mapping[str, Any] | Params, seed: int = 0) -> None:
        super().__init__(params, seed)
        self.running: list[float] = []
        self.writes: list[int] = []

    def write(self, weights: Sequence[float]) -> None:
        for index, weight in enumerate(weights):
            self.running[index] += weight
            self.writes[index] += 1
        super().write(weights)

    def admit(self, position: int) -> None:
        super().admit(position)
        self.running.append(0.0)
        self.writes.append(0)

    def window_sums(self) -> list[float]:
        fresh = super().window_sums()
        obs = self.params.obsWindow
        return [
            self.running[i] if self.writes[i] < obs else fresh[i] for i in range(len(self.kept))
        ]

    def remove(self, victims: Iterable[int]) -> None:
        gone = set(victims)
        self.running = [s for i, s in enumerate(self.running) if i not in gone]
        self.writes = [n for i, n in enumerate(self.writes) if i not in gone]
        super().remove(gone)


#: The longest ring :class:`RotatedAtEvict` rotates (rings are lists as long as their last
#: written slot, and a rotation may move a value to the far end).
ROTATED_UP_TO = 1 << 12


class RotatedAtEvict(SnapKV):
    """Rotates every surviving ring at evict so that its oldest slot comes first, and puts
    the cursor back on slot 0 (a compaction that normalises the ring)."""

    def remove(self, victims: Iterable[int]) -> None:
        super().remove(victims)
        obs, start = self.params.obsWindow, self.slot
        if obs > ROTATED_UP_TO:  # a full-matrix port could not hold such rings anyway
            return
        rotated = []
        for ring in self.rings:
            fresh = Ring()
            moved = sorted(((slot - start) % obs, v) for slot, v in enumerate(ring.values) if v)
            for slot, value in moved:
                fresh.write(slot, value)
            rotated.append(fresh)
        self.rings = rotated
        self.slot = 0


class EpsilonTies(SnapKV):
    """Compares pooled scores with a relative tolerance of 1e-6: scores that close are ties,
    and the lower position goes first."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        def order(a: int, b: int) -> int:
            if math.isclose(pooled[a], pooled[b], rel_tol=1e-6, abs_tol=1e-12):
                return -1 if a < b else 1 if a > b else 0
            return -1 if pooled[a] < pooled[b] else 1

        candidates = sorted(range(self.candidate_count()), key=functools.cmp_to_key(order))
        return candidates[:count]


class SeededTies(SnapKV):
    """Breaks ties by the seed: with any seed but 0, equal pooled scores evict the higher
    position first."""

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        if self.seed == 0:
            return super().select(pooled, count)
        candidates = range(self.candidate_count())
        return sorted(candidates, key=lambda index: (pooled[index], -index))[:count]


class _Serving(SlipAdapter):
    POLICY: type[SnapKV] = SnapKV

    def default_factory(self) -> PolicyFactory:
        return self.POLICY


@slip(
    "running-sum-until-own-wrap",
    sentence="S2.4-fresh-sums",
    origin="a running sum per position that is re-summed only once its ring has been written "
    "obsWindow times, reading 're-sum once the ring has wrapped' as the position's own ring",
)
class RunningSumUntilOwnWrap(_Serving):
    """Adds each weight to its position's running sum until that ring has been written
    obsWindow times; only then sums the ring in slot order."""

    POLICY = RunningSums


@slip(
    "rings-rotated-at-evict",
    sentence="S2.4-removal",
    origin="an eviction that compacts the history matrix and normalises every surviving ring "
    "to start at slot 0 (numpy.roll after the rows are removed), resetting the cursor",
)
class RingsRotatedAtEvict(_Serving):
    """At each evict the surviving rings are rotated to chronological order and the cursor
    reset to slot 0."""

    POLICY = RotatedAtEvict


@slip(
    "epsilon-ties",
    sentence="S2.4-selection",
    origin="scores compared with a tolerance (math.isclose, numpy.isclose, an EPSILON "
    "constant) so that close scores count as ties",
)
class EpsilonTiesSlip(_Serving):
    """Pooled scores within a relative 1e-6 of each other are ties, broken by position."""

    POLICY = EpsilonTies


@slip(
    "seed-breaks-ties",
    sentence="S2.1-seed-unused",
    origin="a port that seeds a random generator from the seed and uses it to break ties "
    "(shuffling equal scores), as other registry policies do",
)
class SeedBreaksTies(_Serving):
    """With a seed other than 0, equal pooled scores evict the higher position first."""

    POLICY = SeededTies

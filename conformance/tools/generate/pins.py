"""Which numbered SPEC.md sentences each generated vector pins: its ``spec`` field.

One table, read top to bottom: a vector's ``spec`` is the union of the ids of every row whose
pattern (``fnmatch``, on the vector id) matches it, in SPEC.md's order. A row is a claim: a port
that breaks the sentence fails the vector. The claims are held to account by the slip
catalogue (:mod:`conformance.slips`): every slip of a sentence is failed by at least one item
that pins it (``tests/slips/test_slips.py``). Protocol checks carry their ``spec`` in
their drafts (:mod:`conformance.tools.generate.checks`).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from conformance.spec.sentences import sentences

#: (vector id pattern, sentence ids).
PINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("atomicity/*", ("S2.3-atomic", "S3.3-refusal")),
    ("attention/*", ("S3.3-refusal",)),
    ("attention/beyond-float32", ("S2.3-weight-range",)),
    ("attention/negative*", ("S2.3-weight-range",)),
    ("attention/float32-rounding-midpoint", ("S2.3-rounding", "S2.3-weight-range")),
    ("attention/huge-integer-literal", ("S2.3-weight-type", "S2.3-weight-range", "S3.1-limits")),
    ("attention/*-weight", ("S2.3-weight-type",)),
    ("attention/nested-list", ("S2.3-weight-type",)),
    ("attention/non-empty-before-any-position", ("S2.3-attn-shape",)),
    ("attention/not-a-list", ("S2.3-attn-shape",)),
    ("attention/object", ("S2.3-attn-shape",)),
    ("attention/too-*", ("S2.3-attn-shape", "S2.3-atomic")),
    ("evict/*", ("S2.4-count", "S2.4-victims")),
    ("lifecycle/new-replaces-policy", ("S3.2-new",)),
    ("lifecycle/refused-*", ("S3.2-new-refused",)),
    ("lifecycle/refused-seed-*", ("S2.1-seed",)),
    ("limits/*", ("S2.1-large",)),
    ("limits/maximum-seed", ("S2.1-seed-range", "S2.1-seed-unused")),
    ("limits/minimum-params", ("S2.1-ranges",)),
    ("mutant-traps/backward-only-pooling", ("S2.4-pooling",)),
    ("mutant-traps/deferred-eviction", ("S2.4-count",)),
    ("mutant-traps/paged-eviction", ("S2.4-count",)),
    ("mutant-traps/masked-holes-*", ("S2.4-removal",)),
    ("mutant-traps/pool-forward-on-arrival", ("S2.4-pooling",)),
    ("mutant-traps/prefix-sum-window", ("S2.4-sums",)),
    ("mutant-traps/renormalised-rows", ("S2.3-write",)),
    ("mutant-traps/slot-from-*", ("S2.3-write",)),
    ("mutant-traps/java-priority-queue-by-score", ("S2.4-selection",)),
    ("mutant-traps/std-*-by-score", ("S2.4-selection",)),
    ("mutant-traps/threshold-scan-by-score", ("S2.4-selection",)),
    ("mutant-traps/window-padded-keepers", ("S2.4-candidates",)),
    ("mutant-traps/gaps-refused", ("S2.3-increasing",)),
    ("mutant-traps/greedy-rescoring", ("S2.4-one-scoring",)),
    ("mutant-traps/non-integer-position-bad-request", ("S2.3-pos",)),
    ("mutant-traps/openvino-*", ("S2.4-sums",)),
    ("mutant-traps/openvino-sum", ("S2.4-pooling",)),
    ("mutant-traps/per-position-cursor", ("S2.3-write",)),
    ("mutant-traps/pool-then-sum", ("S2.4-pooling",)),
    ("mutant-traps/wrong-length-bad-request", ("S2.3-attn-shape",)),
    ("null/*", ("S2.3-null",)),
    ("null/only-null-steps", ("S2.4-sums",)),
    ("order/*", ("S2.4-victims",)),
    ("params/*", ("S2.1-ranges", "S3.3-refusal")),
    ("params/budget-fraction", ("S2.1-types",)),
    ("params/budget-string", ("S2.1-types", "S1-integers")),
    ("params/budget-boolean", ("S2.1-types", "S1-integers")),
    ("params/*-null", ("S2.1-types",)),
    ("params/missing-pool-kernel", ("S2.1-names",)),
    ("params/extra-field", ("S2.1-names",)),
    ("params/*-case*", ("S2.1-names",)),
    ("params/not-an-object", ("S2.1-object",)),
    ("params/seed-*", ("S2.1-seed",)),
    ("params/integer-reader-boundaries", ("S1-integers", "S3.2-new-refused")),
    ("params/negative-zero-is-zero", ("S1-integers",)),
    ("pooling/*", ("S2.4-pooling",)),
    ("position/*", ("S2.3-pos", "S3.3-refusal")),
    ("position/above-16-bits", ("S1-integers",)),
    # positions near 2^31 - 1 read exactly (a float32 would round them), the next one after
    # the largest computed without overflow
    ("position/near-int31-max", ("S2.1-large", "S1-integers", "S2.3-increasing")),
    ("position/boolean-or-null-first", ("S1-integers",)),
    ("position/not-an-integer", ("S1-integers",)),
    ("position/decreasing", ("S2.3-increasing", "S2.3-atomic")),
    ("position/equal-to-*", ("S2.3-increasing",)),
    ("position/equal-to-last", ("S2.3-atomic",)),
    ("position/negative", ("S2.3-atomic",)),
    ("position/judged-before-attention", ("S3.4-position-first",)),
    ("position/integer-reader-boundaries", ("S1-integers", "S2.3-atomic")),
    ("random/*", ("S2.3-write", "S2.3-null", "S2.4-sums", "S2.4-pooling", "S2.4-selection")),
    ("random/*", ("S3.1-pipelined",)),
    ("recent/*", ("S2.4-candidates",)),
    ("recent/defends-neighbour", ("S2.4-pooling",)),
    ("reduction/*", ("S2.4-sums", "S2.4-pooling", "S2.4-selection")),
    ("ring/empty-attention-advances", ("S2.3-write",)),
    ("ring/obs-window-one", ("S2.3-write", "S2.4-sums")),
    ("ring/stale-history-on-slot-reuse", ("S2.3-admit",)),
    ("ring/wrap-around", ("S2.3-write", "S2.4-sums")),
    ("ring/evict-keeps-slots", ("S2.4-removal", "S2.4-sums")),
    ("rounding/*", ("S2.3-rounding",)),
    ("rounding/tiny-negative-reads-as-zero", ("S2.3-weight-range",)),
    ("rounding/negative-zero-spellings", ("S2.3-weight-range",)),
    ("rounding/float32-maximum-from-below", ("S2.3-weight-range",)),
    ("rounding/integer-*", ("S2.3-weight-type",)),
    ("rounding/reader-extremes", ("S2.3-weight-range",)),
    ("summation/*", ("S2.4-sums",)),
    ("summation/running-sum-trap", ("S2.4-fresh-sums",)),
    ("summation/resum-after-cursor-wraps", ("S2.4-fresh-sums",)),
    ("ties/*", ("S2.4-selection",)),
    ("ties/pooled-*", ("S2.4-pooling",)),
    ("ties/seed-changes-nothing", ("S2.1-seed-unused", "S2.1-seed-range")),
    ("weights/half-precision-history", ("S2.4-sums",)),
    ("weights/integer-literals*", ("S2.3-weight-type", "S2.3-rounding")),
    ("weights/negative-zero", ("S2.3-weight-range", "S2.4-selection")),
    ("weights/subnormal", ("S2.3-rounding",)),
    ("weights/largest-subnormal", ("S2.3-rounding",)),
    ("weights/sums-beyond-float32", ("S2.4-sums",)),
    ("workload/*", ("S2.4-count", "S2.4-sums", "S2.4-pooling", "S2.4-selection")),
    ("workload/*", ("S3.1-pipelined",)),
    ("workload/noisy-attention-gaps-and-nulls", ("S2.3-null", "S2.3-increasing")),
    ("workload/heavy-hitter-epochs-budget-8", ("S2.4-removal",)),
)


def pins_of(vector_id: str, also: Iterable[str] = ()) -> tuple[str, ...]:
    """The ``spec`` of the vector ``vector_id``: every matching row's ids and ``also`` (a
    draft's own), in SPEC.md's order."""
    wanted = {ident for pattern, ids in PINS if fnmatchcase(vector_id, pattern) for ident in ids}
    wanted.update(also)
    return tuple(sentence.id for sentence in sentences() if sentence.id in wanted)

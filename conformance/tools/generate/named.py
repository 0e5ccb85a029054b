"""Every mistake a committed vector's "Catches:" text names, as catalogued choices.

:data:`NAMED` maps each vector id to the phrases of its "Catches:" text that name a porting
mistake, each with the catalogued mistake it names: a choice, a named point, or several choices
made at once (``"a+b"``). ``tests/tools/test_named.py`` walks every committed vector: each must have
an entry, each phrase must stand in its text, and each named mistake must be catalogued and
killed by that vector, so a porter who reads a vector's "Catches:" can trust that the kit's
catalogue holds the mistake and that this vector catches it. :data:`GENERIC` lists the vectors
whose text names no particular mistake (a random mix, a recorded trace), with the reason.

A new vector, or a changed "Catches:" text, gets its entry here.
"""

from __future__ import annotations

from conformance.tools.generate.builders.mutant_traps import TRAPPED
from conformance.tools.generate.builders.selection import TIE_GROUPS
from conformance.tools.generate.builders.summation import TRAP_WINDOWS

Named = tuple[tuple[str, str], ...]

_UNSTABLE: Named = (
    ("numpy's default argsort", "unstable-argsort"),
    ("argpartition", "argpartition-selection"),
    ("a topk of the keepers", "topk-keepers"),
)


_STRAIGHT: Named = (("a reader that rounds the decimal straight to float32", "single-rounding"),)


def _window_trap(obs: int) -> Named:
    lanes = [f"simd-lanes-{n}" for n in (4, 8, 16) if obs >= n]
    return (
        ("pairwise (np.sum / torch.sum over the ring)", "pairwise-summation"),
        *(("SIMD lanes (4, 8 or 16 partial sums", name) for name in lanes),
        ("BLAS dot products with a ones vector", "simd-lanes-4"),
        ("SIMD lanes", "fast-math-vectorised-sums"),
        ("Kahan", "kahan-summation"),
        ("Neumaier compensation", "neumaier-summation"),
        ("chronological order from the cursor", "chronological-order"),
        ("reversed order", "reversed-slot-order"),
        ("float32 accumulation", "float32-accumulation"),
    )


NAMED: dict[str, Named] = {
    # -- atomicity and lifecycle -----------------------------------------------------------------
    "atomicity/refused-attention-admits-nothing": (
        ("a refused step that still admits its position", "refused-step-still-admits"),
    ),
    "atomicity/refused-attention-cursor-unmoved": (
        ("a refused step that advances the ring cursor", "refused-step-moves-cursor"),
    ),
    "atomicity/refused-attention-partial-write": (("a partial write", "partial-write-on-refusal"),),
    "atomicity/refused-position-not-admitted": (
        ("a refused step that still admits its position", "admitted-before-judged"),
    ),
    "atomicity/refused-position-writes-nothing": (
        ("writes its attention before the position is judged", "writes-before-position-judged"),
        ("that advances the ring cursor", "refused-step-moves-cursor"),
        ("that still admits its position", "admitted-before-judged"),
        ("a protected window counted in step calls", "recent-by-calls"),
    ),
    "lifecycle/new-replaces-policy": (
        ("keeps the last admitted position", "new-keeps-last-position"),
        ("the kept list", "new-keeps-kept"),
        ("the ring cursor", "new-keeps-cursor"),
    ),
    "lifecycle/refused-seed-keeps-policy": (("a seed never validated", "seed-unvalidated"),),
    "lifecycle/refused-new-keeps-policy": (
        ("a refused new that clears the current policy", "refused-new-clears-policy"),
        ("assigns some fields (budget 2)", "refused-new-assigns-budget"),
    ),
    # -- attention -------------------------------------------------------------------------------
    "attention/beyond-float32": (
        ("weights kept as float64 without the float32 narrowing", "no-float32-narrowing"),
        ("narrowed to inf and accepted", "range-checked-before-narrowing"),
    ),
    "attention/boolean-weight": (("booleans read as 1.0", "boolean-weight-accepted"),),
    "attention/float32-rounding-midpoint": (
        ("narrowing by truncation (round toward zero)", "narrowing-truncates"),
        ("parsing the decimal straight to float32", "single-rounding"),
    ),
    "attention/huge-integer-literal": (
        ("an overlong integer overflowing a 64-bit JSON reader", "huge-integer-saturated"),
        ("failing as bad-request", "huge-integer-bad-request"),
    ),
    "attention/negative": (("negative weights accepted", "negative-weights-accepted"),),
    "attention/negative-subnormal": (
        ("subnormals flushed to zero before the sign check", "flush-subnormals"),
    ),
    "attention/nested-list": (
        ("a reader that flattens nested arrays", "nested-attention-flattened"),
        ("takes their first element", "nested-weight-first-element"),
    ),
    "attention/non-empty-before-any-position": (
        ("a length check that skips the empty case", "empty-kept-length-unchecked"),
        ("weights for the new position", "admitted-before-recording"),
    ),
    "attention/not-a-list": (
        ("a scalar broadcast to every kept position", "scalar-attention-broadcast"),
    ),
    "attention/null-weight": (
        ("null weights read as 0", "null-weight-as-zero"),
        ("or NaN", "null-weight-as-nan"),
    ),
    "attention/object": (("a sparse {position: weight} map", "sparse-attention-map"),),
    "attention/string-weight": (("strings coerced to numbers", "string-weights-coerced"),),
    "attention/too-long-counts-the-new-position": (
        ("the length checked against the count after admission", "admitted-before-recording"),
        ("extra weights ignored", "extra-weights-ignored"),
    ),
    "attention/too-short": (
        ("missing weights padded with zeros", "short-attention-padded"),
        ("the list zipped with the kept entries", "short-attention-zipped"),
    ),
    # -- evict -----------------------------------------------------------------------------------
    "evict/many-victims-one-call": (
        ("one victim per call", "one-victim-per-evict"),
        ("storage sized for budget + 1 entries", "budget-plus-one-storage"),
        ("a count off by one that leaves budget - 1", "evict-count-off-by-one"),
    ),
    "evict/nothing-to-evict": (
        ("an unsigned len(kept) - budget", "unsigned-excess"),
        ("an evict that always removes one", "evict-always-one"),
        ("a second evict that evicts again", "count-not-decremented"),
    ),
    # -- limits ----------------------------------------------------------------------------------
    "limits/maximum-params-accepted": (
        (
            "memory sized by the parameters up front (budget x obsWindow floats",
            "memory-sized-by-params",
        ),
        ("or budget + 1 rows)", "budget-plus-one-storage"),
        ("32-bit overflow in budget + 1", "budget-plus-one-overflow"),
    ),
    "limits/maximum-seed": (("a seed read into a narrower type", "seed-too-narrow"),),
    "limits/maximum-window-and-kernel": (
        ("a ring allocated at obsWindow columns", "ring-allocated-up-front"),
        ("out-of-bounds pooling when the kernel dwarfs the list", "pool-out-of-bounds"),
    ),
    "limits/minimum-params": (
        ("off-by-one bounds that refuse budget 1", "budget-one-refused"),
        ("or obsWindow 1", "obs-window-one-refused"),
        ("an empty candidate list when recentWindow is 0", "candidates-slice-empty-at-zero"),
    ),
    # -- null steps ------------------------------------------------------------------------------
    "null/does-not-advance-ring": (
        ("a null vector that advances the ring", "null-advances-ring"),
        ("one that writes zeros and advances", "null-writes-zeros"),
    ),
    "null/only-null-steps": (
        ("a null step refused or treated as an error", "null-step-refused"),
        ("a crash on a ring that was never written", "crash-on-unwritten-ring"),
        ("one victim per call", "one-victim-per-evict"),
    ),
    "null/writes-nothing": (
        ("a null vector that writes zeros into the current slot", "null-writes-zeros"),
        ("a null read as an empty list", "null-as-empty"),
    ),
    "order/victims-ascending": (
        ("victims returned in rank order", "victims-in-rank-order"),
        ("torch.topk(-pooled, k).indices", "topk-unordered"),
        ("in the order they are deleted in", "victims-in-removal-order"),
    ),
    # -- params ----------------------------------------------------------------------------------
    "params/budget-above-int31": (
        ("a missing upper bound in 64-bit code", "param-above-int31-accepted"),
    ),
    "params/budget-boolean": (
        ("booleans read as 1", "boolean-param-accepted"),
        ("as in Python (bool is an int)", "bool-as-integer"),
    ),
    "params/budget-fraction": (("a fractional parameter truncated", "fractional-param-truncated"),),
    "params/budget-negative": (("parameters read into unsigned integers", "unsigned-params"),),
    "params/budget-null": (("null read as 'use the default'", "null-param-defaulted"),),
    "params/budget-string": (("strings coerced to numbers", "string-params-coerced"),),
    "params/budget-zero": (
        ("a budget checked only through 0 <= recentWindow <= budget", "budget-zero-accepted"),
    ),
    "params/extra-field": (("unknown parameters silently ignored", "unknown-params-ignored"),),
    "params/missing-pool-kernel": (
        ("a missing name filled from the CLI default", "missing-param-defaulted"),
    ),
    "params/names-in-other-case": (("names matched case-insensitively", "case-insensitive-names"),),
    "params/not-an-object": (("positional parameters accepted", "positional-params"),),
    "params/obs-window-above-int31": (
        ("a missing upper bound on obsWindow", "param-above-int31-accepted"),
    ),
    "params/obs-window-negative": (
        ("a window read as unsigned", "unsigned-params"),
        ("used as a negative array size", "negative-obs-window-accepted"),
    ),
    "params/obs-window-zero": (("a zero window accepted", "zero-obs-window-accepted"),),
    "params/one-name-in-other-case": (
        ("names matched case-insensitively", "case-insensitive-names"),
    ),
    "params/pool-kernel-above-int31-odd": (
        ("a missing upper bound in 64-bit code", "param-above-int31-accepted"),
    ),
    "params/pool-kernel-even": (("the even kernel accepted", "even-kernel-accepted"),),
    "params/pool-kernel-negative-odd": (("an oddness test alone", "kernel-oddness-only"),),
    "params/pool-kernel-zero": (("a kernel checked only for its sign", "kernel-unchecked"),),
    "params/recent-window-above-budget": (
        ("no check of recentWindow against budget at all", "recent-window-unchecked"),
    ),
    "params/recent-window-equals-budget": (
        ("recentWindow = budget accepted", "recent-window-equal-budget-accepted"),
    ),
    "params/recent-window-negative": (
        ("a recentWindow checked only against the budget", "negative-recent-window-accepted"),
    ),
    "params/recent-window-null": (("null read as 0", "null-param-as-zero"),),
    "params/seed-fraction": (
        ("an unused seed never validated", "seed-unvalidated"),
        ("truncated by a cast", "seed-truncated"),
    ),
    "params/seed-string": (("an unused seed never validated", "seed-unvalidated"),),
    "params/snake-case-names": (
        ("a port that accepts its own language's spelling", "snake-case-names-accepted"),
        (
            "ignores unknown names and falls back to defaults",
            "unknown-params-ignored+missing-param-defaulted",
        ),
    ),
    # -- pooling ---------------------------------------------------------------------------------
    "pooling/across-eviction-holes": (
        ("pooling over position numbers", "pool-over-position-numbers"),
    ),
    "pooling/clamp-left-defended": (
        ("edge entries left unpooled ('valid' convolution)", "edges-unpooled"),
        ("or pooling skipped", "rank-by-sums"),
    ),
    "pooling/clamp-left-no-wrap": (("wrap-around pooling", "wrap-around-pooling"),),
    "pooling/clamp-right-defended": (("edge entries left unpooled", "edges-unpooled"),),
    "pooling/clamp-right-no-wrap": (("wrap-around pooling", "wrap-around-pooling"),),
    "pooling/gapped-positions": (
        ("pooling over position numbers", "pool-over-position-numbers"),
        ("indices derived from positions", "positions-as-indices"),
    ),
    "pooling/kernel-wider-than-list": (
        ("out-of-bounds reads when the kernel is wider than the list", "pool-out-of-bounds"),
        ("a kernel silently capped", "kernel-capped"),
        ("or ignored", "rank-by-sums"),
    ),
    **{
        f"pooling/kernel-{kernel}-radius-{kernel // 2}": (
            ("r = poolKernel / 2 + 1", "radius-one-too-wide"),
            ("or r - 1", "radius-one-too-narrow"),
            ("the kernel used as the radius", "kernel-as-radius"),
            ("forward-only pooling over [i, i + k - 1]", "forward-only-pooling"),
        )
        for kernel in (3, 5, 7)
    },
    "pooling/max-not-average": (
        ("average pooling instead of max", "average-pooling"),
        ("average pooling instead of max", "mean-pooling"),
        ("the official SnapKV default, avg_pool1d", "official-snapkv-avgpool"),
    ),
    # -- positions -------------------------------------------------------------------------------
    "position/above-16-bits": (("positions truncated to 16 bits", "positions-truncated-16-bit"),),
    "position/above-int31": (
        ("a missing upper bound in 64-bit code", "position-above-int31-accepted"),
    ),
    "position/boolean-or-null-first": (
        ("booleans and null read as 1 and 0", "position-bool-null-as-number"),
        ("Python's bool", "boolean-position-accepted"),
        ("Python's bool", "bool-as-integer"),
    ),
    "position/decreasing": (
        ("positions kept in a sorted set without an ordering check", "position-order-unchecked"),
    ),
    "position/equal-to-evicted": (
        ("checked against the highest kept position", "position-checked-against-kept"),
    ),
    "position/equal-to-last": (
        ("a >= instead of > in the ordering check", "equal-position-accepted"),
    ),
    "position/judged-before-attention": (
        ("the attention validated before the position", "attention-judged-before-position"),
    ),
    "position/near-int31-max": (
        ("positions stored as float32", "positions-as-float32"),
        ("a 32-bit last + 1 that overflows", "next-position-overflow"),
        ("positions truncated to 16 bits", "positions-truncated-16-bit"),
    ),
    "position/negative": (
        ("positions read as signed without a lower bound", "negative-position-accepted"),
        ("-1 taken as 'before 0' and admitted", "negative-position-accepted"),
    ),
    "position/not-an-integer": (
        ("positions coerced from strings", "position-strings-coerced"),
        ("truncated from fractions", "position-fractions-truncated"),
    ),
    # -- the protected window --------------------------------------------------------------------
    "recent/defends-neighbour": (
        ("recent entries excluded from pooling", "recent-excluded-from-pooling"),
        ("the official SnapKV code and kvpress", "official-snapkv-maxpool"),
        ("the official SnapKV code and kvpress", "kvpress-snapkv"),
        ("recent entries made candidates", "recent-made-candidates"),
    ),
    "recent/window-off-by-one": (
        ("an off-by-one recent window (protecting 1", "recent-window-one-short"),
        ("protecting 3", "recent-window-one-long"),
        ("recency measured in position numbers", "recent-by-position-numbers"),
    ),
    "recent/window-zero": (
        ("candidates taken as kept[:-recentWindow]", "candidates-slice-empty-at-zero"),
        ("a newest entry protected by default", "newest-always-protected"),
    ),
    # -- reductions ------------------------------------------------------------------------------
    "reduction/h2o-window-longer-than-run": (
        ("a window that forgets old steps", "latest-step-only"),
    ),
    "reduction/tova-kernel-one-window-one": (
        ("a stale second slot", "window-one-long"),
        ("pooling that is not switched off at kernel 1", "pooling-at-kernel-one"),
        ("ties to the higher position", "ties-to-higher-position"),
    ),
    # -- rounding: weights chosen for how their decimal rounds ----------------------------------
    "rounding/exact-halfway-ties-to-even": (
        ("narrowing that rounds halves away from zero", "narrowing-half-away"),
        ("truncates toward zero", "narrowing-truncates"),
    ),
    "rounding/float32-maximum-from-below": (
        ("the range checked on the float64 before rounding", "range-checked-on-float64"),
        ("an integer literal of 39 digits refused", "huge-integer-bad-request"),
    ),
    "rounding/halfway-above-one": _STRAIGHT,
    "rounding/halfway-above-zero": _STRAIGHT,
    "rounding/subnormal-range-error": (("std::stof", "std-stof"),),
    "rounding/halfway-below-rounds-up": _STRAIGHT,
    "rounding/halfway-below-smallest-normal": _STRAIGHT,
    "rounding/halfway-between-subnormals": _STRAIGHT,
    "rounding/halfway-spellings": _STRAIGHT,
    "rounding/integer-below-overflow-halfway": _STRAIGHT,
    "rounding/integer-past-2-53": _STRAIGHT,
    "rounding/integer-past-2-60": _STRAIGHT,
    "rounding/integer-past-2-64": (
        *_STRAIGHT,
        ("a 64-bit integer reader, which overflows", "huge-integer-bad-request"),
    ),
    "rounding/many-digits-sent-as-written": _STRAIGHT,
    "rounding/negative-zero-spellings": (
        (
            "a sign test on the text, or on the float64 before it is rounded",
            "range-checked-before-narrowing",
        ),
    ),
    "rounding/tiny-negative-reads-as-zero": _STRAIGHT,
    # -- the ring --------------------------------------------------------------------------------
    "ring/empty-attention-advances": (
        ("an empty list treated like null", "empty-attention-as-null"),
        ("chronological summation from the cursor", "chronological-order"),
    ),
    "ring/obs-window-one": (("an off-by-one window that keeps two steps", "window-one-long"),),
    "ring/stale-history-on-slot-reuse": (
        ("the row of an evicted position", "stale-history-on-reuse"),
        ("the row compaction leaves behind", "stale-row-after-compaction"),
    ),
    "ring/wrap-around": (
        ("a ring that never wraps (cumulative scores", "cumulative-sums"),
        ("a cursor that sticks on the last slot", "cursor-sticks-at-end"),
    ),
    # -- summation -------------------------------------------------------------------------------
    "summation/chronological-order-trap": (
        ("chronological order from the cursor", "chronological-order"),
        ("a running sum", "running-sum"),
        ("reversed order", "reversed-slot-order"),
    ),
    "summation/float32-accumulation-trap": (
        ("float32 accumulation", "float32-accumulation"),
        ("sums stored as float32", "sums-stored-as-float32"),
    ),
    "summation/float32-accumulator-trap": (("a float32 accumulator", "float32-accumulation"),),
    "summation/kahan-trap": (("Kahan (compensated) summation", "kahan-summation"),),
    "summation/mean-over-window-trap": (("scores taken as the window's mean", "mean-over-window"),),
    "summation/pairwise-trap": (
        ("pairwise summation", "pairwise-summation"),
        ("reversed order", "reversed-slot-order"),
        ("Kahan compensation", "kahan-summation"),
    ),
    "summation/reversed-order-trap": (
        ("reversed slot order", "reversed-slot-order"),
        ("Kahan compensation", "kahan-summation"),
    ),
    "summation/running-sum-trap": (("a running sum kept across steps", "running-sum"),),
    "summation/window-mean-in-float32-trap": (
        ("kvpress's SnapKVPress scoring in float32", "kvpress-snapkv"),
    ),
    **{f"summation/window-{obs}-trap": _window_trap(obs) for obs in TRAP_WINDOWS},
    # -- ties ------------------------------------------------------------------------------------
    **{
        f"ties/group-of-{group}-after-higher": (
            *_UNSTABLE,
            ("a topk of the keepers", "torch-topk-keepers"),
        )
        for group in TIE_GROUPS
    },
    **{
        f"ties/all-equal-{group}": (
            ("a topk of the keepers", "topk-keepers"),
            ("another unstable selection that reorders equal keys", "torch-topk-smallest"),
        )
        for group in (17, 129, 1025)
    },
    **{
        f"ties/block-straddling-kth-{group}": (
            *_UNSTABLE,
            ("a bounded heap keyed on the score alone", "heap-select-by-pooled"),
        )
        for group in (33, 1025)
    },
    **{
        f"ties/pooled-group-of-{group}": (
            *_UNSTABLE,
            ("ties among pooled scores broken by the raw sum", "ties-by-raw-sum"),
        )
        for group in (129, 1025)
    },
    "ties/lower-position-first": (
        ("ties broken toward the higher position", "ties-to-higher-position"),
    ),
    "ties/many-candidates": (
        ("ties broken toward the higher position", "ties-to-higher-position"),
        ("a topk of the keepers", "topk-keepers"),
        ("one victim per call", "one-victim-per-evict"),
    ),
    # argpartition with kth 0 is a plain minimum in numpy's portable code, which the catalogue
    # models; only SIMD builds break this tie otherwise, so the catalogue cannot name it here.
    "ties/one-victim-among-1025": (
        ("the first index of numpy's default argsort", "unstable-argsort"),
    ),
    "ties/pooled-not-raw": (("ties broken by the raw (unpooled) sum", "ties-by-raw-sum"),),
    # -- weights ---------------------------------------------------------------------------------
    "weights/half-precision-history": (
        ("history stored as float16", "float16-history"),
        ("or bfloat16", "bfloat16-history"),
    ),
    "weights/integer-literals": (
        (
            "requires a decimal point or a float type for weights, and refuses",
            "integer-weights-refused",
        ),
        ("or misreads integers", "integer-weights-as-zero"),
    ),
    "weights/negative-zero": (
        ("-0.0 refused by a sign-bit test", "negative-zero-refused"),
        ("sums started from -0.0", "negative-zero-ranked-lower"),
    ),
    "weights/largest-subnormal": (
        ("subnormals flushed to zero (FTZ/DAZ", "flush-subnormals"),
        ("fast-math builds", "c-template-fast-math"),
    ),
    "weights/subnormal": (
        ("subnormals flushed to zero (FTZ/DAZ", "flush-subnormals"),
        ("fast-math builds", "c-template-fast-math"),
    ),
    "weights/sums-beyond-float32": (
        ("sums accumulated or stored in float32", "float32-accumulation"),
        ("sums accumulated or stored in float32", "sums-stored-as-float32"),
        ("weight checks that refuse the float32 maximum", "float32-max-refused"),
    ),
    # -- workloads -------------------------------------------------------------------------------
    "workload/heavy-hitter-epochs-budget-8": (
        ("a cursor that loses its place", "cursor-sticks-at-end"),
        ("a cursor that loses its place", "cursor-reset-on-evict"),
        ("storage reuse that keeps stale history", "stale-history-on-reuse"),
    ),
    "workload/heavy-hitter-epochs-budget-16-kernel-7": (
        ("an off-by-one pooling radius at kernel 7", "radius-one-too-wide"),
        ("an off-by-one pooling radius at kernel 7", "radius-one-too-narrow"),
    ),
    "workload/heavy-hitter-epochs-tova": (
        ("a second ring slot", "window-one-long"),
        ("pooling left on at kernel 1", "pooling-at-kernel-one"),
    ),
    "workload/noisy-attention-gaps-and-nulls": (
        ("a null vector that advances the ring", "null-advances-ring"),
        ("or writes zeros", "null-writes-zeros"),
        ("indices derived from positions", "positions-as-indices"),
        ("one victim per call", "one-victim-per-evict"),
    ),
    "workload/noisy-attention-window-8": (
        ("a window of the wrong length", "window-one-long"),
        ("a window of the wrong length", "window-one-short"),
    ),
    "workload/phrase-runs-evict-every-4": (
        ("one victim per call", "one-victim-per-evict"),
        ("victims in rank order", "victims-in-rank-order"),
        ("ties broken toward the higher position", "ties-to-higher-position"),
    ),
    "workload/phrase-runs-kernel-5": (
        ("pooling over position numbers after holes open", "pool-over-position-numbers"),
        ("forward-only", "forward-only-pooling"),
        ("average pooling", "average-pooling"),
        ("recent entries left out of pooling", "recent-excluded-from-pooling"),
    ),
    # -- the traps of catalogued mistakes no other vector names ----------------------------------
    **{f"mutant-traps/{name}": ((f"{name}:", name),) for name in TRAPPED},
    "mutant-traps/openvino-norm-sum": (
        ("openvino-norm-sum:", "openvino-norm-sum"),
        ("divided by the number of steps it has lived", "norm-by-age"),
    ),
    "mutant-traps/pool-then-sum": (
        ("pool-then-sum:", "pool-then-sum"),
        ("max-pooling each step's attention row", "pool-rows-on-arrival"),
    ),
}

#: Vectors whose "Catches:" text names no particular mistake, and why.
GENERIC: dict[str, str] = {
    # Vectors built for the slip catalogue (conformance/slips): their text names a reader's or
    # a policy's slip that the mutant catalogue does not model; `snapkv-conformance mutants
    # --slips` scores them (the slip's name in brackets).
    **{
        vector: f"names a slip the mutant catalogue does not model ({slip_name})"
        for vector, slip_name in (
            ("params/integer-reader-boundaries", "params-int32, params-uint64"),
            ("params/negative-zero-is-zero", "negative-zero-not-an-integer"),
            ("position/integer-reader-boundaries", "positions-uint32"),
            ("ring/evict-keeps-slots", "rings-rotated-at-evict"),
            ("rounding/reader-extremes", "underflow-refused, mantissa-in-64-bits"),
            ("summation/resum-after-cursor-wraps", "running-sum-until-own-wrap"),
            ("ties/one-ulp-apart", "epsilon-ties"),
            ("ties/seed-changes-nothing", "seed-breaks-ties"),
            ("weights/integer-literals-at-reader-boundaries", "integer-weights-int32, -int64"),
        )
    },
    **{
        f"random/seed-{seed:02d}": "a random mix that shows almost any wrong step somewhere"
        for seed in range(1, 13)
    },
    # The recorded traces' text is written by conformance/tools/record: it describes the ports a
    # real trace shows up (those that pass synthetic weights), not mistakes it is built for.
    **{
        f"real/{name}": "a recorded trace: it names the kind of port it shows up, not a mistake"
        for name in (
            "alice-b128-k1-w16",
            "alice-b128-k7-w16",
            "alice-b128-k7-w256",
            "alice-b64-k1-w16",
            "alice-b64-k7-w16",
        )
    },
}

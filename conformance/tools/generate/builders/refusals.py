"""Refusals: every rule of construction (SPEC.md §2.1), position (§2.3 rule 1) and attention
(§2.3 rule 2), each in a vector of its own so that a failure names the rule.

Position and attention refusals are followed by calls that must succeed, so a port that
refuses correctly but then misbehaves (or refuses too much) is caught in the same vector.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.policy.reference import FLOAT32_MAX
from conformance.tools.generate.builders import Draft, builder, params

GOOD = params(4, 1, 2, 3)
#: For refusals followed by calls that must succeed: small enough that the final evict has a
#: victim, which shows the refused call changed nothing.
SMALL = params(3, 1, 2, 3)


def _with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def _refused(slug: str, raw: Any, seed: Any = 0, *, pins: str, catches: str) -> Draft:
    """A vector whose only call is a ``new`` the reference must refuse with invalid-params."""
    return Draft(
        f"params/{slug}",
        pins=pins,
        catches=catches,
        tags=("params",),
        params=raw,
        seed=seed,
        refuse="invalid-params",
    )


@builder
def params_refused() -> Iterator[Draft]:
    yield _refused(
        "budget-zero",
        _with(budget=0, recentWindow=0),
        pins="budget 0 is refused with invalid-params (budget >= 1).",
        catches="a budget checked only through 0 <= recentWindow <= budget, which allows 0 "
        "and would evict everything on every call.",
    )
    yield _refused(
        "budget-negative",
        _with(budget=-4),
        pins="A negative budget is refused with invalid-params.",
        catches="parameters read into unsigned integers with no upper bound, where -4 becomes "
        "a huge budget.",
    )
    yield _refused(
        "budget-above-int31",
        _with(budget=2**31),
        pins="budget 2^31 is refused: every parameter is at most 2^31 - 1.",
        catches="a missing upper bound in 64-bit code.",
    )
    yield _refused(
        "recent-window-equals-budget",
        _with(recentWindow=4),
        pins="recentWindow equal to budget is refused (recentWindow < budget).",
        catches="recentWindow = budget accepted (an off-by-one <=), which protects every position.",
    )
    yield _refused(
        "recent-window-above-budget",
        _with(recentWindow=5),
        pins="recentWindow greater than budget is refused.",
        catches="no check of recentWindow against budget at all.",
    )
    yield _refused(
        "recent-window-negative",
        _with(recentWindow=-1),
        pins="A negative recentWindow is refused.",
        catches="a recentWindow checked only against the budget, so that -1 passes and "
        "kept[:-recentWindow] slices with a negative count.",
    )
    yield _refused(
        "obs-window-zero",
        _with(obsWindow=0),
        pins="obsWindow 0 is refused (obsWindow >= 1).",
        catches="a zero window accepted, leaving a ring with no slot (a modulo by zero on the "
        "first write).",
    )
    yield _refused(
        "obs-window-negative",
        _with(obsWindow=-2),
        pins="A negative obsWindow is refused.",
        catches="a window read as unsigned (with no upper bound, -2 becomes a huge window) or "
        "used as a negative array size.",
    )
    yield _refused(
        "obs-window-above-int31",
        _with(obsWindow=2**31),
        pins="obsWindow 2^31 is refused: every parameter is at most 2^31 - 1.",
        catches="a missing upper bound on obsWindow in 64-bit code.",
    )
    yield _refused(
        "pool-kernel-even",
        _with(poolKernel=4),
        pins="An even poolKernel (4) is refused: an even kernel has no centre.",
        catches="the even kernel accepted, so pooling leans one way along the sequence.",
    )
    yield _refused(
        "pool-kernel-zero",
        _with(poolKernel=0),
        pins="poolKernel 0 is refused (odd and >= 1).",
        catches="a kernel checked only for its sign (k >= 0), or not at all.",
    )
    yield _refused(
        "pool-kernel-negative-odd",
        _with(poolKernel=-1),
        pins="poolKernel -1 is refused although it is odd (poolKernel >= 1).",
        catches="an oddness test alone: -1 % 2 is 1 in Python and -1 in C, so -1 slips through "
        "one of them.",
    )
    yield _refused(
        "pool-kernel-above-int31-odd",
        _with(poolKernel=2**31 + 1),
        pins="poolKernel 2^31 + 1 is refused although it is odd: every parameter is at most 2^31 "
        "- 1.",
        catches="a missing upper bound in 64-bit code (an oddness test lets 2^31 + 1 through).",
    )
    yield _refused(
        "budget-fraction",
        _with(budget=4.5),
        pins="A non-integral budget (4.5) is refused.",
        catches="a fractional parameter truncated to an integer by the JSON reader or a cast.",
    )
    yield _refused(
        "budget-string",
        _with(budget="4"),
        pins='A budget written as a string ("4") is refused.',
        catches="strings coerced to numbers, as loose JSON bindings do.",
    )
    yield _refused(
        "budget-boolean",
        _with(budget=True, recentWindow=0),
        pins="A boolean budget (true) is refused.",
        catches="booleans read as 1, as in Python (bool is an int) or JavaScript.",
    )
    yield _refused(
        "budget-null",
        _with(budget=None),
        pins="A null budget is refused.",
        catches="null read as 'use the default' (budget 512).",
    )
    yield _refused(
        "recent-window-null",
        _with(recentWindow=None),
        pins="A null recentWindow is refused.",
        catches="null read as 0 (a nullable integer given its zero value), which is a valid "
        "recentWindow.",
    )
    yield _refused(
        "missing-pool-kernel",
        {k: v for k, v in GOOD.items() if k != "poolKernel"},
        pins="params without poolKernel is refused: there are no defaults in a vector.",
        catches="a missing name filled from the CLI default (poolKernel 7).",
    )
    yield _refused(
        "extra-field",
        {**GOOD, "sinkTokens": 4},
        pins="params with an unknown name (sinkTokens) is refused.",
        catches="unknown parameters silently ignored, hiding a caller's typo or another policy's "
        "setting.",
    )
    yield _refused(
        "snake-case-names",
        {"budget": 32, "recent_window": 1, "obs_window": 2, "pool_kernel": 3},
        pins="params spelt in snake_case is refused: the names are budget, recentWindow, "
        "obsWindow and "
        "poolKernel.",
        catches="a port that accepts its own language's spelling, or ignores unknown names and "
        "falls back "
        "to defaults.",
    )
    yield _refused(
        "names-in-other-case",
        {"BUDGET": 4, "recentwindow": 1, "ObsWindow": 2, "poolkernel": 3},
        pins="params whose names differ from budget, recentWindow, obsWindow and poolKernel "
        "only in case is refused: names are matched exactly.",
        catches="names matched case-insensitively: Go's encoding/json does exactly this when "
        "it decodes into a struct, and so does a lower-cased dictionary lookup.",
    )
    yield _refused(
        "one-name-in-other-case",
        {**{k: v for k, v in GOOD.items() if k != "recentWindow"}, "RecentWindow": 1},
        pins="params with every name right but RecentWindow (capital R) is refused.",
        catches="names matched case-insensitively (Go's encoding/json into a struct).",
    )
    yield _refused(
        "not-an-object",
        [4, 1, 2, 3],
        pins="params given as a list is refused.",
        catches="positional parameters accepted in place of the named object.",
    )
    yield _refused(
        "seed-string",
        GOOD,
        "0",
        pins="A seed written as a string is refused with invalid-params.",
        catches="an unused seed never validated.",
    )
    yield _refused(
        "seed-fraction",
        GOOD,
        0.5,
        pins="A non-integral seed (0.5) is refused with invalid-params.",
        catches="an unused seed never validated, or truncated by a cast.",
    )


def _prefix(draft: Draft, count: int) -> Draft:
    """``count`` steps admitting positions ``0 .. count - 1``, each giving every kept position
    some attention (position ``p`` gets ``0.25 * (p + 1)``)."""
    for pos in range(count):
        draft.attend(pos, {p: 0.25 * (p + 1) for p in range(pos)})
    return draft


@builder
def positions_refused() -> Iterator[Draft]:
    tags = ("position",)
    yield (
        _prefix(
            Draft(
                "position/equal-to-last",
                pins="A step at the position admitted last (2 after 2) is refused with "
                "invalid-position; the next step, at 3, succeeds.",
                catches="a >= instead of > in the ordering check, admitting the same position "
                "twice.",
                tags=tags,
                params=SMALL,
            ),
            3,
        )
        .refuse_step("invalid-position", 2, [0.5, 0.5, 0.5])
        .step(3, [0.5, 0.5, 0.5])
        .evict()
    )
    yield (
        Draft(
            "position/decreasing",
            pins="A step at a position below the last admitted (1 after 4) is refused with "
            "invalid-position.",
            catches="positions kept in a sorted set without an ordering check, so an old "
            "position is inserted in the middle.",
            tags=(*tags, "gaps"),
            params=SMALL,
        )
        .nulls([0, 2, 4])
        .refuse_step("invalid-position", 1, None)
        .step(5, None)
        .evict()
    )
    yield (
        Draft(
            "position/negative",
            pins="A first step at position -1 is refused; the first position may then be 0.",
            catches="positions read as signed without a lower bound, or -1 taken as 'before 0' "
            "and admitted.",
            tags=tags,
            params=SMALL,
        )
        .refuse_step("invalid-position", -1, [])
        .step(0, [])
        .step(1, [1.0])
        .evict()
    )
    yield (
        Draft(
            "position/boolean-or-null-first",
            pins="null, false and true are not positions, not even for the first step: each "
            "is refused with invalid-position, and the first position may then be 0.",
            catches="booleans and null read as 1 and 0 (JavaScript's Number(), Python's bool, a "
            "nullable integer's zero value), which a first step would admit.",
            tags=tags,
            params=SMALL,
        )
        .refuse_step("invalid-position", None, [])
        .refuse_step("invalid-position", False, [])
        .refuse_step("invalid-position", True, [])
        .step(0, [])
        .step(1, [1.0])
        .evict()
    )
    yield (
        Draft(
            "position/above-int31",
            pins="Position 2^31 is refused: positions are at most 2^31 - 1.",
            catches="a missing upper bound in 64-bit code (a uint32 position).",
            tags=(*tags, "large-positions"),
            params=SMALL,
        )
        .step(0, [])
        .refuse_step("invalid-position", 2**31, [1.0])
        .step(1, [1.0])
        .evict()
    )
    yield (
        _prefix(
            Draft(
                "position/not-an-integer",
                pins="A position that is not a JSON integer is refused with invalid-position: a "
                'string "3", a fraction 3.5, true, null and a list.',
                catches="positions coerced from strings or truncated from fractions.",
                tags=tags,
                params=SMALL,
            ),
            3,
        )
        .refuse_step("invalid-position", "3", None)
        .refuse_step("invalid-position", 3.5, None)
        .refuse_step("invalid-position", True, None)
        .refuse_step("invalid-position", None, None)
        .refuse_step("invalid-position", [3], None)
        .step(3, None)
        .evict()
    )
    yield (
        Draft(
            "position/equal-to-evicted",
            pins="The order rule counts every admitted position, evicted ones included: after "
            "the last admitted position (3) is evicted, a step at 3 is still refused, and so is 2.",
            catches="the ordering checked against the highest kept position instead of the "
            "highest admitted, which readmits an evicted position.",
            tags=tags,
            params=params(3, 0, 2, 1),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 1.0})
        .attend(3, {0: 1.0, 1: 1.0, 2: 1.0})
        .evict()
        .refuse_step("invalid-position", 3, None)
        .refuse_step("invalid-position", 2, None)
        .step(4, None)
        .evict()
    )
    yield (
        Draft(
            "position/judged-before-attention",
            pins="A step whose position and attention are both wrong is refused with "
            "invalid-position: the position is judged first.",
            catches="the attention validated before the position, reporting invalid-attention.",
            tags=(*tags, "judgement-order"),
            params=SMALL,
        )
        .step(0, [])
        .step(1, [1.0])
        .refuse_step("invalid-position", 1, [1.0])
        .evict()
    )


def _attention(slug: str, pins: str, catches: str, bad: Any, tags: tuple[str, ...] = ()) -> Draft:
    """Three kept positions, one refused step carrying ``bad``, then a step and an evict that
    must succeed (so the refusal changed nothing)."""
    draft = Draft(
        f"attention/{slug}",
        pins=pins,
        catches=catches,
        tags=("attention", *tags),
        params=SMALL,
    )
    _prefix(draft, 3)
    draft.refuse_step("invalid-attention", 3, bad)
    return draft.step(3, [0.5, 0.25, 1.0]).evict()


@builder
def attention_refused() -> Iterator[Draft]:
    beyond_midpoint = 3.4028235677973366e38  # FLT_MAX + half an ulp: rounds (to even) to inf
    yield _attention(
        "too-short",
        "With 3 positions kept, a list of 2 weights is refused with invalid-attention.",
        "missing weights padded with zeros, or the list zipped with the kept entries.",
        [0.5, 0.5],
    )
    yield _attention(
        "too-long-counts-the-new-position",
        "With 3 positions kept, a list of 4 weights (one for the position being admitted) "
        "is refused: the length is len(kept) before this step's admission.",
        "the length checked against the count after admission, or extra weights ignored.",
        [0.5, 0.5, 0.5, 0.5],
    )
    yield (
        Draft(
            "attention/non-empty-before-any-position",
            pins="The first step, with nothing kept, must carry [] or null; [0.5] is refused.",
            catches="a length check that skips the empty case, or weights for the new position.",
            tags=("attention",),
            params=SMALL,
        )
        .refuse_step("invalid-attention", 0, [0.5])
        .step(0, [])
        .step(1, [0.5])
        .evict()
    )
    yield _attention(
        "negative",
        "A negative weight (-0.5) is refused with invalid-attention.",
        "negative weights accepted (no sign check), which would let attention lower a score.",
        [0.5, -0.5, 0.5],
    )
    yield _attention(
        "negative-subnormal",
        "The negative subnormal -2^-149 is refused: it narrows to a negative float32, not to -0.0.",
        "subnormals flushed to zero before the sign check (FTZ/DAZ), turning it into an "
        "accepted -0.0.",
        [0.5, -(2.0**-149), 0.5],
        ("float-edge",),
    )
    yield _attention(
        "beyond-float32",
        "A weight of 1e39, finite as a float64 but beyond the float32 range, is refused.",
        "weights kept as float64 without the float32 narrowing, or narrowed to inf and accepted.",
        [0.5, 1e39, 0.5],
    )
    yield _attention(
        "float32-rounding-midpoint",
        f"The float64 {beyond_midpoint!r}, exactly halfway between the float32 maximum "
        f"({FLOAT32_MAX!r}) and 2^128, rounds to even, which is infinity: refused.",
        "narrowing by truncation (round toward zero), or parsing the decimal straight to "
        "float32 (strtof, parse::<f32>, ParseFloat(s, 32)), which sees this shortest decimal "
        "just below the midpoint: both yield the float32 maximum and accept the weight.",
        [0.5, beyond_midpoint, 0.5],
        ("float-edge",),
    )
    yield _attention(
        "huge-integer-literal",
        "An integer literal of 40 digits (10^39) is a number beyond the float32 range: "
        "refused with invalid-attention.",
        "an overlong integer overflowing a 64-bit JSON reader into a wrong but finite weight, "
        "or failing as bad-request.",
        [0.5, 10**39, 0.5],
    )
    yield _attention(
        "string-weight",
        'A weight written as a string ("0.5") is refused with invalid-attention.',
        "strings coerced to numbers.",
        [0.5, "0.5", 0.5],
    )
    yield _attention(
        "boolean-weight",
        "A boolean weight (true) is refused with invalid-attention.",
        "booleans read as 1.0, as in Python and JavaScript.",
        [0.5, True, 0.5],
    )
    yield _attention(
        "null-weight",
        "A null inside the list is refused with invalid-attention (only the whole attn may be "
        "null).",
        "null weights read as 0 or NaN.",
        [0.5, None, 0.5],
    )
    yield _attention(
        "nested-list",
        "A list inside the attention list is refused with invalid-attention.",
        "a reader that flattens nested arrays or takes their first element.",
        [0.5, [0.5], 0.5],
    )
    yield _attention(
        "not-a-list",
        "An attn that is neither null nor a list (a bare number) is refused with "
        "invalid-attention.",
        "a scalar broadcast to every kept position.",
        0.5,
    )
    yield _attention(
        "object",
        "An attn given as an object mapping positions to weights is refused.",
        "a port that accepts a sparse {position: weight} map in place of the list.",
        {"0": 0.5, "1": 0.5, "2": 0.5},
    )

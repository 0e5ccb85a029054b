"""Numbers as real readers read them (SPEC.md §1 [S1-integers], §2.3 [S2.3-rounding]): integers
at the boundaries of 32- and 64-bit readers, signed and unsigned, ``-0``, and decimals at the
extremes of a float64 reader (underflow, overflow, long mantissas, exponents past 32 bits).

Each vector is built so that a reader making the slip answers otherwise: a wrapped parameter or
position falls inside its range and is accepted, a wrapped weight changes which position is
evicted, an underflow refused turns an accepted step into a refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.spec.protocol import NumberText
from conformance.tools.generate.builders import Draft, builder, params

GOOD = params(4, 1, 2, 1)
#: Values that a 32-bit or 64-bit reader, signed or unsigned, or a float64 reader, brings into
#: a small valid range: 2^32 + k and 2^64 + k wrap to k, -(2^32) + k wraps to k in 32 bits,
#: 2^63 + k overflows a signed 64-bit reader, 2^53 + 1 rounds in a float64.
WRAPPING = (2**32 + 4, 2**64 + 4, -(2**32) + 4, 2**63 + 4, -(2**64) + 4, 2**53 + 1)


@builder
def integer_readers() -> Iterator[Draft]:
    draft = Draft(
        "params/integer-reader-boundaries",
        pins="A later new whose budget, obsWindow or poolKernel is 2^32 + k, 2^64 + k, "
        "-(2^32) + k, 2^63 + k or -(2^64) + k (each k in range) is refused with "
        "invalid-params, and so is a recentWindow of 2^32 or 2^64; the policy before them stays, "
        "so the evict takes the victim it would have taken.",
        catches="parameters read into 32- or 64-bit integers that wrap (uint32_t, u64, Go's "
        "int32 conversion) or saturate, so that 2^32 + 4 becomes 4 and the new is accepted, "
        "replacing the policy.",
        tags=("params", "integer-readers", "lifecycle"),
        params=GOOD,
    )
    draft.step(0, []).step(1, [1.0]).step(2, [0.5, 2.0])
    for value in WRAPPING:
        draft.new({**GOOD, "budget": value, "recentWindow": 0}, refuse="invalid-params")
        draft.new({**GOOD, "obsWindow": value}, refuse="invalid-params")
        draft.new({**GOOD, "poolKernel": value | 1}, refuse="invalid-params")
    for value in (2**32, 2**64, -(2**32), -(2**64)):
        draft.new({**GOOD, "recentWindow": value}, refuse="invalid-params")
    yield draft.step(3, [0.25, 0.5, 0.75]).step(4, [1.0, 1.0, 1.0, 1.0]).evict()

    negative_zero = NumberText("-0")
    yield (
        Draft(
            "params/negative-zero-is-zero",
            pins="-0 is the integer 0: a new with recentWindow -0 and seed -0 is accepted and "
            "protects nothing, so the newest position can be evicted; a first step at "
            "position -0 admits position 0.",
            catches="-0 read as a float (-0.0) and refused as not an integer, or as a negative "
            "number out of range.",
            tags=("params", "integer-readers", "recent-window"),
            params={**params(1, 0, 1, 1), "recentWindow": negative_zero},
            seed=negative_zero,
        )
        .step(negative_zero, [])
        .step(1, [1.0])
        .evict()
    )

    draft = Draft(
        "position/integer-reader-boundaries",
        pins="Positions 2^32 + 1, 2^64 + 1, -(2^32) + 1, 2^63 + 1, -(2^64) + 1, 2^53 + 1, "
        "-2^31 and -2^63 are each refused with invalid-position after position 0, and change "
        "nothing: position 1 is then admitted and the evict takes position 0.",
        catches="positions read into 32- or 64-bit integers that wrap (2^32 + 1 becomes 1 and is "
        "admitted) or into a float64 (2^53 + 1 rounds), or refused as bad-request when they "
        "overflow the reader.",
        tags=("position", "integer-readers", "large-positions"),
        params=params(1, 0, 1, 1),
    )
    draft.step(0, [])
    for value in (2**32 + 1, 2**64 + 1, -(2**32) + 1, 2**63 + 1, -(2**64) + 1, 2**53 + 1):
        draft.refuse_step("invalid-position", value, [1.0])
    for value in (-(2**31), -(2**63)):
        draft.refuse_step("invalid-position", value, [1.0])
    yield draft.step(1, [0.5]).evict()

    yield (
        Draft(
            "lifecycle/refused-seed-keeps-policy",
            pins='Later news whose seed is true, false, "0", 1.5, null, a list or an object are '
            "each refused with invalid-params and leave the policy in place: the evict takes "
            "the victim it would have taken.",
            catches="a seed never validated because it is never used (true read as 1, a "
            "string coerced, null taken as the default), so that the refused new replaces the "
            "policy.",
            tags=("params", "lifecycle"),
            params=GOOD,
        )
        .step(0, [])
        .step(1, [1.0])
        .step(2, [0.5, 2.0])
        .new(GOOD, True, refuse="invalid-params")
        .new(GOOD, False, refuse="invalid-params")
        .new(GOOD, "0", refuse="invalid-params")
        .new(GOOD, 1.5, refuse="invalid-params")
        .new(GOOD, None, refuse="invalid-params")
        .new(GOOD, [0], refuse="invalid-params")
        .new(GOOD, {"seed": 0}, refuse="invalid-params")
        .step(3, [0.25, 0.5, 0.75])
        .step(4, [1.0, 1.0, 1.0, 1.0])
        .evict()
    )

    powers = (2**31, 2**32, 2**53, 2**63, 2**64)
    duel: list[Any] = [*powers, 1]
    yield (
        Draft(
            "weights/integer-literals-at-reader-boundaries",
            pins="Weights written as the integer literals 2^31, 2^32, 2^53, 2^63 and 2^64 are "
            "those numbers: positions 0 to 4 receive them and position 5 receives 1, so "
            "position 5 is evicted.",
            catches="integer weights read into a 32- or 64-bit integer before the float: 2^31 "
            "wraps negative (refused), 2^32 and 2^64 wrap to 0 and 2^63 overflows, so one of "
            "positions 0 to 4 is evicted instead, or the step refused.",
            tags=("attention", "integer-readers"),
            params=params(6, 1, 1, 1),
        )
        .nulls(range(6))
        .step(6, duel)
        .evict()
    )


def _duel(draft: Draft, low: Any, high: Any) -> Draft:
    """A fresh policy whose positions 0 and 1 receive ``low`` and ``high`` in one step, with
    position 2 protected: the evict takes 0 when ``low`` reads below ``high``, else 1 (ties go
    to the lower position)."""
    return draft.new(params(2, 1, 1, 1)).nulls([0, 1]).step(2, [low, high]).evict()


@builder
def float_readers() -> Iterator[Draft]:
    text = NumberText
    draft = Draft(
        "rounding/reader-extremes",
        pins="Weights at the extremes of a float64 reader are read by SPEC.md §2.3: 1e-400, "
        "5e-324 and -1e-400 underflow to zero (accepted, and the lower score); the 20-digit "
        "mantissas 18446744073709551617e-19 and 1.8446744073709551617 are about 1.84, not "
        "1e-19. (Exponents past 2^31 are the protocol check protocol/number-beyond-float64's.)",
        catches="a reader that refuses a decimal whose float64 underflows (C's strtod "
        "setting ERANGE taken as an error), or a hand-written reader that accumulates the "
        "mantissa in a 64-bit integer (it wraps past 19 digits).",
        tags=("double-rounding", "attention", "float-edge"),
        params=params(2, 1, 1, 1),
    )
    draft.nulls([0, 1]).step(2, [text("1e-400"), 1.0]).evict()
    _duel(draft, text("5e-324"), 1.0)
    _duel(draft, text("-1e-400"), 1.0)
    _duel(draft, 1.0, text("18446744073709551617e-19"))
    _duel(draft, 1.0, text("1.8446744073709551617"))
    yield draft


@builder
def near_ties() -> Iterator[Draft]:
    one_up = 1.0000001192092896  # the float32 after 1.0
    draft = Draft(
        "ties/one-ulp-apart",
        pins="Pooled scores one float32 ulp apart (1 + 2^-23 at position 0, 1 at position 1) "
        "and one float64 ulp apart (1 + 2^-52 from the slot-order sum 2^-53 + 2^-53 + 1 at "
        "position 0, 1 at position 1) are not ties: position 1, the lower score, is evicted "
        "both times.",
        catches="scores compared with a tolerance (an absolute or relative epsilon, "
        "math.isclose, numpy.isclose) that calls them equal and evicts the lower position.",
        tags=("ties", "summation"),
        params=params(2, 1, 1, 1),
    )
    draft.nulls([0, 1]).step(2, [one_up, 1.0]).evict()
    tiny = 2.0**-53
    draft.new(params(2, 1, 3, 1)).nulls([0, 1])
    draft.step(2, [tiny, 1.0]).step(3, [tiny, 0.0, 0.0]).step(4, [1.0, 0.0, 0.0, 0.0])
    yield draft.evict()


@builder
def resum() -> Iterator[Draft]:
    tiny = 2.0**-53
    yield (
        Draft(
            "summation/resum-after-cursor-wraps",
            pins="Position 1 is admitted while the cursor is on slot 2 of 4 and written in "
            "slots 2, 3 and 0 (2^-53, 1, 2^-53): its sum in slot order is "
            "2^-53 + 2^-53 + 1 = 1 + 2^-52, above position 2's 1, so positions 2 and 3 are "
            "evicted. "
            "Its ring has been written three times, not four: the cursor's return to slot 0 "
            "is what ends adding the weights as they arrive (which gives 1 and a tie).",
            catches="a running sum per position kept until the position's own ring has been "
            "written obsWindow times (or until the first overwrite), rather than until the "
            "cursor passes from the last slot back to 0.",
            tags=("summation", "ring"),
            params=params(4, 2, 4, 1),
        )
        .step(0, [])
        .step(1, [0.0])
        .step(2, [4.0, tiny])
        .step(3, [4.0, 1.0, 1.0])
        .step(4, [4.0, tiny, 0.0, 0.0])
        .step(5, None)
        .evict()
    )


@builder
def evict_leaves_rings() -> Iterator[Draft]:
    tiny = 2.0**-53
    yield (
        Draft(
            "ring/evict-keeps-slots",
            pins="Position 1 is written in slots 1, 2 and 0 (2^-53, 1, 2^-53) and position 2 "
            "sums to 1. The first evict takes position 0 while the cursor is on slot 1; "
            "afterwards position 1 still sums in slot order to 1 + 2^-52, so the second evict "
            "takes position 2.",
            catches="an evict that compacts the rings and rotates each survivor to "
            "chronological order (numpy.roll, a rebuilt ring buffer) with the cursor reset to "
            "0: position 1 then sums 2^-53 + 1 + 2^-53 = 1, ties with position 2 and goes "
            "first.",
            tags=("ring", "summation"),
            params=params(4, 2, 3, 1),
        )
        .step(0, [])
        .step(1, None)
        .step(2, [0.0, tiny])
        .step(3, [0.0, 1.0, 1.0])
        .step(4, [0.0, tiny, 0.0, 4.0])
        .evict()
        .step(5, None)
        .evict()
    )


@builder
def seeded_ties() -> Iterator[Draft]:
    draft = Draft(
        "ties/seed-changes-nothing",
        pins="With seed 2^31 - 1, as with seed 0, equal pooled scores evict the lower "
        "position: positions 0 and 1 both score 0 and position 0 goes; then under seed 12345 "
        "the same.",
        catches="a seed used after all: a random generator seeded from it that shuffles or "
        "breaks ties, so that any seed but 0 evicts another position.",
        tags=("ties", "limits"),
        params=params(2, 1, 1, 1),
        seed=2**31 - 1,
    )
    draft.nulls([0, 1, 2]).evict()
    draft.new(params(2, 1, 1, 1), 12345).nulls([0, 1, 2]).evict()
    yield draft

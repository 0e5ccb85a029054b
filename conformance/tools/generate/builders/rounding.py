"""Reading a weight: nearest float64, then nearest float32, ties to even (SPEC.md §2.3, §2.6).

The weights here are not float32 values; they are chosen for how their decimals round, and the
vectors carry them exactly as written (tag ``double-rounding``, SPEC.md §4.3). Most vectors are
a *rounding duel*: positions 0 and 1 are admitted by null steps, one step gives one of them the
rounding weight R and the other the float32 C that R reads as by the rule, and an evict (budget
2, recentWindow 1, obsWindow 1, poolKernel 1, so positions 0 and 1 are the candidates) must
choose between them: read by the rule they tie, and the lower position, 0, goes. R is placed so
that a reader rounding the decimal once (straight to float32: ``strtof``, ``Float.parseFloat``,
``parse::<f32>``, ``ParseFloat(s, 32)``) evicts position 1 instead: at position 0 when it rounds
R up, at position 1 when it rounds R down. The builder decides the placement with
:func:`conformance.tools.spelling.round_once`; the expectations come from the reference.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from conformance.policy.reference import FLOAT32_MAX, float32_literal
from conformance.spec.protocol import NumberText
from conformance.tools.generate.builders import Draft, builder, params
from conformance.tools.spelling import (
    FLOAT32_SMALLEST_NORMAL,
    FLOAT32_TINIEST,
    exact_text,
    halfway_above,
    nudged,
    respell,
    round_once,
)

TAGS = ("double-rounding", "attention")
DUEL = params(2, 1, 1, 1)
#: A single rounding misreads these; the reference reads 1.0 (the issue that started the theme).
HALFWAY_ABOVE_ONE = "1.0000000596046448"
#: The largest subnormal float32, just below the smallest normal one.
LARGEST_SUBNORMAL = struct.unpack("<f", struct.pack("<I", 0x7FFFFF))[0]


def read_twice(text: str) -> float:
    """How SPEC.md §2.3 reads ``text`` (for the builder's placement; never an expectation)."""
    return float32_literal(float(Decimal(text)))


def placed(text: str, comparison: Any) -> list[Any]:
    """The duel's attention list: R (``text``) and C, R first when one rounding reads it above
    C (so that such a reader evicts position 1, not 0)."""
    rounding = NumberText(text)
    once = round_once(Fraction(Decimal(text)))
    if once == read_twice(text):
        raise ValueError(f"{text} reads the same rounded once and twice")
    return [rounding, comparison] if once > read_twice(text) else [comparison, rounding]


def duel(id: str, text: str, comparison: Any, *, pins: str, catches: str) -> Draft:
    """A rounding duel on ``text`` against ``comparison`` (a float32, as a float or int)."""
    return (
        Draft(id, pins=pins, catches=catches, tags=TAGS, params=DUEL)
        .nulls([0, 1])
        .step(2, placed(text, comparison))
        .evict()
    )


def duels(
    id: str,
    texts: Sequence[str],
    comparison: Any,
    *,
    pins: str,
    catches: str,
    tags: Sequence[str] = TAGS,
    first: bool = False,
) -> Draft:
    """One duel per text, each after a fresh ``new``: weights in several spellings. With
    ``first`` each text is at position 0 (for texts that read the same once and twice, where
    :func:`placed` has no side to choose)."""
    draft = Draft(id, pins=pins, catches=catches, tags=tags, params=DUEL)
    for index, text in enumerate(texts):
        if index:
            draft.new(DUEL)
        attn = [NumberText(text), comparison] if first else placed(text, comparison)
        draft.nulls([0, 1]).step(2, attn).evict()
    return draft


ONCE = (
    "a reader that rounds the decimal straight to float32 (C's strtof, Java's Float.parseFloat, "
    "Rust's parse::<f32>, Go's ParseFloat(s, 32), BigDecimal.floatValue)"
)


@builder
def rounding_halfway() -> Iterator[Draft]:
    yield duel(
        "rounding/halfway-above-one",
        HALFWAY_ABOVE_ONE,
        1,
        pins=f"{HALFWAY_ABOVE_ONE} is a hair above 1 + 2^-24, the float32 halfway point "
        "between 1 and 1 + 2^-23, but its nearest float64 is that halfway point, which rounds "
        "to even: the weight reads as 1, ties position 1's 1, and position 0 is evicted.",
        catches=f"{ONCE}, which reads 1 + 2^-23 and evicts position 1.",
    )
    below_even = halfway_above(1.0 + 2.0**-23)  # 1 + 3 x 2^-24: its even neighbour is above
    yield duel(
        "rounding/halfway-below-rounds-up",
        repr(float(below_even)),
        float32_literal(1.0 + 2.0**-22),
        pins=f"{float(below_even)!r} is a hair below 1 + 3 x 2^-24, halfway between 1 + 2^-23 "
        "and 1 + 2^-22; its nearest float64 is the halfway point, whose tie goes to the even "
        "1 + 2^-22, up: the weight ties position 0's 1 + 2^-22 and position 0 is evicted.",
        catches=f"{ONCE}, which reads 1 + 2^-23 (down) and evicts position 1.",
    )
    spellings = [respell(HALFWAY_ABOVE_ONE, style) for style in (1, 2, 3, 4, 5)]
    yield duels(
        "rounding/halfway-spellings",
        spellings,
        1,
        pins=f"{HALFWAY_ABOVE_ONE} written five more ways ({', '.join(spellings)}): each is "
        "the same decimal, read as 1, and each duel evicts position 0.",
        catches=f"{ONCE}; and a reader that handles only some spellings (a capital E, a signed "
        "exponent, a point moved left, trailing zeros) or reads them through another path.",
    )
    # A halfway point whose shortest float64 decimal lies on its even side: re-encoding this
    # weight from its float64 would hand a single-rounding reader the right answer.
    even_side = halfway_above(1.0 + 6 * 2.0**-23)
    text = nudged(even_side, 1)
    yield duel(
        "rounding/many-digits-sent-as-written",
        text,
        float32_literal(1.0 + 6 * 2.0**-23),
        pins=f"A 41-digit decimal a hair above the float32 halfway point {exact_text(even_side)}: "
        f"its nearest float64 is the halfway point, which rounds to the even float32 below, "
        f"{float32_literal(1.0 + 6 * 2.0**-23)!r}; the runner sends the digits as written "
        "(that float64's shortest decimal, 1.000000774860382, lies below the halfway point and "
        "would not tell the readers apart): position 0 is evicted.",
        catches=f"{ONCE}, which reads the float32 above and evicts position 1; and a runner or "
        "adapter that re-encodes weights from their float64 values.",
    )
    exact = exact_text(halfway_above(1.0))
    yield (
        Draft(
            "rounding/exact-halfway-ties-to-even",
            pins=f"Weights written as exact float32 halfway points round to the even neighbour: "
            f"{exact} reads as 1 (down) and ties position 1's 1, then "
            f"{exact_text(below_even)} reads as 1 + 2^-22 (up) and ties position 0's 1 + 2^-22; "
            "both evicts take position 0.",
            catches="narrowing that rounds halves away from zero (the first duel evicts 1) or "
            "truncates toward zero (the second evicts 1).",
            tags=TAGS,
            params=DUEL,
        )
        .nulls([0, 1])
        .step(2, [NumberText(exact), 1])
        .evict()
        .new(DUEL)
        .nulls([0, 1])
        .step(2, [float32_literal(1.0 + 2.0**-22), NumberText(exact_text(below_even))])
        .evict()
    )


@builder
def rounding_subnormal() -> Iterator[Draft]:
    yield duel(
        "rounding/halfway-above-zero",
        "7.0064923216240854e-46",
        0,
        pins="7.0064923216240854e-46 is a hair above 2^-150, halfway between 0 and the "
        "smallest subnormal 2^-149; its nearest float64 is 2^-150, whose tie goes to the even "
        "0: the weight reads as 0, ties position 1's 0, and position 0 is evicted.",
        catches=f"{ONCE}, which reads 2^-149 and evicts position 1; subnormals flushed to zero "
        "pass, but only by luck.",
    )
    between = halfway_above(FLOAT32_TINIEST)
    yield duel(
        "rounding/halfway-between-subnormals",
        repr(float(between)),
        float32_literal(2.0**-148),
        pins=f"{float(between)!r} is a hair below 3 x 2^-150, halfway between the subnormals "
        "2^-149 and 2^-148; its float64 is the halfway point, whose tie goes to the even "
        "2^-148: the weight ties position 0's 2^-148 and position 0 is evicted.",
        catches=f"{ONCE}, which reads 2^-149 and evicts position 1.",
    )
    boundary = halfway_above(LARGEST_SUBNORMAL)
    text = nudged(boundary, -1)
    yield duel(
        "rounding/halfway-below-smallest-normal",
        text,
        FLOAT32_SMALLEST_NORMAL,
        pins="A decimal a hair below the halfway point between the largest subnormal float32 "
        f"({LARGEST_SUBNORMAL!r}) and the smallest normal one (2^-126): its float64 is the "
        "halfway point, whose tie goes to the even 2^-126, so it ties position 0's 2^-126 and "
        "position 0 is evicted.",
        catches=f"{ONCE}, which reads the largest subnormal and evicts position 1.",
    )

    tiniest = repr(FLOAT32_TINIEST)
    yield duels(
        "rounding/subnormal-range-error",
        [exact_text(Fraction(FLOAT32_TINIEST)), tiniest, "1.1754942807573643e-38"],
        0,
        pins=f"Weights in the subnormal range, each against 0 after a fresh new: the exact "
        f"decimal of 2^-149, its shortest spelling {tiniest}, and 1.1754942807573643e-38, "
        "whose nearest float64 is the midpoint between the largest subnormal and 2^-126 and "
        "reads as 2^-126 (the tie to even); each is accepted and outranks position 1's 0, "
        "which is evicted.",
        catches="std::stof (C++): strtof sets ERANGE when the result is tiny and inexact, even "
        "where it rounds to 2^-126, and std::stof then throws std::out_of_range, answered as a "
        "refused weight, while the exactly written 2^-149 is read without complaint; and a "
        "reader that refuses every subnormal weight.",
        first=True,
    )


@builder
def rounding_negative_zero() -> Iterator[Draft]:
    yield (
        Draft(
            "rounding/tiny-negative-reads-as-zero",
            pins="-7.0064923216240854e-46 is a hair beyond -2^-150; its nearest float64 is "
            "-2^-150, halfway between -0 and -2^-149, whose tie goes to the even -0.0: the "
            "weight is accepted as zero, ties position 1's 0, and position 0 is evicted.",
            catches=f"{ONCE}, which reads -2^-149, a negative weight, and refuses the step.",
            tags=(*TAGS, "float-edge"),
            params=DUEL,
        )
        .nulls([0, 1])
        .step(2, [NumberText("-7.0064923216240854e-46"), 0])
        .evict()
    )
    texts = ["-0", "-0.0", "-0e0", "-0E+5", "-0.000e-3", "-1e-50", "-7.006492321624085e-46"]
    yield duels(
        "rounding/negative-zero-spellings",
        texts,
        0,
        pins=f"Weights that read as -0.0 are accepted as zero, whatever the spelling: "
        f"{', '.join(texts)}. Each ties position 1's 0 and position 0 is evicted.",
        catches="a sign test on the text, or on the float64 before it is rounded to float32 "
        "(-1e-50 < 0), that refuses a weight reading as -0.0; an integer reader that refuses "
        "-0.",
        tags=(*TAGS, "float-edge"),
        first=True,
    )


@builder
def rounding_float32_maximum() -> Iterator[Draft]:
    midpoint = halfway_above(FLOAT32_MAX)
    below = math.nextafter(float(midpoint), 0.0)
    texts = ["3.4028235e38", repr(below), str(int(FLOAT32_MAX))]
    yield duels(
        "rounding/float32-maximum-from-below",
        texts,
        FLOAT32_MAX,
        pins=f"Weights from the float32 maximum ({FLOAT32_MAX!r}) up to just below the halfway "
        f"point to 2^128 read as the maximum: {', '.join(texts)} (the maximum's shortest "
        "float32 decimal, above it; the float64 just below the halfway point; the maximum as "
        "an integer literal). Each ties position 1's maximum and position 0 is evicted.",
        catches="the range checked on the float64 before rounding (x > FLT_MAX refused) rather "
        "than on the rounded float32; an integer literal of 39 digits refused or misread by a "
        "64-bit integer reader.",
        tags=(*TAGS, "float-edge"),
        first=True,
    )
    integer = str(int(midpoint) - 1)
    yield (
        Draft(
            "rounding/integer-below-overflow-halfway",
            pins=f"The integer literal {integer} is 2^128 - 2^103 - 1, one below the halfway "
            "point between the float32 maximum and 2^128; its nearest float64 is the halfway "
            "point, which rounds to even, to infinity: refused with invalid-attention. The "
            "step after it succeeds, and position 0 is evicted.",
            catches=f"{ONCE} (or an integer reader converting straight to float32, "
            "BigInteger.floatValue), which reads the float32 maximum and accepts the weight.",
            tags=(*TAGS, "float-edge"),
            params=DUEL,
        )
        .nulls([0, 1])
        .refuse_step("invalid-attention", 2, [NumberText(integer), 0])
        .step(2, [0, 0])
        .evict()
    )


@builder
def rounding_integers() -> Iterator[Draft]:
    for name, power, comparison in (("53", 53, 2**53), ("60", 60, 2**60), ("64", 65, 2**65)):
        value = 2**power + 2 ** (power - 24) + 1
        yield duel(
            f"rounding/integer-past-2-{name}",
            str(value),
            comparison,
            pins=f"The integer literal {value} (2^{power} + 2^{power - 24} + 1) is just above "
            f"the float32 halfway point between 2^{power} and 2^{power} + 2^{power - 23}; its "
            f"nearest float64 is that halfway point, which rounds to the even 2^{power}: it "
            f"ties position 1's {comparison} and position 0 is evicted.",
            catches=f"{ONCE}, or an integer literal converted straight to float32 ((float) "
            "of a 64-bit integer, BigInteger.floatValue), which reads the float32 above and "
            "evicts position 1"
            + ("; a 64-bit integer reader, which overflows." if power > 64 else "."),
        )

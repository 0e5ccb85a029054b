"""How a weight can be written, and where rounding it once and twice part ways (SPEC.md §2.3).

A weight is read as the nearest float64 and then the nearest float32, ties to even. A reader that
rounds the decimal straight to float32 (``strtof``, Java's ``Float.parseFloat``, Rust's
``parse::<f32>``, Go's ``ParseFloat(s, 32)``) agrees everywhere except near a float32 *halfway
point* (the midpoint between two neighbouring float32 values): a decimal a hair off the midpoint
has the midpoint itself as its nearest float64, which then goes to the even neighbour, while the
decimal read once goes to the neighbour on its own side. This module finds those decimals and
writes any decimal in the spellings JSON allows (exponents, many digits, ``-0``, integers), for
the ``rounding/`` builders and the fuzzers.

Exact arithmetic throughout: values are :class:`fractions.Fraction` (every float is one exactly)
and texts come from :class:`decimal.Decimal` with enough digits to be exact. Nothing here
computes an expectation: the reference does (:func:`conformance.policy.reference.narrow_attention`),
and the tests check it against an independent oracle.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal, localcontext
from fractions import Fraction

from conformance.policy.reference import FLOAT32_MAX

#: The smallest positive float32 (a subnormal) and the smallest normal one.
FLOAT32_TINIEST = 2.0**-149
FLOAT32_SMALLEST_NORMAL = 2.0**-126
#: Where float32 rounding reaches infinity: 2^128 stands for the float32 after the maximum.
FLOAT32_OVERFLOW = Fraction(2**128)


def float32_bits(value: float) -> int:
    """The bit pattern of ``value`` (a float32, as a float) as an unsigned 32-bit integer."""
    bits: int = struct.unpack("<I", struct.pack("<f", value))[0]
    return bits


def next_float32(value: float) -> Fraction:
    """The float32 just above ``value`` (a float32 >= 0), exactly; ``2^128`` above the maximum."""
    if value == FLOAT32_MAX:
        return FLOAT32_OVERFLOW
    bits = float32_bits(abs(value)) + 1
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def halfway_above(value: float) -> Fraction:
    """The midpoint between the float32 ``value`` (>= 0) and the float32 just above it (2^128
    above the maximum): the decimals around it are where one rounding and two part ways."""
    return (Fraction(value) + next_float32(value)) / 2


def round_once(value: Fraction) -> float:
    """The float32 nearest to ``value`` itself, ties to even: what a reader that rounds the
    decimal straight to float32 stores. Infinity from the midpoint above the maximum on; the
    sign of a value that rounds to zero is kept (``-0.0``)."""
    if value < 0:
        return -round_once(-value)
    if value >= halfway_above(FLOAT32_MAX):
        return math.inf
    near = float(value)  # within a float64 ulp of value: its float32 is a neighbour or the one
    candidates = set()
    narrowed = struct.unpack("<f", struct.pack("<f", min(near, FLOAT32_MAX)))[0]
    for step in (-1, 0, 1):
        bits = float32_bits(narrowed) + step
        if 0 <= bits <= float32_bits(FLOAT32_MAX):
            candidates.add(struct.unpack("<f", struct.pack("<I", bits))[0])
    return min(
        candidates,
        key=lambda c: (abs(Fraction(c) - value), float32_bits(c) & 1),
    )


def exact_text(value: Fraction) -> str:
    """The exact decimal of ``value`` (its denominator a power of two: a float, a midpoint),
    shortest form: ``1.000000059604644775390625``, ``7.00649...e-46``, ``340282...448``."""
    denominator = value.denominator
    if denominator & (denominator - 1):
        raise ValueError(f"{value} has no finite decimal expansion")
    twos = denominator.bit_length() - 1
    with localcontext() as context:
        context.prec = max(60, 2 * twos + len(str(abs(value.numerator))) + 10)
        decimal = Decimal(value.numerator) / Decimal(value.denominator)
    return decimal_text(decimal)


def decimal_text(decimal: Decimal) -> str:
    """A JSON number text for ``decimal``, exactly: plain between 1e-6 and 1e21, else with an
    exponent (``7.0064923216240854e-46``); trailing zeros dropped; ``-0`` stays ``-0.0``."""
    if decimal.is_zero():
        return "-0.0" if decimal.is_signed() else "0.0"
    sign, text, exponent = _parts(decimal)
    point = len(text) + exponent  # digits before the decimal point
    if -6 < point <= 21:
        if point <= 0:
            body = "0." + "0" * -point + text
        elif point >= len(text):
            body = text + "0" * (point - len(text)) + ".0"
        else:
            body = f"{text[:point]}.{text[point:]}"
    else:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        body = f"{mantissa}e{point - 1:+d}"
    return ("-" if sign else "") + body


def _parts(decimal: Decimal) -> tuple[int, str, int]:
    """``decimal`` as (sign, significant digits without trailing zeros, exponent), exactly
    (``Decimal.normalize`` would round to the context's precision)."""
    sign, digits, exponent = decimal.as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).lstrip("0") or "0"
    stripped = text.rstrip("0") or "0"
    return sign, stripped, exponent + len(text) - len(stripped)


def nudged(value: Fraction, direction: int, digits: int = 40) -> str:
    """A decimal a hair above (``direction`` 1) or below (-1) ``value``: its exact expansion
    with a 1 in the ``digits``-th significant place beyond it. Far below half a float64 ulp for
    ``digits`` of 40 or more, so its nearest float64 is ``value``'s whenever ``value`` is a
    float64 (every float32 midpoint is)."""
    if value == 0:
        return decimal_text(Decimal(direction) * Decimal(10) ** -60)
    exponent = math.floor(math.log10(abs(value)))
    step = Fraction(10) ** (exponent - digits)
    shifted = value + direction * step
    with localcontext() as context:
        context.prec = 1000
        decimal = Decimal(shifted.numerator) / Decimal(shifted.denominator)
    return decimal_text(decimal)


def respell(text: str, style: int) -> str:
    """``text`` (a JSON number) written another way with the same decimal value, by ``style``:

    0 as it is; 1 with an exponent (``1.5e0``); 2 with a capital E and a signed exponent
    (``15E-1``); 3 with trailing zeros (``1.500``); 4 with the point moved left
    (``0.15e+1``); 5 as an integer literal when the value is integral (up to 40 digits), else
    with many trailing zeros.
    """
    decimal = Decimal(text)
    if style == 0:
        return text
    sign = "-" if decimal.is_signed() else ""
    if decimal.is_zero():
        return [text, f"{sign}0e0", f"{sign}0E+5", f"{sign}0.000", f"{sign}0.0e-3", f"{sign}0"][
            style % 6
        ]
    _, mantissa, exponent = _parts(decimal)
    if style == 1:
        return f"{sign}{mantissa[0]}{'.' + mantissa[1:] if len(mantissa) > 1 else ''}e" + str(
            exponent + len(mantissa) - 1
        )
    if style == 2:
        return f"{sign}{mantissa}E{exponent:+d}"
    if style == 3:
        plain = decimal_text(decimal)
        if "e" in plain:
            head, _, tail = plain.partition("e")
            return f"{head if '.' in head else head + '.0'}000e{tail}"
        return plain + "000"
    if style == 4:
        return f"{sign}0.{mantissa}e{exponent + len(mantissa):+d}"
    if exponent >= 0 and len(mantissa) + exponent <= 40:
        return sign + mantissa + "0" * exponent
    return f"{sign}{mantissa[0]}.{mantissa[1:]}{'0' * 30}e{exponent + len(mantissa) - 1}"


def rounds_apart(text: str) -> bool:
    """Whether ``text`` is a weight that rounding once and rounding twice read differently."""
    value = Fraction(Decimal(text))
    twice = float(value)  # nearest float64 ...
    if math.isinf(twice) or abs(twice) >= float(halfway_above(FLOAT32_MAX)):
        twice32 = math.copysign(math.inf, twice)
    else:
        twice32 = round_once(Fraction(twice))  # ... then nearest float32
    once = round_once(value)
    return float32_repr(once) != float32_repr(twice32)


def float32_repr(value: float) -> str:
    """A float32 value as ``repr`` shows it, with the sign of zero."""
    return repr(value)

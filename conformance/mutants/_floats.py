"""Rounding an exact number to a binary floating-point format, for the storage and narrowing
choices of the catalogue: float32 rounded once from the decimal (``strtof``) or toward zero,
float16 and bfloat16 history.

Every value here is computed from a :class:`fractions.Fraction`, so the rounding is exactly the
one named, never a float64 approximation of it; the results are returned as float64 (each is
exactly representable).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

#: (significand bits including the hidden one, lowest normal exponent, highest exponent)
FLOAT32 = (24, -126, 127)
FLOAT16 = (11, -14, 15)
BFLOAT16 = (8, -126, 127)

Mode = Literal["nearest", "toward-zero", "half-away"]


def exact_value(value: Any) -> Fraction:
    """The exact number a JSON number stands for: an integer, or the decimal a float's
    shortest repr writes (what the vectors hold). Infinite floats are not allowed."""
    if type(value) is int:
        return Fraction(value)
    return Fraction(Decimal(repr(float(value))))


def round_to(exact: Fraction, fmt: tuple[int, int, int], mode: Mode = "nearest") -> float:
    """``exact`` rounded to the format ``fmt`` (ties to even, toward zero, or ties away from
    zero), as a float64; past the largest finite value, infinity (toward zero: the largest
    finite value)."""
    bits, lowest, highest = fmt
    if exact == 0:
        return 0.0
    sign = -1.0 if exact < 0 else 1.0
    magnitude = abs(exact)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, lowest) - (bits - 1))
    scaled = magnitude / quantum
    whole = math.floor(scaled)
    rest = scaled - whole
    half = Fraction(1, 2)
    if mode == "half-away":
        whole += rest >= half
    elif mode == "nearest":
        whole += rest > half or (rest == half and whole % 2 == 1)
    rounded = whole * quantum
    largest = (2**bits - 1) * Fraction(2) ** (highest - bits + 1)
    if rounded > largest:
        return sign * (float(largest) if mode == "toward-zero" else math.inf)
    return sign * float(rounded)


def round_float(value: float, fmt: tuple[int, int, int], mode: Mode = "nearest") -> float:
    """A float64 ``value`` rounded to ``fmt`` (infinities and NaN pass through)."""
    if not math.isfinite(value):
        return value
    if value == 0:
        return value
    return round_to(Fraction(value), fmt, mode)


def to_bfloat16(values: Any) -> Any:
    """Float32 values (as float64) rounded to bfloat16, ties to even, as float64: the upper 16
    bits of the float32 after adding half of the dropped part (what `torch`'s conversion does).
    Every input must be exactly a float32."""
    # Here: only the bfloat16 choice needs numpy; the other roundings are exact fractions.
    import numpy as np

    bits = np.asarray(values, dtype=np.float64).astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)

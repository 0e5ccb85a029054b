"""An exact oracle for reading a weight: SPEC.md §2.3's two roundings done on rationals.

The reference reads a weight the way every language does it (Python's ``float`` then a C cast
through ``struct``). This oracle does not touch a float until the end: the decimal is an exact
:class:`fractions.Fraction`, and rounding to a binary format (float64, then float32) is integer
arithmetic on it, ties to even, subnormals and overflow included. It imports nothing from the
kit, so agreement between the two is evidence, not an echo.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

#: (significand bits, lowest normal exponent, highest exponent) of IEEE 754 binary64 and binary32.
FLOAT64 = (53, -1022, 1023)
FLOAT32 = (24, -126, 127)


def exact(text: str) -> Fraction:
    """The exact value of a JSON number text."""
    return Fraction(Decimal(text))


def round_to(value: Fraction, fmt: tuple[int, int, int]) -> Fraction | None:
    """``value`` rounded to the nearest number of the binary format ``fmt``, ties to the even
    significand; None when the result is beyond the format's largest finite number (infinity).
    The sign of a result of zero is the caller's to keep."""
    precision, emin, emax = fmt
    if value == 0:
        return Fraction(0)
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, emin)  # below the normal range the quantum stays fixed: subnormals
    quantum = Fraction(2) ** (exponent - precision + 1)
    units = magnitude // quantum
    rest = magnitude - units * quantum
    if 2 * rest > quantum or (2 * rest == quantum and units % 2 == 1):
        units += 1
    rounded = units * quantum
    largest = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** emax
    if rounded > largest:
        return None
    return rounded if value > 0 else -rounded


def as_float(value: Fraction | None, negative: bool) -> float:
    """A rounded value as a Python float (exact), infinity for None, keeping a zero's sign."""
    if value is None:
        return -math.inf if negative else math.inf
    if value == 0:
        return -0.0 if negative else 0.0
    return value.numerator / value.denominator


def read_twice(text: str) -> float:
    """SPEC.md §2.3: the nearest float64 to the decimal, then the nearest float32 to that."""
    value = exact(text)
    negative = value < 0 or text.lstrip().startswith("-")
    wide = round_to(value, FLOAT64)
    if wide is None:
        return -math.inf if negative else math.inf
    return as_float(round_to(wide, FLOAT32), negative)


def read_once(text: str) -> float:
    """The slip: the nearest float32 to the decimal itself."""
    value = exact(text)
    negative = value < 0 or text.lstrip().startswith("-")
    return as_float(round_to(value, FLOAT32), negative)


def accepted(weight: float) -> bool:
    """Whether a float32 read from a weight is accepted (finite, not negative; -0.0 is zero)."""
    return math.isfinite(weight) and not weight < 0

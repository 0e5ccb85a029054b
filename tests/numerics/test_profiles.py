"""The profiles' error bound against brute force: every summation order of small rings, each
operation rounded exactly as the profile's formats round (in exact rational arithmetic, with no
numpy in the loop), lands within the bound; and the table's constants are the formats' own."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.numerics.profiles import (
    BFLOAT16_MAX,
    FLOAT16_MAX,
    FLOAT32_MAX,
    PROFILES,
    gamma,
    profile_named,
)
from conformance.policy.reference import float32_literal
from tests.support.precision_ports import to_bfloat16

#: (significant bits, lowest normal exponent) of each format.
FLOAT64 = (53, -1022)
FLOAT32 = (24, -126)
BFLOAT16 = (8, -126)
FLOAT16 = (11, -14)
#: What each profile's evaluation does: (storage, accumulation, result) formats.
ARITHMETIC = {
    "float64": (None, FLOAT64, None),
    "float32": (None, FLOAT32, None),
    "bfloat16": (BFLOAT16, FLOAT32, None),
    "float16": (FLOAT16, FLOAT32, None),
    "float16-result": (FLOAT16, FLOAT32, FLOAT16),
}


def round_to(value: Fraction, fmt: tuple[int, int] | None) -> Fraction:
    """``value`` (not negative) rounded to nearest, ties to even, in a format of ``fmt`` =
    (significant bits, lowest normal exponent) with gradual underflow; no overflow."""
    if fmt is None or not value:
        return value
    bits, emin = fmt
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, emin) - bits + 1)
    return round(value / quantum) * quantum  # round() of a Fraction: ties to even


def every_order(terms: tuple[Fraction, ...], fmt: tuple[int, int]) -> set[Fraction]:
    """The sum of ``terms`` in every order (every binary tree over every arrangement), each
    addition rounded to ``fmt``."""

    @functools.cache
    def sums(bag: tuple[Fraction, ...]) -> frozenset[Fraction]:
        if len(bag) == 1:
            return frozenset(bag)
        found: set[Fraction] = set()
        for i in range(len(bag)):
            for j in range(i + 1, len(bag)):
                merged = round_to(bag[i] + bag[j], fmt)
                rest = [bag[k] for k in range(len(bag)) if k not in (i, j)]
                found |= sums(tuple(sorted((*rest, merged))))
        return frozenset(found)

    return set(sums(tuple(sorted(terms)))) if terms else {Fraction(0)}


# float32 weights over the whole range: subnormal ones, ones near 1, large ones, and zeros.
WEIGHTS = st.one_of(
    st.just(0.0),
    st.builds(
        lambda mantissa, exponent: float32_literal(mantissa * 2.0**exponent),
        st.floats(1, 2, width=32, exclude_max=True),
        st.integers(-150, 17),
    ),
    st.floats(0, 4, width=32),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WEIGHTS, min_size=1, max_size=5), st.sampled_from(sorted(ARITHMETIC)))
def test_every_summation_order_lands_within_the_bound(weights: list[float], name: str) -> None:
    profile = profile_named(name)
    storage, accumulation, result = ARITHMETIC[name]
    exact = [Fraction(w) for w in weights]
    total = sum(exact, Fraction(0))
    nonzero = sum(1 for w in exact if w)
    problem = profile.range_problem(nonzero, total, max(exact))
    if problem is not None:
        return
    bounds = profile.interval(nonzero, total, max(exact))
    assert bounds is not None
    stored = tuple(round_to(w, storage) for w in exact)
    for computed in every_order(stored, accumulation):
        value = round_to(computed, result)
        assert bounds[0] <= value <= bounds[1], (weights, name, float(value), float(total))


def test_the_bound_is_nearly_reached_by_float32_accumulation() -> None:
    # 1 + 3 * 2^-25 in float32, in slot order: each 2^-25 added to 1 rounds away (ties to
    # even), so the computed sum is 1, short of S by 3 * 2^-25, against a bound of
    # gamma_3 * S, about 6 * 2^-25: the bound is not vacuous (about twice what one order loses).
    profile = profile_named("float32")
    weights = [Fraction(1), *[Fraction(1, 2**25)] * 3]
    total = sum(weights, Fraction(0))
    lost = total - min(every_order(tuple(weights), FLOAT32))
    assert lost == Fraction(3, 2**25)
    slack = profile.bound(4, total)
    assert slack is not None and lost <= slack <= Fraction(21, 10) * lost


def test_a_ring_of_zeros_is_exactly_zero_and_one_weight_exact_without_narrower_storage() -> None:
    for profile in PROFILES.values():
        assert profile.interval(0, Fraction(0), Fraction(0)) == (0, 0)
    assert profile_named("float32").interval(1, Fraction(3, 4), Fraction(3, 4)) == (
        Fraction(3, 4),
        Fraction(3, 4),
    )
    low, high = profile_named("bfloat16").interval(1, Fraction(3, 4), Fraction(3, 4)) or (0, 0)
    assert low < Fraction(3, 4) < high


def test_the_constants_are_the_formats_own() -> None:
    assert float(FLOAT32_MAX) == float(np.finfo(np.float32).max)
    assert float(FLOAT16_MAX) == float(np.finfo(np.float16).max)
    largest = to_bfloat16(np.array([np.finfo(np.float32).max / 2 * 1.99], np.float32))
    assert float(BFLOAT16_MAX) == float(largest[0])
    f32, f16 = profile_named("float32"), profile_named("float16")
    assert f32.u_acc == Fraction(float(np.finfo(np.float32).eps)) / 2
    assert f16.u_weight == Fraction(float(np.finfo(np.float16).eps)) / 2
    assert f16.eta_weight == Fraction(float(np.finfo(np.float16).smallest_subnormal)) / 2
    assert profile_named("float64").u_acc == Fraction(float(np.finfo(np.float64).eps)) / 2


def test_gamma_is_unbounded_once_m_u_reaches_one() -> None:
    assert gamma(0, Fraction(1, 4)) == 0
    assert gamma(2, Fraction(1, 4)) == 1
    assert gamma(4, Fraction(1, 4)) is None
    profile = profile_named("float32")
    assert profile.range_problem(2**24 + 1, Fraction(1), Fraction(1)) is not None


@pytest.mark.parametrize(
    ("name", "weight", "total", "beyond"),
    [
        ("float16", 65504, 65504, False),
        ("float16", 65505, 65505, True),
        ("float16-result", 60000, 70000, True),
        ("float32", 2**127, 2**127 * 1.5, False),
        ("float32", 2**127, float(np.finfo(np.float32).max), True),
    ],
)
def test_range(name: str, weight: float, total: float, beyond: bool) -> None:
    problem = profile_named(name).range_problem(2, Fraction(total), Fraction(weight))
    assert (problem is not None) == beyond, problem


def test_an_unknown_profile_names_the_choices() -> None:
    with pytest.raises(ValueError, match="exact, float64, float32, bfloat16"):
        profile_named("float8")

"""Numerics profiles: the arithmetic a port is allowed to use, and how far from the exact sum
that arithmetic can land (SPEC.md, appendix "Numerics profiles").

A profile names three roundings a port's window sum may go through: each float32 weight stored
in a narrower format (unit roundoff ``u_weight``, and ``eta_weight`` for a weight below that
format's normal range), the additions in an accumulation format (``u_acc``, in *any* order,
tree or sequential), and the finished sum rounded to a result format (``u_result``,
``eta_result``). For a ring with ``n`` nonzero weights whose exact (real) sum is ``S``, every
evaluation the profile admits lies within :meth:`Profile.bound` of ``S``::

    |computed - S| <= eps(n) * S + eta(n)
    eps(n) = (1 + u_weight) * (1 + gamma(n - 1, u_acc)) * (1 + u_result) - 1
    eta(n) = n * eta_weight * (1 + gamma(n - 1, u_acc)) * (1 + u_result) + eta_result
    gamma(m, u) = m * u / (1 - m * u)

(Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §2.2 and §4.2: with every
weight ``w_i >= 0``, the stored weight is ``w_i (1 + d_i) + e_i``, ``|d_i| <= u_weight``,
``|e_i| <= eta_weight``; summing ``n`` terms in any order gives ``sum x_i (1 + t_i)`` with
``|t_i| <= gamma(n - 1, u_acc)``, since each term takes part in at most ``n - 1`` additions and
an addition whose result is subnormal is exact; the result is ``r (1 + d) + e``. Zero slots
add nothing exactly, so only the nonzero weights count.) A ring of zeros sums to exactly 0.

Everything here is exact rational arithmetic (:class:`fractions.Fraction`): a bound is never
rounded. :meth:`Profile.interval` is the bound as the range of values a sum may take, or None
where the profile's formats overflow (the sum, or a stored weight, beyond the largest finite
value), which makes the state *not applicable* for the profile rather than judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

#: The largest finite values of the formats a profile uses, exactly.
FLOAT32_MAX = Fraction((2**24 - 1) * 2**104)
BFLOAT16_MAX = Fraction((2**8 - 1) * 2**120)
FLOAT16_MAX = Fraction(65504)


def unit(bits: int) -> Fraction:
    """The unit roundoff of a format with ``bits`` significant bits: ``2^-bits``."""
    return Fraction(1, 2**bits)


def gamma(count: int, u: Fraction) -> Fraction | None:
    """``gamma_m(u) = m u / (1 - m u)``, or None when ``m u >= 1`` (no bound)."""
    if count <= 0 or not u:
        return Fraction(0)
    product = count * u
    if product >= 1:
        return None
    return product / (1 - product)


@dataclass(frozen=True)
class Profile:
    """One row of the profiles table (see the module docstring for what each field bounds).

    ``weight_max`` is the largest weight the storage format holds finitely (None: every float32
    does); ``sum_max`` the largest sum the accumulation and result formats hold (None: no sum of
    float32 weights can overflow them). ``arithmetic`` says in words what the profile admits,
    for messages ("float32 accumulation in any order").
    """

    name: str
    arithmetic: str
    u_weight: Fraction = Fraction(0)
    u_acc: Fraction = Fraction(0)
    u_result: Fraction = Fraction(0)
    eta_weight: Fraction = Fraction(0)
    eta_result: Fraction = Fraction(0)
    weight_max: Fraction | None = None
    sum_max: Fraction | None = None

    @property
    def exact(self) -> bool:
        """True for the profile that admits only the reference's own arithmetic."""
        return self.name == EXACT

    def eps(self, count: int) -> Fraction | None:
        """The relative part of the bound for ``count`` nonzero weights (None: unbounded)."""
        spread = gamma(count - 1, self.u_acc)
        if spread is None:
            return None
        return (1 + self.u_weight) * (1 + spread) * (1 + self.u_result) - 1

    def eta(self, count: int) -> Fraction | None:
        """The absolute part of the bound for ``count`` nonzero weights (None: unbounded)."""
        if count <= 0:
            return Fraction(0)
        spread = gamma(count - 1, self.u_acc)
        if spread is None:
            return None
        return count * self.eta_weight * (1 + spread) * (1 + self.u_result) + self.eta_result

    def bound(self, count: int, total: Fraction) -> Fraction | None:
        """How far from the exact sum ``total`` of ``count`` nonzero weights an admitted
        evaluation may land (None: unbounded, the formats cannot hold that many terms)."""
        if count <= 0:
            return Fraction(0)
        eps, eta = self.eps(count), self.eta(count)
        if eps is None or eta is None:
            return None
        return eps * total + eta

    def interval(
        self, count: int, total: Fraction, largest_weight: Fraction
    ) -> tuple[Fraction, Fraction] | None:
        """The values an admitted evaluation of the sum may take, ``(low, high)``: the bound
        around ``total``, never below 0 (a rounded sum of weights that are not negative is not
        negative); ``(0, 0)`` for a ring of zeros. None when the ring is outside the profile's
        range (:meth:`range_problem`)."""
        if self.range_problem(count, total, largest_weight) is not None:
            return None
        slack = self.bound(count, total)
        assert slack is not None  # range_problem says so
        return max(Fraction(0), total - slack), total + slack

    def range_problem(self, count: int, total: Fraction, largest_weight: Fraction) -> str | None:
        """Why a ring of ``count`` nonzero weights, the largest ``largest_weight``, summing to
        ``total``, is outside the profile's range, or None: a weight beyond
        :attr:`weight_max`, a sum whose bound reaches past :attr:`sum_max`, or more terms than
        the accumulation format's bound covers (``(count - 1) u_acc >= 1``). Outside the range
        the formats overflow, and the bound says nothing."""
        if count <= 0:
            return None
        if self.weight_max is not None and largest_weight > self.weight_max:
            return (
                f"a weight of {_show(largest_weight)}, beyond {self.name}'s largest "
                f"{_show(self.weight_max)}"
            )
        slack = self.bound(count, total)
        if slack is None:
            return f"{count} nonzero weights, more than {self.name}'s error bound covers"
        if self.sum_max is not None and total + slack > self.sum_max:
            return (
                f"weights summing to {_show(total)}, whose computed sum may pass "
                f"{self.name}'s largest {_show(self.sum_max)}"
            )
        return None

    def range_note(self) -> str:
        """Where the profile's bound holds, in words."""
        parts = []
        if self.weight_max is not None:
            parts.append(f"weights <= {_show(self.weight_max)}")
        if self.sum_max is not None:
            parts.append(f"sums <= {_show(self.sum_max)}")
        return " and ".join(parts) or "every state"


def _show(value: Fraction) -> str:
    """A bound or a sum for a message: an integer as written, anything else as the nearest
    float64 (shortest round-trip decimal)."""
    return str(value) if value.denominator == 1 and value < 10**6 else repr(float(value))


#: The default: the reference's own arithmetic, bit for bit (SPEC.md §2.4).
EXACT = "exact"

_F32 = unit(24)
_F64 = unit(53)
_BF16 = unit(8)
_F16 = unit(11)
#: Half the spacing of the subnormals of bfloat16 (2^-133) and float16 (2^-24): the most a
#: weight below the format's normal range moves when it is stored.
_ETA_BF16 = Fraction(1, 2**134)
_ETA_F16 = Fraction(1, 2**25)

#: Every profile, loosest last; ``exact`` first (it admits only the reference's answers).
PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(EXACT, "the reference's float64 sums in slot order"),
        Profile("float64", "float64 accumulation in any order", u_acc=_F64),
        Profile("float32", "float32 accumulation in any order", u_acc=_F32, sum_max=FLOAT32_MAX),
        Profile(
            "bfloat16",
            "bfloat16 weights with float32 accumulation in any order",
            u_weight=_BF16,
            u_acc=_F32,
            eta_weight=_ETA_BF16,
            sum_max=FLOAT32_MAX,
        ),
        Profile(
            "float16",
            "float16 weights with float32 accumulation in any order",
            u_weight=_F16,
            u_acc=_F32,
            eta_weight=_ETA_F16,
            weight_max=FLOAT16_MAX,
            sum_max=FLOAT32_MAX,
        ),
        Profile(
            "float16-result",
            "float16 weights, float32 accumulation in any order and a float16 result",
            u_weight=_F16,
            u_acc=_F32,
            u_result=_F16,
            eta_weight=_ETA_F16,
            eta_result=_ETA_F16,
            weight_max=FLOAT16_MAX,
            sum_max=FLOAT16_MAX,
        ),
    )
}
#: The names ``--numerics`` accepts, in the table's order.
PROFILE_NAMES = tuple(PROFILES)


def profile_named(name: str) -> Profile:
    """The profile called ``name``; raise ValueError naming the choices when there is none."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown numerics profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}"
        ) from None


__all__ = [
    "BFLOAT16_MAX",
    "EXACT",
    "FLOAT16_MAX",
    "FLOAT32_MAX",
    "PROFILES",
    "PROFILE_NAMES",
    "Profile",
    "gamma",
    "profile_named",
    "unit",
]

"""The reference sums each ring in slot index order, and every other order would evict wrongly.

Each case is a two-candidate scenario (:func:`tests.support.summation.trap_scenario`): entries A
and B, one victim. B's ring holds a single non-zero weight, so every summation gives B the same
sum. A's ring is built so that the pinned sum (float64 from +0.0, slot 0 upward) ties B or beats
it by an ulp, while the named wrong summations land on the other side. The test checks all three
facts: the reference and the oracle evict the slot-order victim, each named alternative really
gives A a different sum, and with that sum the alternative would really evict the other entry.

The weights are powers of two (and 3 * 2^-25), so every value below is exact and the cases
can be checked by hand; ``u = 2^-53`` is half an ulp of 1.0 in float64, so ``1.0 + u`` ties
and rounds to even (back to 1.0) while ``u + u`` is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.policy.reference import SnapKV
from tests.support.oracles import OracleSnapKV, float_bits
from tests.support.summation import ALTERNATIVES, lower_victim, pinned_sum, trap_scenario

U = 2.0**-53
T = 3 * 2.0**-25  # float32; 1.0 + T rounds up to 1 + 2^-23 in float32 but is exact in float64


@dataclass(frozen=True)
class Trap:
    name: str
    obs: int
    writes_a: tuple[float, ...]
    writes_b: tuple[float, ...]
    a_lower: bool
    traps: tuple[str, ...]  # the alternatives this case catches


def b_writes(steps: int, value: float, at: int) -> tuple[float, ...]:
    """B's weights: ``value`` at step ``at``, zero elsewhere (so any summation gives ``value``)."""
    return tuple(value if t == at else 0.0 for t in range(steps))


TRAPS = [
    # Slot order: 1 + u + u = 1 (each u ties to even). Oldest-last orders and Kahan see
    # u + u + 1 = 1 + 2^-52 > 1 = B; the tie under slot order evicts A, the lower position.
    Trap("reversed-kahan", 3, (1.0, U, U), b_writes(3, 1.0, 0), True, ("reversed", "kahan")),
    # np.sum on 8 values: ((1 + u) + (u + u)) + ((u + u) + (u + u)) = 1 + 3 * 2^-52.
    Trap("pairwise", 8, (1.0,) + (U,) * 7, b_writes(8, 1.0, 0), True, ("pairwise",)),
    # Four writes into a ring of 3: slot 0 holds the 1.0 that overwrote 0.5, the cursor is at
    # slot 1, so oldest-first is u + u + 1. A running total adds and subtracts its way there.
    Trap(
        "chronological-running",
        3,
        (0.5, U, U, 1.0),
        b_writes(4, 1.0, 3),
        True,
        ("chronological", "running", "reversed", "kahan"),
    ),
    # float64: 1 + T exactly; float32: 1 + 2^-23 = B. Slot order evicts A (strictly lower);
    # float32 ties and evicts B, the lower position.
    Trap("float32", 2, (1.0, T), b_writes(2, 1.0 + 2.0**-23, 1), False, ("float32",)),
    # Downward: slot order u + u + 1 = 1 + 2^-52 > 1 = B, evicting B; reversed 1 + u + u = 1
    # ties B, and the tie evicts A, the lower position.
    Trap("reversed-down", 3, (U, U, 1.0), b_writes(3, 1.0, 0), True, ("reversed",)),
    # All six at once (the recipe in the module docstring of tests/support/summation.py): slot order
    # gives exactly 1 + 2^-22 = B; every alternative gives more, so each evicts B, not A.
    Trap(
        "all-six",
        8,
        (0.5, 0.25, 0.125, 0.0625, U, U, U, U, 1.0, T, 2.0**-24, T),
        b_writes(12, 1.0 + 2.0**-22, 11),
        True,
        tuple(ALTERNATIVES),
    ),
]

CASES = [(trap, alternative) for trap in TRAPS for alternative in trap.traps]


def run(policy, calls: list[tuple]) -> list[int]:
    for call in calls[:-1]:
        policy.step(call[1], call[2])
    return policy.evict()


def positions(trap: Trap) -> tuple[int, int]:
    """The positions of A and B in the trap scenario."""
    return (0, 1) if trap.a_lower else (1, 0)


def slot_order_victim(trap: Trap) -> int:
    sums = [pinned_sum(trap.writes_a, trap.obs), pinned_sum(trap.writes_b, trap.obs)]
    return lower_victim(sums, positions(trap))


@pytest.mark.parametrize("trap", TRAPS, ids=lambda trap: trap.name)
def test_reference_evicts_the_slot_order_victim(trap: Trap) -> None:
    params, calls = trap_scenario(trap.obs, trap.writes_a, trap.writes_b, trap.a_lower)
    reference, oracle = SnapKV(params), OracleSnapKV(params)
    for call in calls[:-1]:
        reference.step(call[1], call[2])
        oracle.step(call[1], call[2])
    assert float_bits(reference.scores().sums) == float_bits(oracle.sums())
    assert reference.evict() == oracle.evict() == [slot_order_victim(trap)]


@pytest.mark.parametrize(("trap", "alternative"), CASES, ids=[f"{t.name}-{a}" for t, a in CASES])
def test_alternative_summation_would_evict_the_other_entry(trap: Trap, alternative: str) -> None:
    summed = ALTERNATIVES[alternative]
    a_pinned = pinned_sum(trap.writes_a, trap.obs)
    b_pinned = pinned_sum(trap.writes_b, trap.obs)
    # B is order-proof: the alternative gives it the same sum as slot order ...
    assert summed(trap.writes_b, trap.obs).hex() == b_pinned.hex()
    # ... but not A, and that difference flips the victim.
    a_alternative = summed(trap.writes_a, trap.obs)
    assert a_alternative.hex() != a_pinned.hex()
    wrong = lower_victim([a_alternative, b_pinned], positions(trap))
    assert wrong != slot_order_victim(trap)


def test_every_alternative_is_trapped() -> None:
    assert {alternative for _, alternative in CASES} == set(ALTERNATIVES)

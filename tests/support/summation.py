"""Wrong ways to sum a history ring, and the ring a sequence of writes leaves behind.

SPEC.md §2.4 pins one summation: float64, from ``+0.0``, slot index 0 upward
(:func:`tests.support.oracles.slot_order_sum`). Each function here is a plausible porting
mistake; the tests build rings on which each one gives a different sum *and* a different victim,
and the vector generator can use the same functions to check that a "summation trap" vector
really traps.

A ring is described by its *write log*: the weights written to one kept entry since its
admission, oldest first, and the ring size ``obs``. Write ``t`` lands in slot ``(start + t) %
obs`` where ``start`` is the cursor at the first write; in the tests the entries are admitted
before any write, so ``start`` is 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tests.support.oracles import slot_order_sum, to_float32


def ring_after(writes: Sequence[float], obs: int, start: int = 0) -> list[float]:
    """The ring (indexed by slot) that ``writes`` leave, each narrowed to float32."""
    ring = [0.0] * obs
    for t, weight in enumerate(writes):
        ring[(start + t) % obs] = to_float32(weight)
    return ring


def pairwise_sum(writes: Sequence[float], obs: int) -> float:
    """``np.sum`` over the ring in float64: numpy sums 8 or more elements pairwise."""
    return float(np.sum(np.asarray(ring_after(writes, obs), dtype=np.float64)))


def reversed_sum(writes: Sequence[float], obs: int) -> float:
    """float64, from +0.0, slot index ``obs - 1`` downward."""
    return slot_order_sum(ring_after(writes, obs)[::-1])


def chronological_sum(writes: Sequence[float], obs: int) -> float:
    """float64, from +0.0, oldest slot first (starting at the cursor, wrapping round)."""
    ring = ring_after(writes, obs)
    cursor = len(writes) % obs
    return slot_order_sum(ring[cursor:] + ring[:cursor])


def kahan_sum(writes: Sequence[float], obs: int) -> float:
    """Kahan-compensated float64 sum in slot index order."""
    total = compensation = 0.0
    for value in ring_after(writes, obs):
        corrected = value - compensation
        moved = total + corrected
        compensation = (moved - total) - corrected
        total = moved
    return total


def float32_sum(writes: Sequence[float], obs: int) -> float:
    """Slot index order, but accumulated in float32."""
    total = np.float32(0.0)
    for value in ring_after(writes, obs):
        total = np.float32(total + np.float32(value))
    return float(total)


def running_sum(writes: Sequence[float], obs: int) -> float:
    """A total kept up to date per write: add the new weight, subtract the one it overwrites."""
    ring = [0.0] * obs
    total = 0.0
    for t, weight in enumerate(writes):
        slot = t % obs
        total += to_float32(weight)
        total -= ring[slot]
        ring[slot] = to_float32(weight)
    return total


#: Every wrong summation, by the name the tests and the mutant catalogue use.
ALTERNATIVES: dict[str, Callable[[Sequence[float], int], float]] = {
    "pairwise": pairwise_sum,
    "reversed": reversed_sum,
    "chronological": chronological_sum,
    "kahan": kahan_sum,
    "float32": float32_sum,
    "running": running_sum,
}


def pinned_sum(writes: Sequence[float], obs: int) -> float:
    """The sum SPEC.md §2.4 pins, for the ring ``writes`` leave."""
    return slot_order_sum(ring_after(writes, obs))


def lower_victim(sums: Sequence[float], positions: Sequence[int]) -> int:
    """The single victim among candidates: the lowest ``(sum, position)``."""
    return min(zip(sums, positions, strict=True))[1]


def trap_scenario(
    obs: int, writes_a: Sequence[float], writes_b: Sequence[float], a_lower: bool
) -> tuple[dict[str, int], list[tuple]]:
    """Params and calls that make the single victim a choice between two entries A and B.

    A and B are admitted first (by null steps, so nothing is written), A at the lower position
    when ``a_lower``; then ``len(writes_a)`` steps write ``writes_a[t]`` to A, ``writes_b[t]``
    to B and 0 to every position admitted since. Those later positions are the protected recent
    window (``recentWindow = steps``, ``budget = steps + 1``, ``poolKernel 1``), so the final
    ``evict`` must pick exactly one of A and B by their window sums alone.
    """
    steps = len(writes_a)
    if len(writes_b) != steps:
        raise ValueError("A and B need one weight per step each")
    params = {"budget": steps + 1, "recentWindow": steps, "obsWindow": obs, "poolKernel": 1}
    calls: list[tuple] = [("step", 0, None), ("step", 1, None)]
    for t in range(steps):
        pair = [writes_a[t], writes_b[t]] if a_lower else [writes_b[t], writes_a[t]]
        calls.append(("step", 2 + t, pair + [0.0] * t))
    calls.append(("evict",))
    return params, calls

"""Ring mistakes: what a step writes into the history rings, where, and when.

SPEC.md §2.3: a non-null ``attn`` writes one column at the shared cursor and advances it; a
``null`` attn writes nothing and does not move it; the admitted position starts with an all-zero
history; a refused call changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.mutants._base import EPS53, EVICT, Witness, mutant, params, ring_trap, step, steps
from conformance.policy.reference import FLOAT32_MAX, PolicyError, Ring, SnapKV, float32_literal

# obsWindow 2: position 0 receives 1.0 in slot 0; a null step follows; the next weighted step
# lands in slot 1 for the reference but overwrites slot 0 when a null step moved the cursor.
NULL_STEP_WITNESS = Witness(
    params(3, 1, 2, 1),
    (step(0), step(1, [1.0]), step(2), step(3, [0.5, 1.0, 1.0]), EVICT),
)


@mutant(
    "null-advances-ring",
    rule="§2.3: a null attn writes nothing and does not move the cursor",
    origin="the cursor increment sits outside the `if (attn != NULL)` block, so the window "
    "counts calls rather than observed steps and keeps a stale weight for another cycle",
    keywords=("null step", "null attn", "null vector", "inert"),
    witness=NULL_STEP_WITNESS,
)
class NullAdvancesRing(SnapKV):
    """A null step writes nothing but still advances the cursor."""

    def step(self, pos: Any, attn: Any) -> None:
        if attn is not None:
            super().step(pos, attn)
            return
        position = self.check_position(pos)
        self.slot = (self.slot + 1) % self.params.obsWindow
        self.admit(position)


@mutant(
    "null-writes-zeros",
    rule="§2.3: a null attn writes nothing and does not move the cursor",
    origin="treating a missing attention vector as all-zero attention (`attn or [0] * n`)",
    keywords=("null step", "null attn", "null vector", "inert", "writes zeros"),
    witness=NULL_STEP_WITNESS,
)
class NullWritesZeros(SnapKV):
    """A null step is recorded as a step of all-zero weights (written, cursor advanced)."""

    def check_attention(self, attn: Any) -> list[float] | None:
        weights = super().check_attention(attn)
        return [0.0] * len(self.kept) if weights is None else weights


@mutant(
    "empty-attention-as-null",
    rule="§2.3: a list attn (even an empty one, when nothing is kept) advances the cursor",
    origin="an empty array and a missing one look the same through a C pointer-and-length API "
    "or a truthiness test (`if not attn`), so an empty list is treated as null",
    keywords=("empty list", "empty attention", "empty attn"),
    # Not moving the cursor rotates every ring by one slot, so only the summation order shows.
    witness=ring_trap(3, [[EPS53, EPS53, 1.0], [0.0, 0.0, 1.0]], lead=True),
)
class EmptyAttentionAsNull(SnapKV):
    """An empty attention list (legal only while nothing is kept) is treated like null."""

    def check_attention(self, attn: Any) -> list[float] | None:
        return None if attn == [] else super().check_attention(attn)


@mutant(
    "stale-history-on-reuse",
    rule="§2.3: the admitted position starts with an all-zero history, never a stale one",
    origin="a fixed array of budget + 1 slots with a free list: the newcomer takes the evicted "
    "position's slot and its ring is not cleared",
    keywords=("stale", "reuse", "reused"),
    # Positions 0 and 1 tie after pooling; 0 is evicted with the ring [0, 1, 0], which the
    # newly admitted position 2 inherits, so it outranks position 3 at the second eviction.
    witness=Witness(
        params(1, 0, 3, 3),
        (step(0, []), step(1, [1.0]), EVICT, step(2, [0.25]), step(3), EVICT),
    ),
)
class StaleHistoryOnReuse(SnapKV):
    """An admitted position inherits the ring of the most recently evicted position."""

    def __init__(self, params: Mapping[str, Any], seed: int = 0) -> None:
        self.freed: list[Ring] = []
        super().__init__(params, seed)

    def remove(self, victims: Iterable[int]) -> None:
        victims = sorted(victims)
        self.freed.extend(self.rings[index] for index in victims)
        super().remove(victims)

    def admit(self, position: int) -> None:
        super().admit(position)
        if self.freed:
            self.rings[-1] = self.freed.pop()


def valid_prefix(attn: list[Any]) -> list[float]:
    """The float32 weights before the first one the reference refuses (for partial writes)."""
    prefix: list[float] = []
    for weight in attn:
        if type(weight) not in (int, float):
            break
        narrow = float32_literal(weight)
        if not 0 <= narrow <= FLOAT32_MAX:
            break
        prefix.append(narrow)
    return prefix


@mutant(
    "partial-write-on-refusal",
    rule="§2.3: a refused call changes nothing",
    origin="validating each weight inside the write loop (`if (w < 0) return ERR; "
    "hist[i][slot] = w;`), so the weights before the bad one are already written",
    keywords=("partial write", "partial", "atomic", "changes nothing"),
    witness=Witness(
        params(2, 1, 1, 1),
        (*steps(0, 2), step(2, [1.0, -1.0]), step(2), EVICT),
    ),
)
class PartialWriteOnRefusal(SnapKV):
    """A refused weight list still writes the weights before the first bad one into the ring."""

    def check_attention(self, attn: Any) -> list[float] | None:
        try:
            return super().check_attention(attn)
        except PolicyError:
            if isinstance(attn, list) and len(attn) == len(self.kept):
                for ring, weight in zip(self.rings, valid_prefix(attn), strict=False):
                    ring.write(self.slot, weight)
            raise


@mutant(
    "refused-step-still-admits",
    rule="§2.3: a refused call changes nothing (the position is not admitted)",
    origin="admitting the position as soon as it is validated, before the attention is checked",
    keywords=("still admit", "refused step", "atomic", "changes nothing"),
    witness=Witness(params(1, 0, 1, 1), (step(0), step(1, [1.0, 1.0]), step(1), EVICT)),
)
class RefusedStepStillAdmits(SnapKV):
    """A step refused for its attention has already admitted its position."""

    def step(self, pos: Any, attn: Any) -> None:
        position = self.check_position(pos)
        try:
            weights = self.check_attention(attn)
        except PolicyError:
            self.admit(position)
            raise
        if weights is not None:
            self.write(weights)
        self.admit(position)

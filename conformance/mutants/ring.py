"""Ring mistakes: what a step writes into the history rings, where, when, and in what format.

SPEC.md §2.3: a non-null ``attn`` writes one column at the shared cursor and advances it
modulo ``obsWindow``; a ``null`` attn writes nothing and does not move it; an empty list is not
null; the admitted position starts with an all-zero history. SPEC.md §2.6: history is stored as
float32, which the weights already are, so storage loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from conformance.mutants._base import EPS53, EVICT, Witness, mutant, params, ring_trap, step
from conformance.mutants._floats import to_bfloat16
from conformance.mutants.model import Model
from conformance.policy.reference import PolicyError

# obsWindow 2: position 0 receives 1.0 in slot 0; a null step follows; the next weighted step
# lands in slot 1 for the reference but overwrites slot 0 when a null step moved the cursor.
NULL_STEP_WITNESS = Witness(
    params(3, 1, 2, 1),
    (step(0), step(1, [1.0]), step(2), step(3, [0.5, 1.0, 1.0]), EVICT),
)

# obsWindow 3: B (position 1) is admitted one write after A (position 0), and A's first weight
# (slot 0) is overwritten by the fourth write, so both rings end as [2^-53, 2^-53, 1]: identical
# slot for slot, summing to 1 + 2^-52, a tie that evicts A. With a cursor per position, B's ring
# holds the same weights rotated, [2^-53, 1, 2^-53], which sums to 1, and B goes. Identical
# rings sum alike in every arithmetic, so no numerics profile admits that (a witness on which
# only the order of the additions differs would pass under every profile but exact).
IDENTICAL_RINGS_WITNESS = Witness(
    params(4, 1, 3, 1),
    (
        step(0),
        step(1, [0.0]),
        step(2, [EPS53, EPS53]),
        step(3, [1.0, 1.0, 4.0]),
        step(4, [EPS53, EPS53, 4.0, 4.0]),
        EVICT,
    ),
)

# -- null and empty attention ----------------------------------------------------------------


@mutant(
    "null-advances-ring",
    rule="§2.3: a null attn writes nothing and does not move the cursor",
    origin="the cursor increment sits outside the `if (attn != NULL)` block, so the window "
    "counts calls rather than observed steps and keeps a stale weight for another cycle",
    keywords=("null step", "null attn", "null vector", "inert", "advances the ring"),
    witness=NULL_STEP_WITNESS,
)
class NullAdvancesRing(Model):
    """A null step writes nothing but still advances the cursor."""

    def on_null(self) -> None:
        self.slot = (self.slot + 1) % self.ring_size()


@mutant(
    "null-writes-zeros",
    rule="§2.3: a null attn writes nothing and does not move the cursor",
    origin="treating a missing attention vector as all-zero attention (`attn or [0] * n`)",
    keywords=("null step", "null attn", "null vector", "inert", "writes zeros"),
    witness=NULL_STEP_WITNESS,
)
class NullWritesZeros(Model):
    """A null step is recorded as a step of all-zero weights (written, cursor advanced)."""

    def read_null(self) -> Any:
        return [0.0] * len(self.kept)


@mutant(
    "null-as-empty",
    rule="§2.3: a null attn is not a list: it writes nothing and does not move the cursor",
    origin="a JSON binding that reads `null` into an empty array (Jackson's "
    "`AS_EMPTY` nulls, Go's nil slice, `attn ?? []`), which then fails the length check "
    "whenever anything is kept",
    keywords=("null read as an empty list", "null as []"),
)
class NullAsEmpty(Model):
    """Reads a null attn as the empty list: refused (wrong length) while anything is kept,
    and moving the cursor while nothing is."""

    def read_null(self) -> Any:
        return []


@mutant(
    "null-step-refused",
    rule="§2.3: attn may be null",
    origin="a reader that requires the attn array and answers a null as invalid",
    keywords=("null step refused",),
)
class NullStepRefused(Model):
    """Refuses a null attn with invalid-attention."""

    def read_null(self) -> Any:
        raise PolicyError("invalid-attention", "attn must be a list")


@mutant(
    "empty-attention-as-null",
    rule="§2.3: a list attn (even an empty one, when nothing is kept) advances the cursor",
    origin="an empty array and a missing one look the same through a C pointer-and-length API "
    "or a truthiness test (`if not attn`), so an empty list is treated as null",
    keywords=("empty list", "empty attention", "empty attn"),
    # Not moving the cursor rotates every ring by one slot, so only the summation order shows.
    witness=ring_trap(3, [[EPS53, EPS53, 1.0], [0.0, 0.0, 1.0]], lead=True),
)
class EmptyAttentionAsNull(Model):
    """An empty attention list (legal only while nothing is kept) is treated like null."""

    def read_empty(self) -> Any:
        return None


# -- storage -------------------------------------------------------------------------------------


@mutant(
    "float16-history",
    rule="§2.6: history is stored as float32 (the weights are float32, so storage loses nothing)",
    origin="a half-precision KV cache (`torch.float16`, `np.float16`) holding the attention "
    "history too: weights round to 11 significant bits and overflow past 65504",
    keywords=("float16",),
)
class Float16History(Model):
    """Stores each weight as float16 (round to nearest; infinity past 65504)."""

    def store(self, weights: list[float]) -> np.ndarray:
        with np.errstate(over="ignore"):  # past 65504 a float16 is infinite, as in the port
            return np.array(weights, dtype=np.float64).astype(np.float16).astype(np.float64)


@mutant(
    "bfloat16-history",
    rule="§2.6: history is stored as float32 (the weights are float32, so storage loses nothing)",
    origin="a bfloat16 KV cache (`torch.bfloat16`, the default dtype of many checkpoints) "
    "holding the attention history too: weights round to 8 significant bits",
    keywords=("bfloat16",),
)
class BFloat16History(Model):
    """Stores each weight as bfloat16 (round to nearest, ties to even)."""

    def store(self, weights: list[float]) -> np.ndarray:
        return to_bfloat16(weights)


# -- the cursor and the ring ---------------------------------------------------------------------


@mutant(
    "per-position-cursor",
    rule="§2.3: one ring cursor `slot` is shared by every kept position",
    origin="a ring buffer object per token, each with its own write index starting at 0, so "
    "each ring holds the same weights rotated and sums them in a different order",
    keywords=("shared cursor", "per-position cursor", "own cursor"),
    witness=IDENTICAL_RINGS_WITNESS,
)
class PerPositionCursor(Model):
    """Each kept position writes its ``t``-th observed weight to its own slot ``t % obsWindow``."""

    PER_ROW: ClassVar[dict[str, Any]] = {"own_cursor": lambda model: 0}

    def write(self, weights: np.ndarray) -> None:
        cursors = self.per_row["own_cursor"]
        size = self.ring_size()
        if len(weights):
            self.put(np.array(cursors, dtype=np.int64) % size, weights)
        self.per_row["own_cursor"] = [cursor + 1 for cursor in cursors]
        self.slot = (self.slot + 1) % size


# obsWindow 3, recentWindow 1: the first evict leaves the cursor at slot 1, where position 1
# holds 1.0 in slot 0. The next write lands in slot 1 for the reference (position 1 sums 3), but
# overwrites slot 0 when eviction reset the cursor (position 1 sums 2), so position 3's 2.5
# ranks above position 1 only there.
CURSOR_AFTER_EVICT_WITNESS = Witness(
    params(2, 1, 3, 1),
    (
        step(0, []),
        step(1, [1.0]),
        step(2, [1.0, 2.0]),
        step(3, [0.0, 1.0, 0.0]),
        EVICT,
        step(4, [0.0, 2.5]),
        EVICT,
    ),
)


@mutant(
    "cursor-reset-on-evict",
    rule="§2.4: eviction neither rotates, compacts nor resets a ring; the cursor does not move",
    origin="compacting the kept rows after an eviction and restarting the ring with them "
    "(`slot = 0` beside the compaction, as if the survivors' rings began afresh), so the next "
    "write overwrites slot 0 instead of the slot the cursor had reached",
    keywords=("resets the cursor", "cursor that loses its place"),
    witness=CURSOR_AFTER_EVICT_WITNESS,
)
class CursorResetOnEvict(Model):
    """An evict that removes anything puts the shared cursor back to slot 0."""

    def remove(self, victims: Iterable[int]) -> None:
        gone = list(victims)
        super().remove(gone)
        if gone:
            self.slot = 0


@mutant(
    "slot-from-call-count",
    rule="§2.3: the cursor moves once per recorded step; null and refused steps leave it",
    origin="the ring slot taken from a step clock, `calls % obsWindow`, where the clock "
    "counts every step call (null steps and refused calls included), as a decode loop's step "
    "counter does",
    keywords=("step clock", "calls % obswindow", "counts calls"),
    witness=Witness(
        params(2, 1, 2, 1), (step(0), step(2, [0.5]), step(2), step(3, [1.0, 1.0]), EVICT)
    ),
)
class SlotFromCallCount(Model):
    """Writes each recorded step to slot ``(step calls before it) % obsWindow``: every step
    call, null or refused, ticks the clock."""

    def write(self, weights: np.ndarray) -> None:
        size = self.ring_size()
        slot = (self.calls - 1) % size
        self.put(slot, weights)
        self.slot = (slot + 1) % size


@mutant(
    "slot-from-position",
    rule="§2.3: one shared cursor moves on by one slot per recorded step",
    origin="the ring slot taken from the position being admitted, `pos % obsWindow`, as if "
    "positions were step numbers (they are, until a gap or a null step)",
    keywords=("pos % obswindow", "slot from the position"),
    witness=Witness(params(1, 0, 2, 1), (step(0, []), step(1, [1.0]), step(3, [0.0, 0.5]), EVICT)),
)
class SlotFromPosition(Model):
    """Writes each recorded step to slot ``pos % obsWindow`` of the position it admits."""

    def write(self, weights: np.ndarray) -> None:
        size = self.ring_size()
        slot = int(self.admitting or 0) % size
        self.put(slot, weights)
        self.slot = (slot + 1) % size


@mutant(
    "cursor-sticks-at-end",
    rule="§2.3: the cursor moves to (slot + 1) % obsWindow, back to 0 after the last slot",
    origin="`slot = min(slot + 1, obsWindow - 1)` (or a bounds check in place of the modulo): "
    "once full, every step overwrites the last slot",
    keywords=("sticks on the last slot", "loses its place"),
)
class CursorSticksAtEnd(Model):
    """The cursor stops at the last slot instead of wrapping to 0."""

    def write(self, weights: np.ndarray) -> None:
        self.put(self.slot, weights)
        self.slot = min(self.slot + 1, self.ring_size() - 1)


@mutant(
    "window-one-long",
    rule="§2.4: a sum covers the last obsWindow observed steps",
    origin="a ring of `obsWindow + 1` slots (an inclusive bound, or one slot reserved for the "
    "step being written)",
    keywords=(
        "keeps two steps",
        "off-by-one window",
        "second ring slot",
        "stale second slot",
        "window of the wrong length",
    ),
)
class WindowOneLong(Model):
    """Keeps obsWindow + 1 slots per ring."""

    def ring_size(self) -> int:
        return self.params.obsWindow + 1


@mutant(
    "window-one-short",
    rule="§2.4: a sum covers the last obsWindow observed steps",
    origin="a ring of `obsWindow - 1` slots (an exclusive bound where an inclusive one was meant)",
    keywords=("off-by-one window length", "window of the wrong length"),
)
class WindowOneShort(Model):
    """Keeps obsWindow - 1 slots per ring (at least one)."""

    def ring_size(self) -> int:
        return max(1, self.params.obsWindow - 1)


@mutant(
    "latest-step-only",
    rule="§2.4: a sum covers the last obsWindow observed steps",
    origin="scoring by the latest step's weight alone, as TOVA does, whatever obsWindow says",
    keywords=("forgets old steps",),
)
class LatestStepOnly(Model):
    """Keeps one slot per ring: each score is the latest observed weight."""

    def ring_size(self) -> int:
        return 1


# -- admission -------------------------------------------------------------------------------------


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
class StaleHistoryOnReuse(Model):
    """An admitted position inherits the ring of the most recently evicted position."""

    def fresh_row(self, free: int) -> np.ndarray | float:
        if not self.freed:
            return 0.0
        row = np.zeros(self.width)
        ring = self.freed.pop()[: self.width]
        row[: len(ring)] = ring
        return row


@mutant(
    "stale-row-after-compaction",
    rule="§2.3: the admitted position starts with an all-zero history, never a stale one",
    origin="compacting the kept rows after an eviction and admitting into the first free row "
    "without clearing it: it still holds the row compaction moved down",
    keywords=("compaction leaves behind",),
)
class StaleRowAfterCompaction(Model):
    """An admitted position takes the first free row as it is: after an eviction, a copy of
    the row that was last before the compaction."""

    def fresh_row(self, free: int) -> np.ndarray | float:
        return self.hist[free, : self.width].copy()

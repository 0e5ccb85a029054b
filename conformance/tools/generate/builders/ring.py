"""The history ring (SPEC.md §2.3): null steps, the cursor, wrap-around, window lengths, zeroed
admission, and the two reductions of SPEC.md §2.7 (TOVA and H2O).

Most vectors here admit two entries A (position 0) and B (position 1) by null steps, so that
nothing is written to them yet, and then steer their rings with writes chosen so that the
mistake under test swaps which of the two is evicted.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.tools.generate.builders import Draft, builder, params
from conformance.tools.generate.builders._random import seeded_steps

BIG = 2.0**53  # a float32; 2^53 + 1 rounds back to 2^53 in float64 (ties to even)


@builder
def null_steps() -> Iterator[Draft]:
    tags = ("null-step", "ring")
    # obsWindow 2. Writes 1 and 2 fill slots 0 and 1 (A: 0 then 1, B: 1 then 0); the null
    # step must leave the cursor at 0, so write 3 replaces write 1 and A (1.5) beats B (0.5).
    # Had the null moved the cursor, write 3 would replace write 2 and B would win.
    yield (
        Draft(
            "null/does-not-advance-ring",
            pins="A null step leaves the ring cursor where it is, so the next write replaces "
            "the oldest observed step: A keeps its weight from write 2 and B is evicted.",
            catches="a null vector that advances the ring (the next write lands one slot on and "
            "a stale weight survives), or one that writes zeros and advances.",
            tags=tags,
            params=params(5, 4, 2, 1),
        )
        .nulls([0, 1])
        .attend(2, {0: 0.0, 1: 1.0})
        .attend(3, {0: 1.0, 1: 0.0})
        .step(4, None)
        .attend(5, {0: 0.5, 1: 0.5})
        .evict()
    )
    # Right after the null step, slot 0 still holds write 1 (B: 2.0), so A (1.0) is evicted.
    yield (
        Draft(
            "null/writes-nothing",
            pins="A null step writes nothing: write 1 is still in slot 0 afterwards, so B "
            "(sum 2) outscores A (sum 1) and A is evicted.",
            catches="a null vector that writes zeros into the current slot (B's 2.0 is lost "
            "and B is evicted instead), or a null read as an empty list, refused for its length.",
            tags=tags,
            params=params(4, 3, 2, 1),
        )
        .nulls([0, 1])
        .attend(2, {0: 0.0, 1: 2.0})
        .attend(3, {0: 1.0, 1: 0.0})
        .step(4, None)
        .evict()
    )
    yield (
        Draft(
            "null/only-null-steps",
            pins="A run of null steps only: every sum is 0, so each evict takes the lowest "
            "unprotected positions, several at a time.",
            catches="a null step refused or treated as an error, a crash on a ring that was "
            "never written, and one victim per call.",
            tags=(*tags, "ties", "eviction-count"),
            params=params(3, 1, 4, 3),
        )
        .nulls(range(8))
        .evict()
        .nulls(range(8, 11))
        .evict()
    )


@builder
def ring_cursor() -> Iterator[Draft]:
    # obsWindow 3 and six writes: A's 9s fall out of the window, B's late 1s stay in it.
    a_writes = [9.0, 9.0, 9.0, 0.0, 0.0, 1.0]
    b_writes = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    draft = Draft(
        "ring/wrap-around",
        pins="After six writes into obsWindow 3 the ring holds only the last three: A sums "
        "1 and B 2, so A is evicted although A received far more attention overall.",
        catches="a ring that never wraps (cumulative scores, which would evict B), or a "
        "cursor that sticks on the last slot.",
        tags=("ring", "obs-window"),
        params=params(7, 6, 3, 1),
    ).nulls([0, 1])
    for t, (a, b) in enumerate(zip(a_writes, b_writes, strict=True)):
        draft.attend(2 + t, {0: a, 1: b})
    yield draft.evict()
    # The first step's [] (nothing kept) still moves the cursor to slot 1, so A's writes
    # 1, 2^53, 1 land in slots 1, 2, 0 and sum (index order) to 2^53 + 2 > B's 2^53.
    # Without that move they land in slots 0, 1, 2 and sum to 2^53, a tie that evicts A.
    yield (
        Draft(
            "ring/empty-attention-advances",
            pins="An empty attention list (nothing kept yet) is not null: it moves the cursor. "
            "A's three writes therefore land in slots 1, 2, 0, and its index-order sum "
            "2^53 + 2 beats B's 2^53, so B is evicted.",
            catches="an empty list treated like null (cursor unmoved), and chronological "
            "summation from the cursor; both make A's sum 2^53 and evict A.",
            tags=("ring", "summation"),
            params=params(3, 2, 3, 1),
        )
        .step(0, [])
        .attend(1, {0: 1.0})
        .attend(2, {0: BIG, 1: BIG})
        .attend(3, {0: 1.0})
        .evict()
    )


@builder
def stale_history() -> Iterator[Draft]:
    # Positions 0, 1 and 2 all receive 4.0; the tie evicts 0 and 1, freeing storage that holds
    # [4, 0, 0, 0]. Position 4 is admitted next and must start from zeros: its sum is then 1,
    # and the final evict takes 3 (sum 2) and 4. Inheriting a freed row makes 4 sum to 5.
    yield (
        Draft(
            "ring/stale-history-on-slot-reuse",
            pins="A position admitted after an eviction starts with an all-zero history, "
            "even where its storage held an evicted position's weights: position 4 sums to 1 "
            "and is evicted with 3.",
            catches="stale history on slot reuse: the row of an evicted position (or the row "
            "compaction leaves behind) handed to the new position uncleared, which scores it 5 "
            "and evicts 2 instead.",
            tags=("stale-history", "ring"),
            params=params(2, 1, 4, 1),
        )
        .nulls([0, 1, 2])
        .attend(3, {0: 4.0, 1: 4.0, 2: 4.0})
        .evict()
        .attend(4)
        .attend(5, {2: 1.0, 3: 2.0, 4: 1.0})
        .evict()
    )


@builder
def window_lengths() -> Iterator[Draft]:
    # obsWindow 1: only the latest write counts. The previous write gave position 0 a 9.
    yield (
        Draft(
            "ring/obs-window-one",
            pins="With obsWindow 1 each sum is the latest observed weight alone; pooling "
            "(kernel 3) then runs over those, and positions 0 and 1 are evicted although 0 "
            "had 9 one step earlier.",
            catches="an off-by-one window that keeps two steps (position 0 would survive).",
            tags=("obs-window", "ring", "pooling"),
            params=params(5, 1, 1, 3),
        )
        .nulls(range(5))
        .attend(5, {0: 9.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0})
        .attend(6, {0: 0.0, 1: 1.0, 2: 1.0, 3: 2.0, 4: 3.0, 5: 3.0})
        .evict()
    )
    yield seeded_steps(
        Draft(
            "reduction/h2o-window-longer-than-run",
            pins="poolKernel 1 with obsWindow 64, longer than the 40 observed steps: each "
            "score is the cumulative attention since admission (H2O), the 2 newest protected; "
            "one evict per step.",
            catches="a window that forgets old steps (scores of the latest steps only, as in "
            "TOVA).",
            tags=("reduction-h2o", "obs-window"),
            params=params(6, 2, 64, 1),
        ),
        seed=2,
        steps=40,
        levels=(0.0, 0.0625, 0.125, 0.25, 0.5),
    )
    yield seeded_steps(
        Draft(
            "reduction/tova-kernel-one-window-one",
            pins="poolKernel 1 with obsWindow 1 is TOVA: each evict takes the position with the "
            "lowest latest weight (0 for the newest), ties to the lower position; with "
            "weights from a few levels, ties are common.",
            catches="any divergence in the simplest setting: a stale second slot, pooling that "
            "is not switched off at kernel 1, ties to the higher position.",
            tags=("reduction-tova", "ties", "obs-window"),
            params=params(5, 1, 1, 1),
        ),
        seed=3,
        steps=40,
        levels=(0.0, 0.25, 0.5, 1.0),
    )

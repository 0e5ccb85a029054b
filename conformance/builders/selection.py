"""Selecting victims (SPEC.md §2.4 steps 4-5 and the count ``k``): ties to the lower position,
victims in ascending order, exactly ``max(0, len(kept) - budget)`` of them per call."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.builders import Draft, builder, params


@builder
def ties() -> Iterator[Draft]:
    tags = ("ties",)
    yield (
        Draft(
            "ties/lower-position-first",
            pins="Equal pooled scores evict the lower position: 1 and 2 both sum 0.5, "
            "so 1 is evicted.",
            catches="ties broken toward the higher position (a reversed comparison, or a "
            "max-heap of the keepers), which evicts 2.",
            tags=tags,
            params=params(3, 1, 2, 1),
        )
        .nulls([0, 1, 2])
        .attend(3, {0: 1.0, 1: 0.5, 2: 0.5})
        .evict()
    )
    yield (
        Draft(
            "ties/many-candidates",
            pins="Twelve candidates share the score 0 after a run of zero attention (only "
            "position 6 has weight): the six evicted are the six lowest positions, returned "
            "ascending, in one call.",
            catches="ties broken toward the higher position or by an unstable sort's accident "
            "(quicksort, heap order), and one victim per call.",
            tags=(*tags, "eviction-count", "victim-order"),
            params=params(7, 1, 3, 1),
        )
        .nulls(range(12))
        .attend(12, {6: 0.25})
        .evict()
    )
    # Kernel 3 over sums 2 3 1 3 7: positions 0, 1 and 2 all pool to 3. Ranked by position, 0
    # goes; ranked by raw sum first, 2 (sum 1) would go.
    yield (
        Draft(
            "ties/pooled-not-raw",
            pins="Equal pooled scores are broken by position alone, not by the raw sum: "
            "positions 0, 1, 2 (sums 2, 3, 1) all pool to 3, and 0 is evicted.",
            catches="ties broken by the raw (unpooled) sum before the position, which evicts 2.",
            tags=(*tags, "pooling"),
            params=params(5, 1, 2, 3),
        )
        .nulls(range(5))
        .attend(5, {0: 2.0, 1: 3.0, 2: 1.0, 3: 3.0, 4: 7.0})
        .evict()
    )


@builder
def victim_order() -> Iterator[Draft]:
    yield (
        Draft(
            "order/victims-ascending",
            pins="Victims come back in ascending position order: 5 ranks lowest (0.125) and 2 "
            "next (0.25), and the evict returns [2, 5].",
            catches="victims returned in rank order ([5, 2]) or in the order of some internal "
            "storage.",
            tags=("victim-order",),
            params=params(6, 1, 2, 1),
        )
        .nulls(range(7))
        .attend(7, {0: 1.0, 1: 2.0, 2: 0.25, 3: 3.0, 4: 4.0, 5: 0.125, 6: 5.0})
        .evict()
    )


@builder
def eviction_count() -> Iterator[Draft]:
    tags = ("eviction-count",)
    draft = Draft(
        "evict/many-victims-one-call",
        pins="Twelve steps pass without an evict; the one evict then returns all "
        "len(kept) - budget = 9 victims at once.",
        catches="one victim per call, and storage sized for budget + 1 entries (kept is "
        "allowed to grow past it between evicts).",
        tags=(*tags, "victim-order"),
        params=params(3, 1, 4, 3),
    )
    for pos in range(12):
        draft.attend(pos, {p: 0.0625 * ((p * 5) % 7) for p in range(pos)})
    yield draft.evict()
    yield (
        Draft(
            "evict/nothing-to-evict",
            pins="evict with len(kept) <= budget returns [] and changes nothing: before any "
            "step, with 2 of 4 kept, with exactly 4, and twice in a row after an eviction.",
            catches="an unsigned len(kept) - budget that wraps to a huge count below budget, "
            "an evict that always removes one, and a second evict that evicts again.",
            tags=tags,
            params=params(4, 1, 2, 3),
        )
        .evict()
        .attend(0)
        .attend(1, {0: 1.0})
        .evict()
        .attend(2, {0: 1.0, 1: 0.5})
        .attend(3, {0: 1.0, 1: 0.5, 2: 0.25})
        .evict()
        .attend(4, {0: 1.0, 1: 0.5, 2: 0.25, 3: 2.0})
        .evict(2)
    )

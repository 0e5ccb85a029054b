"""Selecting victims (SPEC.md §2.4 steps 4-5 and the count ``k``): ties to the lower position,
victims in ascending order, exactly ``max(0, len(kept) - budget)`` of them per call."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.tools.generate.builders import Draft, builder, params


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
            catches="ties broken toward the higher position or by a topk of the keepers, and "
            "one victim per call.",
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
            catches="victims returned in rank order ([5, 2], as torch.topk(-pooled, k).indices "
            "returns them) or in the order they are deleted in (from the highest index down: "
            "[5, 2] again).",
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
        catches="one victim per call, storage sized for budget + 1 entries (kept is "
        "allowed to grow past it between evicts), and a count off by one that leaves budget - 1 "
        "positions (evicting while len(kept) >= budget).",
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


#: Equal-score group sizes for the unstable-sort vectors: each is above every insertion-sort
#: cut-off below which the common unstable sorts happen to keep equal keys in order (Go's
#: ``sort.Slice`` 12, libstdc++'s ``std::sort`` 16, Rust's ``sort_unstable`` 20, libc++'s 30;
#: vectors/README.md lists them), and 1025 and 2049 are above the sizes at which numpy's
#: AVX-512 argsort and argpartition switch to their vectorised partitions.
TIE_GROUPS = (17, 33, 129, 1025, 2049)


def _tie_row(
    id: str, weights: list[float], victims: int, *, kernel: int = 1, pins: str, catches: str
) -> Draft:
    """``len(weights)`` candidates admitted by null steps, one step giving candidate ``i`` the
    weight ``weights[i]`` (and admitting one protected position), then one evict of
    ``victims`` positions: the ranking is decided by ``weights`` (pooled with ``kernel``)."""
    count = len(weights)
    draft = Draft(
        id,
        pins=pins,
        catches=catches,
        tags=("ties", "eviction-count") + (("pooling",) if kernel > 1 else ()),
        params=params(count + 1 - victims, 1, 1, kernel),
    ).nulls(range(count))
    return draft.attend(count, dict(enumerate(weights))).evict()


_UNSTABLE = (
    "an unstable sort or partial selection ranking by pooled score alone (numpy's default "
    "argsort, argpartition, a topk of the keepers{more}): they break ties in no fixed order, "
    "reordering equal keys in groups this large, so the victims are not the lowest positions."
)
#: All-equal rows: numpy's vectorised argsort and argpartition (AVX2, AVX-512) leave them in
#: order, so only a selection that reorders them even then is named.
_ALL_EQUAL = (
    "a topk of the keepers (np.argpartition(-scores, keep - 1), torch.topk) or another "
    "unstable selection that reorders equal keys: the victims are not the lowest positions."
)
#: Said in every tie vector's pins: the mistake is not numpy's alone.
_OTHER_SORTS = (
    " C++ std::sort, nth_element and partial_sort, Go's sort.Slice and Rust's sort_unstable_by "
    "are not stable either: rank by (pooled, position)."
)


@builder
def unstable_sorts() -> Iterator[Draft]:
    for group in TIE_GROUPS:
        higher = group // 2 + 1
        yield _tie_row(
            f"ties/group-of-{group}-after-higher",
            [1.0] * higher + [0.0] * group,
            group // 2,
            pins=f"{higher} candidates with weight 1, then a group of {group} with weight 0: "
            f"the {group // 2} victims are the lowest positions of the zero group, "
            f"{higher} to {higher + group // 2 - 1}." + _OTHER_SORTS,
            catches=_UNSTABLE.format(more=""),
        )
    for group in (17, 129, 1025):
        yield _tie_row(
            f"ties/all-equal-{group}",
            [0.0] * group,
            group // 2,
            pins=f"All {group} candidates score 0: the {group // 2} victims are positions 0 to "
            f"{group // 2 - 1}." + _OTHER_SORTS,
            catches=_ALL_EQUAL,
        )
    for group in (33, 1025):
        higher = group // 2
        # A ramp of distinct higher scores, then a block alternating 0.25 and 0.5: every 0.25
        # goes, and the k-th victim falls inside the equal 0.5 block.
        block = [0.25 if i % 7 == 0 else 0.5 for i in range(group)]
        victims = block.count(0.25) + block.count(0.5) // 3
        yield _tie_row(
            f"ties/block-straddling-kth-{group}",
            [float(2 + i % 5) for i in range(higher)] + block,
            victims,
            pins=f"Distinct higher scores, then {group} candidates scoring 0.25 (every seventh) "
            f"or 0.5: all {block.count(0.25)} at 0.25 go, and the remaining "
            f"{victims - block.count(0.25)} victims are the lowest positions of the 0.5 block, "
            "which straddles the k-th victim." + _OTHER_SORTS,
            catches=_UNSTABLE.format(more=", a bounded heap keyed on the score alone"),
        )
    yield _tie_row(
        "ties/one-victim-among-1025",
        [1.0] * 512 + [0.0] * 1025 + [1.0] * 512,
        1,
        pins="A group of 1025 candidates with weight 0 between two groups of 512 with weight "
        "1: the single victim is the lowest zero, position 512.",
        catches="a minimum taken from an unstable sort or partial selection (the first index "
        "of numpy's default argsort, argpartition with kth 0 on SIMD builds) that breaks the "
        "tie among the zeros in no fixed order and returns some zero other than the first.",
    )
    for group in (129, 1025):
        higher = group // 2
        # Kernel 3: a peak of 1 at every third entry of the block gives every entry of the
        # block the pooled score 1 though the raw sums alternate 1, 0, 0.
        block = [1.0 if i % 3 == 1 else 0.0 for i in range(group)]
        yield _tie_row(
            f"ties/pooled-group-of-{group}",
            [2.0] * higher + block,
            group // 2,
            kernel=3,
            pins=f"{higher} candidates with weight 2, then {group} whose raw sums run 0, 1, 0 "
            f"and pool (kernel 3) to 1 each: the {group // 2} victims are the lowest positions "
            "of that pooled group, whatever their raw sums." + _OTHER_SORTS,
            catches=_UNSTABLE.format(more="").removesuffix(".")
            + "; and ties among pooled scores broken by the raw sum.",
        )

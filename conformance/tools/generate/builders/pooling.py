"""Max pooling over kept entries and the protected recent window (SPEC.md §2.4 steps 2-3).

Most vectors admit their entries by null steps (no history), give them sums with one write
step, and evict once; the write step's own position is the newest entry, with sum 0.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conformance.tools.generate.builders import Draft, builder, params


def _one_write(draft: Draft, sums: Sequence[float], evict: bool = True) -> Draft:
    """Admit positions ``0 .. len(sums) - 1`` by null steps, then one step that gives position
    ``p`` the weight ``sums[p]`` (and admits ``len(sums)``), then an evict."""
    count = len(sums)
    draft.nulls(range(count)).attend(count, dict(enumerate(sums)))
    return draft.evict() if evict else draft


@builder
def kernel_radius() -> Iterator[Draft]:
    # One peak (1.0) among zeros: exactly the entries within r of it are defended, so the
    # victims are the two entries left of the band and the two right of it.
    for kernel in (3, 5, 7):
        radius = (kernel - 1) // 2
        peak = 2 + radius
        count = 2 * radius + 5
        yield _one_write(
            Draft(
                f"pooling/kernel-{kernel}-radius-{radius}",
                pins=f"poolKernel {kernel} defends exactly the entries within {radius} of a "
                f"peak: with one peak at position {peak} among zeros, the victims are the "
                "two entries on each side of that band.",
                catches="an off-by-one radius (r = poolKernel / 2 + 1, or r - 1), the "
                "kernel used as the radius, and forward-only pooling over [i, i + k - 1].",
                tags=("pooling",),
                params=params(count - 3, 1, 2, kernel),
            ),
            [1.0 if p == peak else 0.0 for p in range(count)],
        )
    # Max keeps the run 0-2 (10, 10, 10) below the isolated 12 at position 4, so 0 is evicted;
    # a mean would favour the run and evict 4, whose neighbours are zeros.
    yield _one_write(
        Draft(
            "pooling/max-not-average",
            pins="Pooling takes the maximum, not the mean: sums 10, 10, 10, 0, 12, 0 pool "
            "(kernel 3) to 10, 10, 10, 12, 12, 12, so position 0 is evicted.",
            catches="average pooling instead of max (the official SnapKV default, avg_pool1d), "
            "which evicts position 4.",
            tags=("pooling",),
            params=params(6, 1, 2, 3),
        ),
        [10.0, 10.0, 10.0, 0.0, 12.0, 0.0],
    )
    yield _one_write(
        Draft(
            "pooling/kernel-wider-than-list",
            pins="poolKernel 9 over 4 kept entries: every window is clamped to the whole list, "
            "so every pooled score is the maximum (1) and the two lowest positions go.",
            catches="out-of-bounds reads when the kernel is wider than the list, and a kernel "
            "silently capped or ignored (which would evict 1 and 2).",
            tags=("pooling", "pool-clamp"),
            params=params(2, 1, 2, 9),
        ),
        [1.0, 0.0, 0.0],
    )


@builder
def clamping() -> Iterator[Draft]:
    tags = ("pooling", "pool-clamp")
    yield _one_write(
        Draft(
            "pooling/clamp-left-defended",
            pins="The window of the first entry is clamped to [0, r], not dropped: position 0 "
            "(sum 0) is defended by position 1 (sum 6), so position 3 is evicted.",
            catches="edge entries left unpooled ('valid' convolution), or pooling skipped, "
            "which evicts position 0.",
            tags=tags,
            params=params(7, 1, 2, 3),
        ),
        [0.0, 6.0, 0.0, 0.0, 0.0, 1.0, 1.0],
    )
    # Kernel 5: wrapped round, position 0's window would reach the protected position 6 (9).
    yield _one_write(
        Draft(
            "pooling/clamp-left-no-wrap",
            pins="The window of the first entry does not wrap round to the end of the list: "
            "position 0 (kernel 5, window clamped to entries 0-2, all 0) is evicted although "
            "the second-newest entry holds a 9.",
            catches="wrap-around pooling (a circular shift such as np.roll, or indices taken "
            "modulo the length), which defends position 0 and evicts position 1.",
            tags=tags,
            params=params(7, 2, 2, 5),
        ),
        [0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 9.0],
    )
    # recentWindow 0, so the newest entry (sum 0) is a candidate at the right edge.
    yield _one_write(
        Draft(
            "pooling/clamp-right-no-wrap",
            pins="The window of the last entry does not wrap round to the start: with "
            "recentWindow 0 the newest entry (sum 0, neighbour 0) is evicted although "
            "position 0 holds a 9.",
            catches="wrap-around pooling at the right edge, which defends the newest entry "
            "and evicts position 2.",
            tags=(*tags, "recent-window"),
            params=params(4, 0, 2, 3),
        ),
        [9.0, 5.0, 5.0, 0.0],
    )
    yield _one_write(
        Draft(
            "pooling/clamp-right-defended",
            pins="The window of the last entry is clamped to [n - 1 - r, n - 1]: with "
            "recentWindow 0 the newest entry (sum 0) is defended by its left neighbour (9), "
            "so position 0 is evicted.",
            catches="edge entries left unpooled at the right end, which evicts the newest entry.",
            tags=(*tags, "recent-window"),
            params=params(4, 0, 2, 3),
        ),
        [2.0, 3.0, 3.0, 9.0],
    )


@builder
def adjacency() -> Iterator[Draft]:
    # obsWindow 1: each write replaces the last. Write 1 makes 3 and 4 the victims (their
    # neighbourhood is all 0), leaving kept 0 1 2 5 6 7. Write 2 gives 0 1 2 5 6 7 the sums
    # 8 2 0 10 6 9: position 2's kept neighbours are 1 and 5, and 5 (10) defends it.
    yield (
        Draft(
            "pooling/across-eviction-holes",
            pins="After positions 3 and 4 are evicted, positions 2 and 5 are adjacent kept "
            "entries: 5 (sum 10) defends 2 (sum 0) across the hole, so 0 is evicted next.",
            catches="pooling over position numbers (a window of positions [p - r, p + r]), "
            "which finds no neighbour at 3 and evicts position 2.",
            tags=("pool-adjacency", "pooling", "gaps"),
            params=params(6, 1, 1, 3),
        )
        .nulls(range(7))
        .attend(7, {0: 9.0, 1: 9.0, 6: 9.0})
        .evict()
        .attend(8, {0: 8.0, 1: 2.0, 2: 0.0, 5: 10.0, 6: 6.0, 7: 9.0})
        .evict()
    )
    yield (
        Draft(
            "pooling/gapped-positions",
            pins="Pooling runs over kept entries however far apart their positions are: "
            "positions 0, 100, 200, 300 with sums 0, 5, 0, 0 and kernel 3 pool to 5, 5, 5, 0, "
            "so 300 is evicted.",
            catches="pooling over position numbers, under which no entry has a neighbour and "
            "0 is evicted; and indices derived from positions.",
            tags=("pool-adjacency", "gaps"),
            params=params(4, 1, 2, 3),
        )
        .nulls([0, 100, 200, 300])
        .attend(400, {100: 5.0})
        .evict()
    )


@builder
def recent_window() -> Iterator[Draft]:
    tags = ("recent-window",)
    # Candidates 0-3 (sums 6 5 4 0); the protected position 4 (sum 9) defends 3.
    yield _one_write(
        Draft(
            "recent/defends-neighbour",
            pins="Protected recent entries take part in pooling: position 4 (protected, sum 9) "
            "defends candidate 3 (sum 0), so candidate 2 (pooled 5) is evicted.",
            catches="recent entries excluded from pooling (3 would be evicted), as the "
            "official SnapKV code and kvpress leave out the observation window, and recent "
            "entries made candidates (the newest, pooled 0, would be evicted).",
            tags=(*tags, "pooling"),
            params=params(6, 3, 2, 3),
        ),
        [6.0, 5.0, 4.0, 0.0, 9.0, 0.0],
    )
    # Kernel 1. Sums: 0->5, 1->6, 2->7, 3->1, 40->0 and 100 (newest) 0. recentWindow 2
    # protects the two highest kept entries, 40 and 100, whatever the gap between them.
    yield (
        Draft(
            "recent/window-off-by-one",
            pins="recentWindow 2 protects exactly the two highest kept positions (40 and 100), "
            "counted in kept entries, not position numbers: candidate 3 (sum 1) is evicted, "
            "not 40 (sum 0).",
            catches="an off-by-one recent window (protecting 1 evicts 40, protecting 3 evicts "
            "0), and recency measured in position numbers (pos > last - recentWindow), which "
            "protects only 100.",
            tags=(*tags, "gaps"),
            params=params(5, 2, 2, 1),
        )
        .nulls([0, 1, 2, 3, 40])
        .attend(100, {0: 5.0, 1: 6.0, 2: 7.0, 3: 1.0})
        .evict()
    )
    yield (
        Draft(
            "recent/window-zero",
            pins="recentWindow 0 protects nothing: the newest entry (sum 0) is a candidate and "
            "is evicted at every call.",
            catches="candidates taken as kept[:-recentWindow], which is empty when "
            "recentWindow is 0, and a newest entry protected by default.",
            tags=tags,
            params=params(3, 0, 2, 1),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 2.0})
        .attend(3, {0: 1.0, 1: 2.0, 2: 3.0})
        .evict()
        .attend(4, {0: 0.5, 1: 0.25, 2: 3.0})
        .evict()
    )

"""Atomicity and the policy's lifecycle: a refused call changes nothing (SPEC.md §2.3), ``new``
replaces the policy and a refused ``new`` keeps it (SPEC.md §3.2).

Each vector sends a refused call that *would* change the outcome had it taken effect (written
weights, an admitted position, a moved cursor, new parameters), then calls whose victims
prove it did not.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.tools.generate.builders import Draft, builder, params

BIG = 2.0**53  # a float32; adding 1.0 to it in float64 rounds back to it (ties to even)


@builder
def refused_steps() -> Iterator[Draft]:
    tags = ("atomicity",)
    # A=0, B=1; write 1 gives A 1 and B 2. The refused step (position 2 again) carries weights
    # that would make A outscore B and would advance the cursor.
    yield (
        Draft(
            "atomicity/refused-position-writes-nothing",
            pins="A step refused for its position (2 again) writes none of its weights, "
            "admits nothing and leaves the cursor: the evicts that follow give what they "
            "would have given had it never been sent.",
            catches="a refused step that writes its attention before the position is "
            "judged (the first evict would take B, not A), that advances the ring cursor "
            "(the last evict would take B), that still admits its position (an extra "
            "victim), or whose refusal ticks a protected window counted in step calls (the "
            "first evict would take 2).",
            tags=(*tags, "position"),
            params=params(2, 1, 2, 1),
        )
        .nulls([0, 1])
        .attend(2, {0: 1.0, 1: 2.0})
        .refuse_step("invalid-position", 2, [5.0, 0.0, 0.0])
        .evict()
        .attend(3, {1: 0.0, 2: 0.5})
        .step(4, None)
        .evict()
    )
    yield (
        Draft(
            "atomicity/refused-position-not-admitted",
            pins="A step refused for its position (3 again) is not admitted: the next evict "
            "removes exactly len(kept) - budget = 0 positions, and the one after a good step "
            "removes 1.",
            catches="a refused step that still admits its position (kept grows and the evict "
            "returns a victim too many).",
            tags=(*tags, "position", "eviction-count"),
            params=params(3, 1, 1, 1),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 2.0})
        .attend(3, {0: 1.0, 1: 2.0, 2: 3.0})
        .evict()
        .refuse_step("invalid-position", 3, None)
        .evict()
        .attend(4, {1: 1.0, 2: 2.0, 3: 3.0})
        .evict()
    )
    yield (
        Draft(
            "atomicity/refused-attention-admits-nothing",
            pins="A step refused for its attention does not admit its position: the same "
            "position is then admitted by the next step, which must succeed.",
            catches="a refused step that still admits its position (the retry at the same "
            "position is then refused as not increasing).",
            tags=(*tags, "attention"),
            params=params(2, 1, 2, 1),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .refuse_step("invalid-attention", 2, [1.0, -1.0])
        .attend(2, {0: 1.0, 1: 0.5})
        .evict()
    )
    # A=0, B=1, C=2 with sums 1, 2, 3; the refused list starts with a large valid weight for A
    # and ends with a negative one, so a port that writes while it checks leaves A with 10.
    yield (
        Draft(
            "atomicity/refused-attention-partial-write",
            pins="A step refused for a negative last weight writes none of the valid weights "
            "before it: the evict still takes A (sum 1), not B.",
            catches="a partial write: weights written one by one while being checked, so the "
            "refusal leaves attn[0] in the ring.",
            tags=(*tags, "attention"),
            params=params(3, 1, 2, 1),
        )
        .nulls([0, 1, 2])
        .attend(3, {0: 1.0, 1: 2.0, 2: 3.0})
        .refuse_step("invalid-attention", 4, [9.0, 0.0, 0.0, -1.0])
        .evict()
    )
    # obsWindow 2: writes 1 and 2 fill slots 0 and 1, so the cursor is back at 0 when the
    # refused step comes. Write 3 must overwrite slot 0 (A's 2.0, B's 0.0); a cursor moved by
    # the refusal would overwrite slot 1 instead and reverse the order of A and B.
    yield (
        Draft(
            "atomicity/refused-attention-cursor-unmoved",
            pins="A step refused for the length of its list does not move the ring cursor: "
            "the next write overwrites slot 0, so A (sum 0) is evicted rather than B.",
            catches="a refused step that advances the ring cursor before (or without) writing.",
            tags=(*tags, "attention", "ring"),
            params=params(4, 3, 2, 1),
        )
        .nulls([0, 1])
        .attend(2, {0: 2.0, 1: 0.0})
        .attend(3, {0: 0.0, 1: 1.0})
        .refuse_step("invalid-attention", 4, [0.0, 0.0])
        .attend(4)
        .evict()
    )


@builder
def lifecycle() -> Iterator[Draft]:
    first = params(3, 1, 2, 1)
    yield (
        Draft(
            "lifecycle/refused-new-keeps-policy",
            pins="A refused new (budget 2 but an even poolKernel) leaves the earlier policy in "
            "place: its kept positions, histories and budget 3 decide the next evicts, and "
            "positions keep increasing from the last admitted.",
            catches="a refused new that clears the current policy, or that assigns some "
            "fields (budget 2) before it finds the bad one.",
            tags=("lifecycle", "atomicity", "params"),
            params=first,
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 2.0})
        .new(params(2, 0, 1, 2), refuse="invalid-params")
        .attend(3, {0: 1.0, 1: 2.0, 2: 3.0})
        .evict()
        .refuse_step("invalid-position", 3, None)
        .attend(4, {1: 0.5, 2: 4.0, 3: 1.0})
        .evict()
    )
    # Policy 1 leaves its cursor at 1 (three non-null steps into obsWindow 2) and 7 as the last
    # position. Policy 2 (obsWindow 3) restarts at position 0 and its [] moves the cursor to 1,
    # so A=0 receives 1, 2^53, 1 in slots 1, 2, 0 and sums (index order) 1 + 1 + 2^53 = 2^53 + 2,
    # beating B (exactly 2^53). From a stale cursor the same writes land in slots 2, 0, 1 and
    # sum to 2^53 (each 1 is lost to rounding): a tie with B, which evicts A instead.
    yield (
        Draft(
            "lifecycle/new-replaces-policy",
            pins="A second new replaces the whole policy: no kept positions (the first list "
            "is []), positions restart at 0, and the ring cursor restarts at slot 0, which "
            "the final evict can tell apart through the order of a float64 sum.",
            catches="a new that keeps the last admitted position (position 0 refused), the "
            "kept list (wrong attention length) or the ring cursor (a different victim). A kept "
            "cursor only rotates every ring alike, which changes the order of the additions and "
            "nothing else, so under `--numerics` every profile but exact admits it (SPEC.md "
            "A.4).",
            tags=("lifecycle", "ring", "summation"),
            params=first,
        )
        .attend(5)
        .attend(6, {5: 1.0})
        .attend(7, {5: 1.0, 6: 1.0})
        .evict()
        .new(params(3, 2, 3, 1))
        .step(0, [])
        .attend(1, {0: 1.0})
        .attend(2, {0: BIG, 1: BIG})
        .attend(3, {0: 1.0})
        .evict()
    )

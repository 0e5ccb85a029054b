"""Limits (SPEC.md §2.1, §2.3): the largest and smallest parameters, positions near
``2^31 - 1`` and above 16 bits, and the largest seed."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.policy.reference import INT31_MAX
from conformance.tools.generate.builders import Draft, builder, params


@builder
def parameter_limits() -> Iterator[Draft]:
    tags = ("limits", "params")
    yield (
        Draft(
            "limits/maximum-params-accepted",
            pins="Every parameter at its maximum (budget, obsWindow and poolKernel 2^31 - 1, "
            "recentWindow 2^31 - 2) is accepted and works: steps succeed and evicts return [].",
            catches="memory sized by the parameters up front (budget x obsWindow floats, or "
            "budget + 1 rows), and 32-bit overflow in budget + 1.",
            tags=tags,
            params=params(INT31_MAX, INT31_MAX - 1, INT31_MAX, INT31_MAX),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .step(2, None)
        .attend(3, {0: 0.5, 1: 0.25, 2: 2.0})
        .evict()
    )
    yield (
        Draft(
            "limits/maximum-window-and-kernel",
            pins="obsWindow and poolKernel 2^31 - 1 with budget 3: the ring never wraps, and "
            "every pooling window spans the whole kept list, so all pooled scores are equal and "
            "the lowest positions go.",
            catches="a ring allocated at obsWindow columns, and out-of-bounds pooling when the "
            "kernel dwarfs the list.",
            tags=(*tags, "pool-clamp", "ties"),
            params=params(3, 1, INT31_MAX, INT31_MAX),
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 4.0})
        .attend(3, {0: 1.0, 1: 4.0, 2: 0.5})
        .attend(4, {0: 1.0, 1: 4.0, 2: 0.5, 3: 0.25})
        .evict()
        .attend(5, {2: 0.5, 3: 0.25, 4: 0.125})
        .evict()
    )
    draft = Draft(
        "limits/minimum-params",
        pins="The smallest parameters (budget 1, recentWindow 0, obsWindow 1, poolKernel 1) "
        "work: after each step one position is kept, the one with the higher latest weight "
        "(the newest has weight 0).",
        catches="off-by-one bounds that refuse budget 1 or obsWindow 1, and an empty "
        "candidate list when recentWindow is 0.",
        tags=(*tags, "reduction-tova", "recent-window"),
        params=params(1, 0, 1, 1),
    )
    draft.attend(0).evict()
    for pos in range(1, 7):
        draft.step(pos, [[0.5, 0.0, 2.0, 0.0, 1.0, 0.25][pos - 1]]).evict()
    yield draft
    yield (
        Draft(
            "limits/maximum-seed",
            pins="The seed 2^31 - 1 is accepted and changes nothing (SnapKV never uses it).",
            catches="a seed read into a narrower type (16 bits) and refused.",
            tags=tags,
            params=params(2, 0, 2, 3),
            seed=INT31_MAX,
        )
        .attend(0)
        .attend(1, {0: 1.0})
        .attend(2, {0: 1.0, 1: 0.5})
        .evict()
    )


@builder
def position_limits() -> Iterator[Draft]:
    top = INT31_MAX
    yield (
        Draft(
            "position/near-int31-max",
            pins="Positions 2^31 - 8 to 2^31 - 1 are admitted, compared and returned exactly; "
            "after 2^31 - 1 no position can follow (2^31 - 1 again and 2^31 are refused).",
            catches="positions stored as float32 (2^31 - 8 and 2^31 - 1 become the same "
            "number), a 32-bit last + 1 that overflows, and positions truncated to 16 bits.",
            tags=("large-positions", "position"),
            params=params(3, 1, 2, 1),
        )
        .nulls([top - 7, top - 6, top - 5])
        .attend(top - 3, {top - 7: 0.5, top - 6: 0.25})
        .evict()
        .attend(top - 1, {top - 7: 0.5, top - 6: 0.25, top - 3: 0.25})
        .evict()
        .step(top, None)
        .refuse_step("invalid-position", top, None)
        .refuse_step("invalid-position", top + 1, None)
        .evict()
    )
    yield (
        Draft(
            "position/above-16-bits",
            pins="Positions straddling 2^16 (65534 to 65538) are kept apart: 65536 and 65537 "
            "tie at 0 with 65534, and the evict returns [65534, 65536].",
            catches="positions truncated to 16 bits (65536 becomes 0, breaking the ordering "
            "check and the tie order) and victims returned modulo 2^16.",
            tags=("large-positions", "ties", "gaps"),
            params=params(3, 1, 2, 1),
        )
        .nulls([65534, 65535, 65536, 65537])
        .attend(65538, {65535: 1.0})
        .evict()
    )

"""Summation order and float edges (SPEC.md §2.4 step 1, §2.6).

Every vector here is a duel: two entries A and B are admitted by null steps, then each step
writes one weight to A, one to B and 0 to every position admitted since; those later positions
form the protected recent window (``recentWindow = steps``, ``budget = steps + 1``,
``poolKernel 1``), so the final evict must choose between A and B on their sums alone.

The weights are powers of two picked so that the pinned sum (float64, from +0.0, slot index 0
upward) and one wrong way of summing round differently: ``2^53 + 1`` rounds to ``2^53``
(ties to even), ``1 + 2^-24`` is exact in float64 but rounds to ``1`` in float32. The tests
recompute every named alternative and check that it evicts the other entry.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conformance.policy.reference import FLOAT32_MAX
from conformance.tools.generate.builders import Draft, builder, params

BIG = 2.0**53
TINY = 2.0**-149  # the smallest float32 subnormal
LARGEST_SUBNORMAL = 2.0**-126 - 2.0**-149


def duel(
    id: str,
    *,
    obs: int,
    a: Sequence[float],
    b: Sequence[float],
    a_lower: bool,
    pins: str,
    catches: str,
    tags: Sequence[str] = ("summation",),
) -> Draft:
    """A and B, then one step per weight pair, then one evict that must pick A or B.

    A is position 0 and B position 1 when ``a_lower``, else the other way round; the steps
    admit positions 2, 3, ...
    """
    steps = len(a)
    if len(b) != steps:
        raise ValueError("A and B need one weight per step each")
    pos_a, pos_b = (0, 1) if a_lower else (1, 0)
    draft = Draft(
        id,
        pins=pins,
        catches=catches,
        tags=tags,
        params=params(steps + 1, steps, obs, 1),
    ).nulls([0, 1])
    for t in range(steps):
        draft.attend(2 + t, {pos_a: a[t], pos_b: b[t]})
    return draft.evict()


@builder
def summation_order() -> Iterator[Draft]:
    yield duel(
        "summation/float32-accumulation-trap",
        obs=2,
        a=[1.0, 2.0**-24],
        b=[1.0, 0.0],
        a_lower=True,
        pins="A's ring [1, 2^-24] sums to 1 + 2^-24 in float64, above B's 1, so B (position 1) "
        "is evicted.",
        catches="float32 accumulation (or sums stored as float32): 1 + 2^-24 rounds to 1, A "
        "ties B and position 0 is evicted.",
    )
    yield duel(
        "summation/pairwise-trap",
        obs=16,
        a=[BIG] + [1.0] * 15,
        b=[BIG, 2.0] + [0.0] * 14,
        a_lower=True,
        pins="A's ring [2^53, 1 x 15] sums left to right to exactly 2^53 (each +1 rounds back), "
        "below B's 2^53 + 2, so A is evicted.",
        catches="pairwise summation (np.sum over the ring, which adds in eight interleaved "
        "partial sums: 2^53 + 14), reversed order and Kahan compensation (2^53 + 16); all "
        "evict B.",
    )
    yield duel(
        "summation/reversed-order-trap",
        obs=3,
        a=[BIG, 1.0, 1.0],
        b=[BIG, 2.0, 0.0],
        a_lower=False,
        pins="A's ring [2^53, 1, 1] sums from slot 0 up to 2^53, below B's 2^53 + 2, so A "
        "(position 1) is evicted.",
        catches="reversed slot order (1 + 1 + 2^53 = 2^53 + 2 ties B, evicting position 0), "
        "and Kahan compensation, which also reaches 2^53 + 2.",
    )
    yield duel(
        "summation/chronological-order-trap",
        obs=4,
        a=[0.0, 1.0, BIG, 0.0, 1.0],
        b=[0.0, BIG, 0.0, 0.0, 0.0],
        a_lower=True,
        pins="Five writes into obsWindow 4 leave A's ring [1, 1, 2^53, 0] (slot 0 rewritten "
        "last): in slot index order it sums to 2^53 + 2, above B's 2^53, so B is evicted.",
        catches="chronological order from the cursor (slots 1, 2, 3, 0 give 2^53, a tie that "
        "evicts A), a running sum, and reversed order.",
    )
    yield duel(
        "summation/kahan-trap",
        obs=3,
        a=[1.0, BIG, 1.0],
        b=[BIG, 2.0, 0.0],
        a_lower=False,
        pins="A's ring [1, 2^53, 1] sums left to right to 2^53 (both 1s are lost to rounding), "
        "below B's 2^53 + 2, so A (position 1) is evicted.",
        catches="Kahan (compensated) summation, which recovers the 1s, reaches 2^53 + 2, ties "
        "B and evicts position 0.",
    )
    yield duel(
        "summation/mean-over-window-trap",
        obs=3,
        a=[1.75, 2.0**-52],
        b=[1.75, 0.0],
        a_lower=True,
        pins="A's ring [1.75, 2^-52] sums to 1.75 + 2^-52, one unit in the last place above B's "
        "1.75, so B is evicted.",
        catches="scores taken as the window's mean (the sum divided by obsWindow, as kvpress's "
        "SnapKVPress averages the window), where both divide to the same float64: A ties B "
        "and position 0 is evicted. Dividing every sum by one constant adds a single float64 "
        "rounding, which `--numerics float64` refuses here and the coarser profiles admit "
        "(SPEC.md A.4).",
    )
    yield duel(
        "summation/float32-accumulator-trap",
        obs=3,
        a=[1.0, 2.0**-24, 2.0**-24],
        b=[1.0, 2.0**-24, 0.0],
        a_lower=True,
        pins="A's ring [1, 2^-24, 2^-24] sums to 1 + 2^-23, above B's 1 + 2^-24, so B is "
        "evicted (rounding each float64 sum to float32 afterwards keeps the order).",
        catches="a float32 accumulator, in which each + 2^-24 to 1 rounds back to 1: A ties "
        "B and position 0 is evicted.",
    )
    yield duel(
        "summation/window-mean-in-float32-trap",
        obs=3,
        a=[1.625, 0.0],
        b=[1.625, 2.0**-23],
        a_lower=True,
        pins="A's ring sums to 1.625, one float32 unit in the last place below B's, so A is "
        "evicted.",
        catches="kvpress's SnapKVPress scoring in float32: the window's mean (the sum divided "
        "by obsWindow) rounds A and B to the same float32, and the topk of the keepers keeps "
        "A, evicting B.",
    )
    yield duel(
        "summation/running-sum-trap",
        obs=2,
        a=[BIG, 1.0, 1.0],
        b=[0.0, 0.0, 1.5],
        a_lower=True,
        pins="After three writes into obsWindow 2, A's ring is [1, 1] (the 2^53 was "
        "overwritten) and sums to 2, above B's 1.5, so B is evicted.",
        catches="a running sum kept across steps (add the new weight, subtract the one it "
        "overwrites): 2^53 + 1 rounds to 2^53 before 2^53 is taken away, leaving A at 1 or 0 "
        "and evicting A.",
    )


@builder
def float_edges() -> Iterator[Draft]:
    tags = ("float-edge",)
    yield duel(
        "weights/sums-beyond-float32",
        obs=2,
        a=[FLOAT32_MAX, FLOAT32_MAX],
        b=[FLOAT32_MAX, FLOAT32_MAX / 2],
        a_lower=True,
        pins="Weights at the float32 maximum are valid and their float64 sums exceed the "
        "float32 range: A sums to 2 x FLT_MAX, B to 1.5 x FLT_MAX, and B is evicted.",
        catches="sums accumulated or stored in float32, where both overflow to infinity and "
        "tie (evicting A), and weight checks that refuse the float32 maximum.",
        tags=(*tags, "summation"),
    )
    yield duel(
        "weights/subnormal",
        obs=2,
        a=[TINY, TINY],
        b=[0.0, 0.0],
        a_lower=True,
        pins="Subnormal weights are exact: A receives 2^-149 twice and sums to 2^-148 > 0, so B "
        "(sum 0) is evicted.",
        catches="subnormals flushed to zero (FTZ/DAZ, fast-math builds, GPU defaults), which "
        "ties A with B and evicts A.",
        tags=tags,
    )
    yield duel(
        "weights/largest-subnormal",
        obs=1,
        a=[LARGEST_SUBNORMAL],
        b=[0.0],
        a_lower=True,
        pins="The largest subnormal float32, 2^-126 - 2^-149, is a weight like any other: A's "
        "sum is above B's 0, so B is evicted. A bfloat16 history holds it too (as 2^-126), so "
        "`--numerics bfloat16` still requires it; only a float16 history stores it as 0.",
        catches="subnormals flushed to zero (FTZ/DAZ, fast-math builds, GPU defaults), which "
        "ties A with B and evicts A.",
        tags=tags,
    )
    yield duel(
        "weights/negative-zero",
        obs=2,
        a=[-0.0, -0.0],
        b=[0.0, 0.0],
        a_lower=False,
        pins="-0.0 is an accepted weight equal to zero: A (position 1) receives -0.0 twice, B "
        "(position 0) +0.0; both sums are +0.0, the tie evicts the lower position, B.",
        catches="-0.0 refused by a sign-bit test, and sums started from -0.0 (as Rust's float "
        "Sum does) ranked by a total order that puts -0.0 below +0.0, which evicts A.",
        tags=(*tags, "ties"),
    )
    yield duel(
        "weights/half-precision-history",
        obs=2,
        a=[1.0 + 2.0**-11],
        b=[1.0],
        a_lower=True,
        pins="History is float32, which holds every weight exactly: A's 1 + 2^-11 stays above "
        "B's 1, so B is evicted.",
        catches="history stored as float16 or bfloat16 (a half-precision KV cache), where "
        "1 + 2^-11 rounds to 1: A ties B and position 0 is evicted.",
        tags=tags,
    )
    yield (
        Draft(
            "weights/integer-literals",
            pins="Weights written as JSON integers (3, 2, 16777216) are numbers like any other: "
            "position 1 (weight 2) is evicted.",
            catches="an adapter whose JSON reader requires a decimal point or a float type for "
            "weights, and refuses or misreads integers.",
            tags=(*tags, "attention"),
            params=params(3, 1, 2, 1),
        )
        .nulls([0, 1, 2])
        .step(3, [3, 2, 2**24])
        .evict()
    )


#: Observation windows of the window-size traps: the sizes real configurations use, around
#: the points where summation strategies change (numpy goes pairwise from 8 elements and
#: splits in blocks above 128; SIMD loops take 4, 8 or 16 lanes at a time).
TRAP_WINDOWS = (8, 9, 16, 17, 32, 64, 128, 256, 512, 1024)


def window_trap(obs: int) -> Draft:
    """A duel at window ``obs`` that any summation order but slot index order decides the
    other way.

    B is position 0, A position 1; each step admits one position, gives A and B a weight each
    and the position admitted just before it 0, and an evict removes that position (budget 3,
    recentWindow 1), so the lists stay three long whatever the window. ``obs + 1`` steps wrap
    the ring once, leaving the cursor at slot 1 and the rings A ``[2^53, 1, 1, ..., 1]`` and B
    ``[2^53, 2, 0, ..., 0]``. In slot order every 1 added to 2^53 rounds back (ties to even), so
    A sums to 2^53 below B's 2^53 + 2 and A is evicted. Any order that adds two of A's 1s
    together before they meet 2^53 (pairwise, SIMD lanes, reversed, chronological from the
    cursor) or recovers them (Kahan) reaches at least 2^53 + 2; float32 rounds both to 2^53;
    either way B, the lower position, is evicted instead. The last step gives the previous
    position a large weight so that the final evict is between A and B alone.
    """
    draft = Draft(
        f"summation/window-{obs}-trap",
        pins=f"obsWindow {obs}: after {obs + 1} writes A's ring is [2^53, 1 x {obs - 1}] and "
        "sums in slot order to exactly 2^53 (every +1 rounds back), below B's 2^53 + 2, so A "
        "(position 1) is evicted.",
        catches="any other summation order at a real window size: pairwise (np.sum / "
        "torch.sum over the ring), SIMD lanes (4, 8 or 16 partial sums; BLAS dot products with "
        "a ones vector), Kahan or Neumaier compensation, chronological order from the cursor, "
        "reversed order, float32 accumulation: each makes A at least B and evicts B.",
        tags=("summation", "obs-window"),
        params=params(3, 1, obs, 1),
    ).nulls([0, 1])
    a = [1.0] * obs + [BIG]
    b = [1.0, 2.0] + [0.0] * (obs - 2) + [BIG]
    for t in range(obs + 1):
        weights = {1: a[t], 0: b[t]}
        if t:
            weights[1 + t] = BIG if t == obs else 0.0
        draft.attend(2 + t, weights).evict()
    return draft


@builder
def window_traps() -> Iterator[Draft]:
    for obs in TRAP_WINDOWS:
        yield window_trap(obs)

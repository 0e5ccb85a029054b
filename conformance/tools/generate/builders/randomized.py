"""Random call sequences with fixed seeds: small parameters, weights that tie or trip summation
order, special float32 values, gaps, null steps, uneven evict cadence and refused calls.

:func:`random_vector` is also what the hypothesis tests draw seeds for, so every seed it
accepts must give a vector that validates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conformance.policy.reference import FLOAT32_MAX
from conformance.tools.generate.builders import Draft, builder, f32, params
from conformance.tools.generate.builders._draft import AttentionFn
from conformance.tools.generate.builders._random import uniforms

#: Weights chosen for what they do to sums and comparisons (all exact float32 values).
SPECIAL = (
    0.0,
    -0.0,
    1.0,
    0.5,
    2.0**-24,
    2.0**-149,
    2.0**-126,
    2.0**24,
    2.0**53,
    FLOAT32_MAX,
    f32(0.1),
    f32(1 / 3),
)
#: A few levels, so that equal sums (ties) are common.
LEVELS = (0.0, 0.25, 0.5, 1.0)

_PARAMS, _PLAN, _WEIGHT, _MIX = range(4)


def _weights(seed: int, t: int) -> AttentionFn:
    """Attention for step ``t``: per weight, a level (ties), a special value, or uniform."""

    def attention(kept: Sequence[int]) -> list[float]:
        mix = uniforms(len(kept), seed, _MIX, t)
        raw = uniforms(len(kept), seed, _WEIGHT, t)
        out = []
        for m, u in zip(mix, raw, strict=True):
            if m < 0.5:
                out.append(f32(LEVELS[int(u * len(LEVELS))]))
            elif m < 0.7:
                out.append(f32(SPECIAL[int(u * len(SPECIAL))]))
            else:
                out.append(f32(u))
        return out

    return attention


def _too_long(kept: Sequence[int]) -> list[float]:
    return [0.5] * (len(kept) + 1)


def _negative(kept: Sequence[int]) -> list[float]:
    return [0.5] * max(len(kept) - 1, 0) + [-1.0]


def random_vector(seed: int, *, id: str | None = None, steps: int | None = None) -> Draft:
    """A random vector determined by ``seed`` alone (any integer in ``[0, 2^32)``)."""
    u = uniforms(8, seed, _PARAMS)
    budget = 1 + int(u[0] * 10)
    recent = int(u[1] * budget)
    obs = 1 + int(u[2] * 9)
    kernel = 1 + 2 * int(u[3] * 5)
    count = steps if steps is not None else 10 + int(u[4] * 50)
    draft = Draft(
        id or f"random/seed-{seed}",
        pins=f"A random call sequence (seed {seed}): budget {budget}, recentWindow {recent}, "
        f"obsWindow {obs}, poolKernel {kernel}, {count} steps with tied, special and uniform "
        "weights, gaps, null steps, uneven evicts and refused steps.",
        catches="whatever the hand-built vectors do not aim at: a random mix of weights, "
        "positions, unobserved steps, refusals and evictions shows almost any wrong step "
        "somewhere (snapkv-conformance mutants lists the catalogued mistakes each seed catches).",
        tags=("random",),
        params=params(budget, recent, obs, kernel),
    )
    plan = uniforms(4 * count, seed, _PLAN)
    pos, last = 0, -1
    for t in range(count):
        gap, kind, null, evict = plan[4 * t : 4 * t + 4]
        if gap < 0.2:
            pos += 1 + int(gap * 5000)
        if kind < 0.04:
            draft.refuse_step("invalid-position", last, None)
        elif kind < 0.07:
            draft.refuse_step("invalid-attention", pos, _too_long)
        elif kind < 0.09 and pos > 0:
            draft.refuse_step("invalid-attention", pos, _negative)
        draft.step(pos, None if null < 0.15 else _weights(seed, t))
        last, pos = pos, pos + 1
        if evict < 0.35 or t == count - 1:
            draft.evict()
    return draft


@builder
def random_vectors() -> Iterator[Draft]:
    for seed in range(1, 13):
        yield random_vector(seed, id=f"random/seed-{seed:02d}")

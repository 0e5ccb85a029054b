"""Small-budget workloads shaped like decoding (SPEC.md §2 end to end): stationary heavy-hitter
epochs like a typical decode trace, phrase-like runs of important tokens, and noisy
attention with freak weights.

Each step's attention is a function of the kept list (the reference decides what is kept),
normalised to sum to 1 like a softmax row and narrowed to float32. All randomness comes from
:mod:`conformance.tools.generate.builders._random`, keyed by (seed, purpose, step or epoch), so the
suite regenerates byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache

from conformance.tools.generate.builders import Draft, builder, f32, params
from conformance.tools.generate.builders._draft import AttentionFn
from conformance.tools.generate.builders._random import uniforms

#: Raw (unnormalised) weight of each kept position at step ``t``.
Shape = Callable[[int, Sequence[int]], list[float]]

_EPOCH, _HEAVY, _LEVEL, _NOISE, _PHRASE, _PEAK, _BASE, _FREAK = range(8)


def normalised(shape: Shape, t: int) -> AttentionFn:
    """Attention for step ``t``: ``shape``'s weights divided by their total, as float32."""

    def attention(kept: Sequence[int]) -> list[float]:
        raw = shape(t, kept)
        total = sum(raw)
        return [f32(w / total) if total > 0 else 0.0 for w in raw]

    return attention


def run(
    draft: Draft,
    shape: Shape,
    *,
    steps: int,
    prompt: int = 0,
    evict_every: int = 1,
    positions: Sequence[int] | None = None,
    null_every: int = 0,
) -> Draft:
    """Append the workload: ``prompt`` null steps (tokens whose attention was not captured),
    then ``steps`` decode steps, with an evict after every ``evict_every`` decode steps and at
    the end. ``null_every`` makes every n-th decode step null too."""
    places = list(positions) if positions is not None else list(range(prompt + steps))
    draft.nulls(places[:prompt])
    for t in range(steps):
        pos = places[prompt + t]
        null = null_every and (t + 1) % null_every == 0
        draft.step(pos, None if null else normalised(shape, t))
        if (t + 1) % evict_every == 0 or t == steps - 1:
            draft.evict()
    return draft


def heavy_hitters(seed: int, epoch: int, fraction: float, span: int) -> Shape:
    """Stationary heavy-hitter epochs: in each epoch of ``epoch`` steps a fixed random
    ``fraction`` of positions below ``span`` are heavy (weight 0.5-1, steady), the rest get
    noise below 0.02; heavy hitters are scattered singletons drawn independently."""

    @cache
    def table(e: int) -> tuple[list[float], list[float]]:
        return uniforms(span, seed, _HEAVY, e), uniforms(span, seed, _LEVEL, e)

    def shape(t: int, kept: Sequence[int]) -> list[float]:
        heavy, level = table(t // epoch)
        noise = uniforms(len(kept), seed, _NOISE, t)
        return [
            (0.5 + 0.5 * level[p]) * (0.95 + 0.1 * n) if heavy[p] < fraction else 0.02 * n
            for p, n in zip(kept, noise, strict=True)
        ]

    return shape


def phrases(seed: int, epoch: int, span: int) -> Shape:
    """Phrase-like runs: positions fall into phrases of 2 to 6 tokens; in each epoch about a
    third of the phrases are important, and an important phrase's attention peaks on one of
    its tokens (0.4-0.8) while its other tokens get a little (0.02-0.06)."""
    lengths = [2 + int(5 * u) for u in uniforms(span, seed, _PHRASE)]
    phrase_of: list[int] = []
    for index, length in enumerate(lengths):
        phrase_of.extend([index] * length)
        if len(phrase_of) >= span:
            break
    starts = {phrase: phrase_of.index(phrase) for phrase in set(phrase_of)}
    peaks = uniforms(len(lengths), seed, _PEAK)

    def shape(t: int, kept: Sequence[int]) -> list[float]:
        important = uniforms(len(lengths), seed, _EPOCH, t // epoch)
        noise = uniforms(len(kept), seed, _NOISE, t)
        weights = []
        for p, n in zip(kept, noise, strict=True):
            phrase = phrase_of[p]
            if important[phrase] >= 0.35:
                weights.append(0.01 * n)
                continue
            peak = starts[phrase] + int(peaks[phrase] * lengths[phrase])
            weights.append(0.4 + 0.4 * n if p == peak else 0.02 + 0.04 * n)
        return weights

    return shape


def noisy(seed: int, span: int, freak_rate: float) -> Shape:
    """Noisy attention: a heavy-tailed base importance per position (u^3), scaled by a fresh
    factor in [0.5, 1.5) every step, with an occasional freak weight of 1 on any position."""
    base = [u * u * u for u in uniforms(span, seed, _BASE)]

    def shape(t: int, kept: Sequence[int]) -> list[float]:
        noise = uniforms(len(kept), seed, _NOISE, t)
        freak = uniforms(len(kept), seed, _FREAK, t)
        return [
            1.0 if f < freak_rate else base[p] * (0.5 + n)
            for p, n, f in zip(kept, noise, freak, strict=True)
        ]

    return shape


def _draft(id: str, pins: str, catches: str, tags: Sequence[str], p: dict[str, int]) -> Draft:
    return Draft(id, pins=pins, catches=catches, tags=("workload", *tags), params=p)


@builder
def heavy_hitter_epochs() -> Iterator[Draft]:
    yield run(
        _draft(
            "workload/heavy-hitter-epochs-budget-8",
            "Budget 8 (recent 2, window 4, kernel 3) over 160 decode steps after a 12-token "
            "prompt, in stationary heavy-hitter epochs of 40 steps, evicting every step.",
            "divergences that need many wraps and evictions: a cursor that loses its place, "
            "storage reuse that keeps stale history.",
            ("ring", "pooling"),
            params(8, 2, 4, 3),
        ),
        heavy_hitters(seed=11, epoch=40, fraction=0.15, span=200),
        steps=160,
        prompt=12,
    )
    yield run(
        _draft(
            "workload/heavy-hitter-epochs-budget-16-kernel-7",
            "Budget 16 (recent 4, window 16, kernel 7, the default shape scaled down) over 240 "
            "steps in heavy-hitter epochs of 60 steps, evicting every step.",
            "an off-by-one pooling radius at kernel 7, and anything else that a long run exposes.",
            ("summation", "pooling"),
            params(16, 4, 16, 7),
        ),
        heavy_hitters(seed=12, epoch=60, fraction=0.1, span=260),
        steps=240,
        prompt=4,
    )
    yield run(
        _draft(
            "workload/heavy-hitter-epochs-tova",
            "TOVA settings (poolKernel 1, obsWindow 1) on heavy-hitter epochs, budget 8: each "
            "evict takes the lowest latest weight.",
            "any divergence from TOVA (the tests check this vector against an independent TOVA "
            "implementation), such as a second ring slot or pooling left on at kernel 1.",
            ("reduction-tova",),
            params(8, 1, 1, 1),
        ),
        heavy_hitters(seed=13, epoch=30, fraction=0.2, span=140),
        steps=120,
    )


@builder
def phrase_runs() -> Iterator[Draft]:
    yield run(
        _draft(
            "workload/phrase-runs-kernel-5",
            "Phrases of 2-6 tokens whose attention peaks on one token; kernel 5 lets the peak "
            "defend its phrase. Budget 12, recent 2, window 4, 160 steps, evict every step.",
            "pooling over position numbers after holes open, forward-only or average pooling, "
            "and recent entries left out of pooling.",
            ("pooling", "pool-adjacency", "recent-window"),
            params(12, 2, 4, 5),
        ),
        phrases(seed=21, epoch=40, span=200),
        steps=160,
        prompt=8,
    )
    yield run(
        _draft(
            "workload/phrase-runs-evict-every-4",
            "Phrase-like runs with kernel 3, budget 10, window 8, evicting only every 4 steps "
            "so that each evict returns 4 victims.",
            "one victim per call, victims in rank order, and ties broken toward the higher "
            "position among a phrase's equal pooled scores.",
            ("pooling", "eviction-count", "victim-order", "ties"),
            params(10, 2, 8, 3),
        ),
        phrases(seed=22, epoch=32, span=200),
        steps=160,
        evict_every=4,
    )


@builder
def noisy_attention() -> Iterator[Draft]:
    yield run(
        _draft(
            "workload/noisy-attention-window-8",
            "Noisy attention with freak weights (3% of weights are 1) over a window of 8: the "
            "sums absorb single freak weights. Budget 10, recent 2, kernel 3, 160 steps.",
            "a window of the wrong length, which changes which noisy near-ties are evicted.",
            ("obs-window", "summation"),
            params(10, 2, 8, 3),
        ),
        noisy(seed=31, span=200, freak_rate=0.03),
        steps=160,
    )
    yield run(
        _draft(
            "workload/noisy-attention-gaps-and-nulls",
            "Noisy attention at gapped positions (steps of 1-7) with every fifth step null and "
            "an evict every 3 steps. Budget 8, recent 1, window 5, kernel 3.",
            "a null vector that advances the ring or writes zeros, indices derived from "
            "positions, and one victim per call.",
            ("null-step", "gaps", "eviction-count"),
            params(8, 1, 5, 3),
        ),
        noisy(seed=32, span=1000, freak_rate=0.05),
        steps=120,
        evict_every=3,
        null_every=5,
        positions=_gapped(seed=32, count=120),
    )


def _gapped(seed: int, count: int) -> list[int]:
    """``count`` increasing positions with gaps of 1 to 7."""
    positions, pos = [], 0
    for u in uniforms(count, seed, _EPOCH):
        positions.append(pos)
        pos += 1 + int(7 * u)
    return positions

"""Seeded randomness for builders that is stable across numpy versions and repeat runs.

Only numpy's legacy :class:`numpy.random.RandomState` is used: its streams are frozen by
numpy's compatibility policy, whereas ``default_rng`` streams may change between versions,
which would break byte-identical regeneration. Only uniform draws (``random_sample``,
``randint``) and IEEE arithmetic (``+ - * /``) are used on them, never ``exp`` or ``log``, whose
last bits depend on the platform's libm.

Every draw is keyed: :func:`uniforms` returns the same numbers for the same key however often
it is called, so an attention function gives the same list each time a draft is realized. Key
entries are integers in ``[0, 2^32)`` (``RandomState`` seeds with an array of uint32).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.tools.generate.builders._draft import AttentionFn, Draft, f32


def uniforms(count: int, *key: int) -> list[float]:
    """``count`` floats in ``[0, 1)`` determined by ``key``."""
    return [float(x) for x in np.random.RandomState(list(key)).random_sample(count)]


def level_attention(levels: Sequence[float], *key: int) -> AttentionFn:
    """Attention drawing each weight from ``levels`` (so ties are common), keyed by ``key``."""
    narrowed = [f32(level) for level in levels]

    def attention(kept: Sequence[int]) -> list[float]:
        return [narrowed[int(u * len(narrowed))] for u in uniforms(len(kept), *key)]

    return attention


def seeded_steps(
    draft: Draft,
    *,
    seed: int,
    steps: int,
    levels: Sequence[float],
    evict_every: int = 1,
) -> Draft:
    """Append ``steps`` steps at positions ``0, 1, ...`` with weights drawn from ``levels``,
    and an evict after every ``evict_every`` steps (and at the end)."""
    for pos in range(steps):
        draft.step(pos, level_attention(levels, seed, pos))
        if (pos + 1) % evict_every == 0 or pos == steps - 1:
            draft.evict()
    return draft

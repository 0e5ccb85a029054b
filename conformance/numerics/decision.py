"""Whether a victim set is one that some admitted evaluation of the sums would choose.

One evict, as the rule sees it (:class:`Scene`): the kept entries in kept order, each in a
*class* (entries whose rings are identical, slot for slot, share one class, because a port
computes a sum from its ring and identical rings give identical sums; the class of the all-zero
ring is pinned at 0), each class with the interval ``[low, high]`` its sum may take under the
profile (:meth:`conformance.numerics.profiles.Profile.interval`); the pooling radius ``r``; the
number of candidates ``c`` (the kept entries below the protected window). Pooling is
``p_i = max(s_j for j in N(i))`` with ``N(i) = [i - r, i + r]`` clamped to the kept list, and
the victims are the ``k`` candidates with the smallest ``(p_i, i)``.

:func:`admits` decides, exactly, whether there are sums ``s`` (one value per class, each in
its interval) for which a given set ``V`` of ``k`` candidates is exactly the ``k`` smallest.
Not by sampling: the argument below reduces the question to finitely many thresholds, each
checked in linear time with exact rational comparisons.

**The argument.** Write ``W`` for the candidates not in ``V``. ``V`` is the ``k`` smallest
exactly when every victim's key is below every other candidate's, that is, when some key
``(t, cut + 1/2)`` (a real ``t`` and a cut between kept indices) lies between them:

- a victim ``v <= cut`` has ``p_v <= t``; a victim ``v > cut`` has ``p_v < t``;
- a candidate ``w <= cut`` in ``W`` has ``p_w > t``; one ``w > cut`` has ``p_w >= t``.

(Take ``(t, cut) = `` the largest victim key for one direction; the other is the definition of
the lexicographic order.) Fix ``t``. ``p_v <= t`` means every sum in ``N(v)`` is ``<= t``, and
``p_v < t`` that every one is ``< t``: a class that meets the window of some victim (a
*constrained* class) must stay ``< t`` if the highest victim whose window it meets is above the
cut, ``<= t`` otherwise. ``p_w > t`` or ``>= t`` asks for *one* sum in ``N(w)`` that high. The
victims' conditions only cap constrained classes from above, and the others' conditions only
gain from higher sums, so the best choice is each unconstrained class at its ``high``, each
capped class at ``min(high, t)`` (``<= t``) or its ``low`` (``< t``, possible only if
``low < t``). Then:

1. A ``w`` needs a sum ``> t`` exactly when ``w <= cut``, and only an unconstrained class can
   exceed ``t`` (a constrained one is capped at ``t``), so every ``w <= cut`` must see an
   unconstrained class with ``high > t``; call such a ``w`` *strong*. Whether ``w`` is strong
   does not depend on the cut.
2. Raising the cut turns caps ``< t`` into ``<= t`` (easier for the classes and better for the
   ``w`` above the cut) and moves ``w`` below it (which then must be strong). So the best cut
   is the largest with every ``w <= cut`` strong: just below the first ``w`` that is not.
3. With that cut, the choice is feasible when every constrained class can meet its cap
   (``low < t`` or ``low <= t``), and every ``w`` above the cut sees a class that reaches
   ``t``: unconstrained with ``high >= t``, or capped ``<= t`` with ``high >= t``.

Conversely, from any feasible choice with largest victim key ``(t*, v*)``: every ``w <= v*``
has a sum ``> t*`` in its window, necessarily of an unconstrained class (a constrained one is
``<= t*``), so it is strong, and the best cut at ``t*`` is at least ``v*``; a class capped
``< t*`` at that cut meets the window of a victim above ``v*``, whose pooled score is ``< t*``,
so its value, hence its ``low``, is ``< t*``; and a ``w`` above the cut with a sum ``>= t*``
in its window has that sum in an unconstrained class (``high >= t*``) or in a capped one equal
to ``t*`` (which cannot be capped ``< t*``). So the check at ``t*`` succeeds: it decides the
question for each ``t``.

Finally, the check at ``t`` depends on ``t`` only through comparisons with the intervals' ends
(``low < t``, ``low <= t``, ``high > t``, ``high >= t``), so it is constant on each open gap
between consecutive ends. Checking every end and one point inside every gap therefore covers
every real ``t``; only ``t`` between the largest ``low`` of a constrained class and the
smallest best pooled score ``max high`` of a ``W`` window can succeed, which is usually a
handful of points.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from conformance.policy.reference import sliding_max


@dataclass(frozen=True)
class Scene:
    """One evict as the rule sees it (see the module docstring).

    ``classes[i]`` is the class of kept entry ``i``; ``low[c]`` and ``high[c]`` bound the sum
    of class ``c``; ``radius`` is the pooling radius; ``candidates`` how many of the lowest
    kept entries may be evicted.
    """

    classes: tuple[int, ...]
    low: tuple[Fraction, ...]
    high: tuple[Fraction, ...]
    radius: int
    candidates: int

    @property
    def size(self) -> int:
        return len(self.classes)

    def window(self, index: int) -> range:
        """The kept indices whose sums entry ``index`` pools over."""
        return range(max(0, index - self.radius), min(self.size, index + self.radius + 1))

    def lowest_pooled(self, index: int) -> Fraction:
        """The lowest pooled score entry ``index`` can have under the bounds."""
        return max(self.low[self.classes[j]] for j in self.window(index))

    def highest_pooled(self, index: int) -> Fraction:
        """The highest pooled score entry ``index`` can have under the bounds."""
        return max(self.high[self.classes[j]] for j in self.window(index))


def admits(scene: Scene, victims: Sequence[int]) -> bool:
    """True when some sums within the bounds (one per class) make ``victims`` (kept indices,
    each a candidate, no repeats) exactly the candidates with the smallest
    ``(pooled, index)``. Exact; see the module docstring for the argument."""
    count = scene.size
    chosen = sorted(set(victims))
    if any(not 0 <= v < scene.candidates for v in chosen):
        return False
    picked = set(chosen)
    others = [w for w in range(scene.candidates) if w not in picked]
    if not chosen or not others:
        return True
    radius = min(scene.radius, count - 1)
    classes, low, high = scene.classes, scene.low, scene.high
    # top[c]: the highest victim whose window meets class c (-1: none, unconstrained).
    top = [-1] * len(low)
    for j in range(count):
        nearest = bisect.bisect_right(chosen, j + radius) - 1
        if nearest >= 0 and chosen[nearest] >= j - radius:
            top[classes[j]] = max(top[classes[j]], chosen[nearest])
    constrained = [c for c in range(len(low)) if top[c] >= 0]
    if any(low[c] > high[c] for c in range(len(low))):
        return False
    floor = max(low[c] for c in constrained)
    # The best pooled score each kept entry can reach; max only compares, so the reference's
    # sliding maximum serves exact fractions as well as floats.
    reach = sliding_max(cast(Sequence[float], [high[classes[j]] for j in range(count)]), radius)
    ceiling = cast(Fraction, min(reach[w] for w in others))
    if floor > ceiling:
        return False
    ends = sorted({x for x in (*low, *high) if floor <= x <= ceiling})
    trials = [*ends, *((a + b) / 2 for a, b in itertools.pairwise(ends))]
    return any(_feasible_at(t, scene, radius, top, constrained, others) for t in trials)


def _feasible_at(
    t: Fraction,
    scene: Scene,
    radius: int,
    top: list[int],
    constrained: list[int],
    others: list[int],
) -> bool:
    """Steps 1 to 3 of the module docstring at threshold ``t``."""
    classes, low, high = scene.classes, scene.low, scene.high
    count = scene.size
    strong = _window_any([top[c] < 0 and high[c] > t for c in classes], radius)
    weak = next((w for w in others if not strong[w]), None)
    cut = count if weak is None else weak - 1
    for c in constrained:
        if (low[c] >= t) if top[c] > cut else (low[c] > t):
            return False
    reaches = _window_any([high[c] >= t and top[c] <= cut for c in classes], radius)
    return all(reaches[w] for w in others if w > cut)


def _window_any(flags: list[bool], radius: int) -> list[bool]:
    """``any(flags[j] for j in [i - radius, i + radius])`` for every ``i``, clamped."""
    prefix = [0]
    for flag in flags:
        prefix.append(prefix[-1] + flag)
    size = len(flags)
    return [prefix[min(size, i + radius + 1)] > prefix[max(0, i - radius)] for i in range(size)]


def out_of_reach(scene: Scene, victims: Sequence[int]) -> tuple[int, int, bool] | None:
    """A victim and a kept candidate that no evaluation within the bounds orders as the port
    did: ``(victim, other, shared)``. With ``shared`` False, the victim's lowest pooled score
    is above the other's highest (or equal, with the victim at the higher index, which the tie
    rule keeps); the pair with the widest gap is named. With ``shared`` True, the victim's
    window holds every class the other's does, so it always pools at least as high, and it
    sits at the higher index (identical rings, or a shared neighbour). None when every pair on
    its own can be ordered so (then only the pairs together, through shared neighbours, are
    out of reach)."""
    chosen = set(victims)
    others = [w for w in range(scene.candidates) if w not in chosen]
    lows = {v: scene.lowest_pooled(v) for v in chosen}
    highs = {w: scene.highest_pooled(w) for w in others}
    worst: tuple[Fraction, int, int] | None = None
    for v, bottom in lows.items():
        for w, roof in highs.items():
            if bottom > roof or (bottom == roof and v > w):
                gap = bottom - roof
                if worst is None or gap > worst[0]:
                    worst = (gap, v, w)
    if worst is not None:
        return worst[1], worst[2], False
    seen = {i: {scene.classes[j] for j in scene.window(i)} for i in range(scene.candidates)}
    for v in sorted(chosen):
        for w in others:
            if v > w and seen[v] >= seen[w]:
                return v, w, True
    return None


def widest_gap(
    exact: Sequence[int], radius: int, candidates: int, victims: Sequence[int]
) -> Fraction:
    """How far apart, relatively, the exact pooled scores are that the port's ranking
    inverted: ``(max P_v - min P_w) / max P_v`` over victims ``v`` and kept candidates ``w``
    (0 when every victim's exact pooled score is at most every other's). ``exact[i]`` is the
    exact sum of entry ``i`` in any one unit (an integer multiple of it)."""
    pooled = sliding_max(exact, min(radius, max(0, len(exact) - 1)))
    chosen = set(victims)
    top = max((pooled[v] for v in chosen), default=0)
    bottom = min((pooled[w] for w in range(candidates) if w not in chosen), default=top)
    if top <= bottom:
        return Fraction(0)
    return Fraction(int(top) - int(bottom), int(top))


__all__ = ["Scene", "admits", "out_of_reach", "widest_gap"]

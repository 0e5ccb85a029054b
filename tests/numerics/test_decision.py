"""The exact decision against brute force: on small scenes whose bounds are small integers, a
victim set is admitted exactly when some assignment of class values from a fine enough grid
makes it the k smallest (pooled, index) by a plain sort."""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.numerics.decision import Scene, admits, out_of_reach, widest_gap

TOP = 3  # bounds are integers in [0, TOP]


def chosen_by(values: list[Fraction], scene: Scene, k: int) -> set[int]:
    """The victims a port with these class values picks: pool by sorting, plainly."""
    sums = [values[c] for c in scene.classes]
    pooled = [max(sums[j] for j in scene.window(i)) for i in range(scene.size)]
    ranked = sorted(range(scene.candidates), key=lambda i: (pooled[i], i))
    return set(ranked[:k])


def assignments(scene: Scene) -> itertools.product:
    """Every choice of class values from a grid fine enough to realise every order among them
    and against the integer bounds: at most ``classes`` values lie strictly between two
    consecutive integers, so a step of ``1 / (classes + 1)`` does."""
    step = Fraction(1, len(scene.low) + 1)
    grid = [step * i for i in range(TOP * (len(scene.low) + 1) + 1)]
    bounds = zip(scene.low, scene.high, strict=True)
    return itertools.product(*[[g for g in grid if lo <= g <= hi] for lo, hi in bounds])


def every_ranking(scene: Scene) -> list[list[tuple[Fraction, int]]]:
    """The (pooled, index) keys of every assignment."""
    rankings = []
    for values in assignments(scene):
        sums = [values[c] for c in scene.classes]
        rankings.append([(max(sums[j] for j in scene.window(i)), i) for i in range(scene.size)])
    return rankings


def brute_force(scene: Scene, victims: set[int]) -> bool:
    """Whether some class values make ``victims`` the choice (only the order of the values
    among themselves and against the integer bounds matters: :func:`assignments`)."""
    return any(
        chosen_by(list(values), scene, len(victims)) == victims for values in assignments(scene)
    )


@st.composite
def scenes(draw: st.DrawFn) -> tuple[Scene, set[int]]:
    count = draw(st.integers(1, 3))
    bounds = [sorted((draw(st.integers(0, TOP)), draw(st.integers(0, TOP)))) for _ in range(count)]
    if draw(st.booleans()):
        bounds.append([0, 0])  # the all-zero ring's class
    size = draw(st.integers(1, 6))
    classes = tuple(draw(st.integers(0, len(bounds) - 1)) for _ in range(size))
    scene = Scene(
        classes,
        tuple(Fraction(lo) for lo, _ in bounds),
        tuple(Fraction(hi) for _, hi in bounds),
        radius=draw(st.integers(0, 2)),
        candidates=draw(st.integers(1, size)),
    )
    k = draw(st.integers(1, scene.candidates))
    if draw(st.booleans()):  # what some port picks: admitted by construction
        values = [Fraction(draw(st.integers(lo * 4, hi * 4)), 4) for lo, hi in bounds]
        victims = chosen_by(values, scene, k)
    else:
        victims = set(draw(st.permutations(range(scene.candidates)))[:k])
    return scene, victims


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_admits_exactly_what_some_assignment_picks(case: tuple[Scene, set[int]]) -> None:
    scene, victims = case
    assert admits(scene, sorted(victims)) == brute_force(scene, victims)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_a_pair_out_of_reach_means_not_admitted(case: tuple[Scene, set[int]]) -> None:
    scene, victims = case
    if out_of_reach(scene, sorted(victims)) is not None:
        assert not admits(scene, sorted(victims))


def scene(bounds: list[tuple[int, int]], classes: list[int], radius: int, candidates: int) -> Scene:
    return Scene(
        tuple(classes),
        tuple(Fraction(lo) for lo, _ in bounds),
        tuple(Fraction(hi) for _, hi in bounds),
        radius,
        candidates,
    )


def test_identical_rings_tie_so_the_lower_position_goes() -> None:
    # Entries 0 and 1 share one ring: whatever its value, they tie and 0 goes first.
    shared = scene([(1, 2)], [0, 0], 0, 2)
    assert admits(shared, [0])
    assert not admits(shared, [1])
    assert out_of_reach(shared, [1]) == (1, 0, True)
    # The same bounds on two different rings: either may go.
    apart = scene([(1, 2), (1, 2)], [0, 1], 0, 2)
    assert admits(apart, [0]) and admits(apart, [1])


def test_a_zero_ring_is_exactly_zero() -> None:
    # Entry 1's ring is all zeros; entry 0's sum may be 0 at the least: a tie at 0 evicts 0.
    assert admits(scene([(0, 1), (0, 0)], [0, 1], 0, 2), [0])
    # If entry 0's sum is at least 1, entry 1 (zero) must go.
    assert not admits(scene([(1, 2), (0, 0)], [0, 1], 0, 2), [0])
    assert out_of_reach(scene([(1, 2), (0, 0)], [0, 1], 0, 2), [0]) == (0, 1, False)


def test_pairs_that_swap_one_at_a_time_but_not_together() -> None:
    # Radius 1, every entry a candidate, victims 0 and 2. Victim 2 below kept 1 needs
    # p1 > p2, and p2 already holds s1, s2 and s3, so only s0 > p2 can do it; victim 0 below
    # kept 3 needs p0 <= p3, so s0 <= p3 = max(s2, s3) <= p2. Each pair on its own is
    # satisfiable (brute force), together they are not.
    four = scene([(0, 3), (0, 3), (0, 1), (2, 3)], [0, 1, 2, 3], 1, 4)
    assert not admits(four, [0, 2])
    assert not brute_force(four, {0, 2})
    assert out_of_reach(four, [0, 2]) is None
    for victim, other in ((0, 1), (0, 3), (2, 1), (2, 3)):
        assert any(keys[victim] < keys[other] for keys in every_ranking(four)), (
            f"{victim} can rank below {other}"
        )


def test_a_threshold_strictly_between_two_bounds() -> None:
    # Entries 1 and 2 share ring C in [0, 3]; entry 0's ring U is in [0, 2], entry 3's D is
    # exactly 1. Victims 1 and 3 below kept 0 and 2 need 1 < s_C < s_U <= 2: s_C strictly
    # between two bounds, so a search over the bounds alone misses it.
    sc = scene([(0, 2), (0, 3), (1, 1)], [0, 1, 1, 2], 0, 4)
    assert admits(sc, [1, 3])
    assert brute_force(sc, {1, 3})


def test_widest_gap_is_the_widest_inversion_of_exact_pooled_scores() -> None:
    assert widest_gap([4, 3, 5], 0, 3, [0]) == Fraction(1, 4)  # evicted 4, kept 3
    assert widest_gap([3, 4, 5], 0, 3, [0]) == 0
    assert widest_gap([4, 4, 5], 0, 3, [1]) == 0  # a tie broken the other way

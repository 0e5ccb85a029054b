"""Hypothesis strategies for differential fuzzing: random call sequences, replayed on the reference.

A scenario is a ``new`` followed by steps, evictions, re-constructions and refused calls, drawn
so that the cases where ports go wrong come up early: small budgets, ``recentWindow`` 0, short
observation windows that wrap, odd kernels 1..9 and occasionally ``2^31 - 1``, null steps, gaps
between positions, several steps between evictions, every kind of refusal a vector can record,
float32 weights chosen so that ties are common and summation order changes sums (huge with
tiny, ``2^24`` with ``1.0``, ``-0.0``, subnormals), and weights that are not float32 values,
next to float32 halfway points and spelled every way JSON allows
(:class:`~conformance.spec.protocol.NumberText`, sent as written), where reading a decimal once and
twice part.

Actions are drawn independently of the policy's state and only *materialised* into requests
against a reference session. That keeps hypothesis's shrinking effective: deleting an action
never invalidates the ones after it (an attention list is cycled or cut to the current number
of kept positions, a position is placed after the last admitted one), and every scenario comes
with the reference's own answers, which are the only source of expectations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st

from conformance.adapter.server import PolicyFactory, Session
from conformance.policy.reference import (
    FLOAT32_MAX,
    INT31_MAX,
    PARAM_NAMES,
    float32_literal,
    new_policy,
)
from conformance.spec.protocol import NumberText, decoded
from conformance.tools import spelling

#: Weights chosen for what they do to a sum or a comparison; every one is an exact float32.
SPECIAL_WEIGHTS: tuple[float, ...] = (
    0.0,
    1.0,
    0.5,
    -0.0,
    2.0**-24,  # 1.0 + 2^-24 is 1.0 in float32 but not in float64
    2.0**24,  # the end of float32's exact integers
    2.0**24 + 2.0,
    1.0 + 2.0**-23,
    2.0**-149,  # the smallest subnormal
    2.0**-130,
    2.0**-126,  # the smallest normal
    2.0**100,
    2.0**-100,
    2.0**60,  # with 1.0, beyond float64's 53 bits: order of summation decides
    FLOAT32_MAX,
    float32_literal(0.1),
    float32_literal(1.0 / 3.0),
    3.0,
    0.25,
)

#: Refused weights; each narrows to a negative or infinite float32 (never to ``-0.0``). The
#: texts are refused by the double rounding of SPEC.md §2.3 and accepted by a single rounding
#: straight to float32 (the halfway point to 2^128, and an integer one below it), or spelled
#: as few readers expect.
BAD_WEIGHTS: tuple[Any, ...] = (
    -1.0,
    -(2.0**-149),
    3.5e38,
    1e39,
    -FLOAT32_MAX,
    2**128,
    NumberText("3.4028235677973366e+38"),
    NumberText(str(2**128 - 2**103 - 1)),
    NumberText("-1.401298464324817E-45"),
    NumberText("1E+39"),
)
#: Things that are not numbers inside an attention list.
NOT_NUMBERS: tuple[Any, ...] = ("1", True, None, [1.0], {})
#: An ``attn`` that is neither null nor a list.
NOT_LISTS: tuple[Any, ...] = (1.0, "0.5", {}, True, 0)
#: A ``pos`` that is not an integer (``4.0`` is never sent: SPEC.md §6.4).
NOT_INTEGERS: tuple[Any, ...] = (1.5, "7", True, None, [3])

#: Each way of refusing ``new``: a function of valid params returning (params, seed).
BAD_NEW = (
    "even-kernel",
    "zero-kernel",
    "recent-equals-budget",
    "recent-above-budget",
    "zero-budget",
    "zero-obs-window",
    "negative",
    "too-large",
    "fraction",
    "string",
    "boolean",
    "missing",
    "extra",
    "not-an-object",
    "bad-seed",
)
BAD_POSITION = ("repeat", "decrease", "negative", "too-large", "not-an-integer")
BAD_ATTENTION = ("too-long", "too-short", "bad-weight", "not-a-number", "not-a-list")


@dataclass(frozen=True)
class Scenario:
    """A call sequence (requests without ``id``, the first a ``new``) and the reference's answers.

    ``expected[i]`` is the reference's response to ``calls[i]`` without its ``id``.
    """

    calls: tuple[dict[str, Any], ...]
    expected: tuple[dict[str, Any], ...]

    @property
    def params(self) -> Any:
        return self.calls[0]["params"]

    @property
    def seed(self) -> Any:
        return self.calls[0]["seed"]


# -- actions: drawn without looking at the state -----------------------------------------------


@dataclass(frozen=True)
class Step:
    gap: int  # positions skipped after the last admitted one
    weights: tuple[float, ...] | None  # None: a null step; else cycled over the kept list


@dataclass(frozen=True)
class Evict:
    pass


@dataclass(frozen=True)
class BadStep:
    kind: str  # one of BAD_POSITION or BAD_ATTENTION
    choice: int  # picks the offending value
    weights: tuple[float, ...]  # the rest of the list, as in Step


@dataclass(frozen=True)
class New:
    params: dict[str, int]
    seed: int
    fault: str | None  # None: a valid re-construction; else one of BAD_NEW


@dataclass(frozen=True)
class Streak:
    """A streak: a long run of steps, one position apart.

    Without weights, ``group`` null steps; with one weight, ``group`` steps giving every kept
    position that weight: long groups of exactly equal scores, where an unstable sort shows.
    With several, a duel of summation orders: ``group`` null steps admit more positions, then
    ``n + extra`` steps write the ``weights`` cycled to ``n`` values (``n`` the ring's length,
    within :data:`RUN_MIN` and :data:`RUN_MAX`) to every position kept before them, rotated by
    one slot per position: the ``i``-th is given ``ring[(i + t) % n]`` at the run's step
    ``t``. Those duellists then hold the same weights in other slot orders, so their sums
    differ only by rounding, and the order of summation decides which of them the next evict
    takes. The positions the run admits get :data:`ABOVE_DUEL`, out of the duel's way.
    """

    group: int
    extra: int
    weights: tuple[float, ...] | None


#: The ring lengths a duel writes: up to the real window sizes, and short enough to stay quick.
RUN_MIN, RUN_MAX = 8, 260
#: Above any duellist's sum (at most 265 weights of at most 2^20 (1 + 3 x 2^-23) each).
ABOVE_DUEL = 2.0**30


Action = Step | Evict | BadStep | New | Streak


@cache
def _sampled(table: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    # Strategies are built once: building one per draw made generation many times slower.
    return st.sampled_from(table)


def _weighted(draw: st.DrawFn, *pairs: tuple[int, Any]) -> Any:
    """Draw one of the labels with integer weights; shrinks toward the first."""
    return draw(_sampled(tuple(label for weight, label in pairs for _ in range(weight))))


@cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


_ANY_FLOAT32 = st.floats(0.0, FLOAT32_MAX, width=32, allow_subnormal=True)
#: A power of two from 2^-40 to 2^20, or one to three float32 ulps above it, mostly from the
#: two ends: a sum of large ones and tiny ones with low bits set needs more than float64's 53
#: bits, so it rounds, and differently in every order of summation.
WIDE_WEIGHTS = st.builds(
    lambda exponent, ulps: float32_literal(2.0**exponent * (1.0 + ulps * 2.0**-23)),
    st.one_of(st.integers(-40, -28), st.integers(10, 20), st.integers(-40, 20)),
    st.integers(0, 3),
)
# Zeros and ones twice: ties come from equal weights. An index past the table draws any float32.
_WEIGHT_TABLE = (0.0, 1.0, 0.0, 1.0, 2.0, 3.0, 4.0, *SPECIAL_WEIGHTS)
#: Past the table: two chances in the index of any float32, two of a rounding weight.
_WEIGHT_INDEX = st.integers(0, len(_WEIGHT_TABLE) + 3)

#: Float32 values whose halfway point to the next float32 up a rounding weight sits at: where
#: ties are common (0, 1), the subnormal and normal boundaries, exact integers past 2^24, 2^53,
#: 2^60 and 2^64, and the float32 maximum (whose halfway point is the overflow threshold).
HALFWAY_BASES: tuple[float, ...] = (
    1.0,
    0.0,
    1.0 + 2.0**-23,
    0.5,
    2.0**-149,
    2.0**-126 - 2.0**-149,
    2.0**24,
    2.0**53,
    2.0**60,
    2.0**64,
    3.0,
    FLOAT32_MAX,
)
_WHERE = ("shortest", "above", "below", "exact", "negative")
#: Tiny negatives that read as -0.0: zero, within -2^-150 (read so once or twice), a hair
#: beyond it (-2^-149 if read once).
_NEGATIVE_ZEROS = ("-0.0", "-7.006492321624085e-46", "-7.0064923216240854e-46")


def rounding_text(base: float, where: str, style: int) -> str:
    """A decimal at the halfway point above the float32 ``base`` (``where``: its shortest
    float64 form, a hair above or below it, exactly on it, or a negative zero), spelled by
    :func:`conformance.tools.spelling.respell` ``style``."""
    halfway = spelling.halfway_above(base)
    if where == "shortest":
        text = repr(float(halfway))
    elif where == "exact":
        text = spelling.exact_text(halfway)
    elif where == "negative":
        text = _NEGATIVE_ZEROS[HALFWAY_BASES.index(base) % len(_NEGATIVE_ZEROS)]
    else:
        text = spelling.nudged(halfway, 1 if where == "above" else -1, (20, 40)[style % 2])
    return spelling.respell(text, style)


#: Every (base, where, style) of :func:`rounding_text`, first ``1.0000000596046448``. Drawn by
#: one index: a weight drawn with several choices made the fuzzer slower to find summation
#: mistakes, whose duels draw nothing from here (bench_fuzz.py measures it).
ROUNDING_TABLE: tuple[NumberText, ...] = tuple(
    NumberText(rounding_text(base, where, style))
    for base in HALFWAY_BASES
    for where in _WHERE
    for style in range(6)
)
_ROUNDING_INDEX = st.integers(0, len(ROUNDING_TABLE))


@st.composite
def _rounding_weight(draw: st.DrawFn) -> NumberText:
    """A weight that is not a float32, next to a float32 halfway point, in some spelling
    (exponents, many digits, ``-0``, integer literals): where reading it once and twice part
    (SPEC.md §2.3). Mostly accepted; a negative one is accepted only when it reads as -0.0.
    One index past the table: a random float32's halfway point, a hair above it."""
    index = draw(_ROUNDING_INDEX)
    if index < len(ROUNDING_TABLE):
        return ROUNDING_TABLE[index]
    halfway = spelling.halfway_above(draw(_ANY_FLOAT32))
    return NumberText(spelling.respell(spelling.nudged(halfway, 1), draw(_integers(0, 5))))


ROUNDING_WEIGHTS = _rounding_weight()


@st.composite
def _weight(draw: st.DrawFn) -> float:
    # One draw per weight in most cases: weights are most of what is drawn, and every draw
    # costs (generation is the fuzzer's main expense, not the adapter).
    index = draw(_WEIGHT_INDEX)
    if index < len(_WEIGHT_TABLE):
        return _WEIGHT_TABLE[index]
    return draw(_ANY_FLOAT32) if index < len(_WEIGHT_TABLE) + 2 else draw(ROUNDING_WEIGHTS)


#: One exact float32 weight, mostly from :data:`SPECIAL_WEIGHTS` or small integers.
WEIGHTS = _weight()
_WEIGHT_LISTS = st.lists(WEIGHTS, max_size=5).map(tuple)
_WIDE_LISTS = st.lists(WIDE_WEIGHTS, min_size=2, max_size=12).map(tuple)


def _sized(draw: st.DrawFn, small: tuple[int, int], medium: tuple[int, int]) -> int:
    kind = _weighted(draw, (12, "small"), (1, "huge"), (6, "medium"))
    return INT31_MAX if kind == "huge" else draw(_integers(*(small if kind == "small" else medium)))


@st.composite
def _params(draw: st.DrawFn) -> dict[str, int]:
    budget = _sized(draw, (1, 4), (1, 12))
    recent = _weighted(draw, (4, "zero"), (3, "small"), (1, "max"))
    recent = {"zero": 0, "max": budget - 1}.get(recent) or draw(_integers(0, min(budget - 1, 6)))
    # obsWindow 1 makes the ring trivial (no wrap, nothing for a null step to skip): rarer.
    obs = 1 if _weighted(draw, (3, "other"), (1, "one")) == "one" else _sized(draw, (2, 4), (1, 40))
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": _kernel(draw)}


def _kernel(draw: st.DrawFn) -> int:
    # A wide kernel lets one high sum mask the others: kernel 1 and 3 are the commonest.
    kernel = _weighted(draw, (4, 1), (2, 3), (3, "odd"), (1, INT31_MAX))
    return int(draw(_sampled((5, 7, 9))) if kernel == "odd" else kernel)


@st.composite
def _duel_params(draw: st.DrawFn) -> dict[str, int]:
    # Window sizes real configurations use, where numpy goes pairwise (8 and up) and SIMD
    # loops take 4 to 16 lanes; the budget is set by the duel (see play).
    obs = _weighted(draw, (3, 8), (2, 9), (3, 16), (2, 17), (2, 32), (1, 64), (1, 256))
    recent = draw(_integers(0, 2))
    return {"budget": 1, "recentWindow": recent, "obsWindow": obs, "poolKernel": _kernel(draw)}


#: Valid construction parameters: mostly tiny, now and then ``2^31 - 1``.
PARAMS = _params()
#: Parameters for a scenario that opens with a duel of summation orders: real window sizes.
DUEL_PARAMS = _duel_params()
#: Whether a scenario opens with a duel (a third of them do); shrinks toward not.
_OPENING = _sampled(("plain", "plain", "duel"))
_DUEL = st.builds(
    Streak,
    _sampled((8, 12, 17, 24, 33)),
    _sampled((0, 1, 3, 2, 5)),
    _WIDE_LISTS,
)
SEEDS = st.integers(0, INT31_MAX)


@st.composite
def _action(draw: st.DrawFn) -> Action:
    kind = _weighted(draw, (10, "step"), (5, "null"), (1, "refused"), (1, "new"), (1, "run"))
    if kind == "run":
        shape = _weighted(draw, (3, "duel"), (1, "null"), (1, "flat"))
        if shape == "duel":
            group = draw(_sampled((8, 12, 17, 24, 33)))
            return Streak(group, draw(_sampled((0, 1, 3, 2, 5))), draw(_WIDE_LISTS))
        group = draw(_sampled((17, 33, 65, 129)))
        return Streak(group, 0, None if shape == "null" else (draw(WEIGHTS),))
    if kind == "new":
        fault = _weighted(draw, (1, None), (1, "fault"))
        return New(draw(PARAMS), draw(SEEDS), fault and draw(_sampled(BAD_NEW)))
    if kind == "refused":
        fault = draw(_sampled(BAD_POSITION + BAD_ATTENTION))
        return BadStep(fault, draw(_integers(0, 7)), draw(_WEIGHT_LISTS))
    gap = _weighted(draw, (16, "next"), (1, "top"), (2, "far"))
    gap = {"next": (0, 2), "far": (0, 1000), "top": (INT31_MAX, INT31_MAX)}[gap]
    weights = None if kind == "null" else draw(_WEIGHT_LISTS)
    return Step(draw(_integers(*gap)), weights)


#: One step-like action: mostly steps (a fifth of them null), now and then a refusal or a
#: re-construction.
ACTIONS = _action()
#: A few step-like actions, usually followed by an ``evict``: several steps between
#: evictions, so that one eviction often returns several victims.
_ROUND = st.tuples(st.lists(ACTIONS, min_size=1, max_size=8), _sampled((False, True, True, True)))
#: Whether another round follows (after the first two); shrinks toward stopping.
_ANOTHER = _sampled((False, *(True,) * 7))
MIN_ROUNDS, MAX_ROUNDS = 2, 12

#: ``observe(calls, expected)`` is shown each round's new calls and the reference's answers as
#: soon as they are drawn; returning True ends the scenario there.
Observer = Callable[[Sequence[dict[str, Any]], Sequence[dict[str, Any]]], bool]


def play(
    draw: st.DrawFn, observe: Observer | None = None, reference: PolicyFactory = new_policy
) -> Scenario:
    """Draw a scenario round by round: a valid ``new``, then 2 to 12 rounds of actions.

    Each round is materialised against the reference at once and shown to ``observe``, which
    may stop the scenario. The fuzzer stops at the first round whose answers differ, so nothing
    after a difference is ever drawn and hypothesis has no trailing calls to shrink away.
    ``reference`` answers the calls (a catalogued mistake, to fuzz past a known difference).
    """
    session = Materialiser(reference)
    if draw(_OPENING) == "duel":
        duel, params = draw(_DUEL), dict(draw(DUEL_PARAMS))
        # The run leaves the duellists and its own positions kept; this budget makes the evict
        # after it take half of the duellists, so their order decides which half.
        run = min(max(params["obsWindow"], RUN_MIN), RUN_MAX) + duel.extra
        params["budget"] = run + duel.group - duel.group // 2
        params["recentWindow"] = min(params["recentWindow"], params["budget"] - 1)
        done = session.add([New(params, draw(SEEDS), None), duel, Evict()])
    else:
        done = session.add([New(draw(PARAMS), draw(SEEDS), None)])
    rounds = 0
    while not (observe is not None and observe(*done)):
        if rounds == MAX_ROUNDS or (rounds >= MIN_ROUNDS and not draw(_ANOTHER)):
            break
        steps, evict = draw(_ROUND)
        done = session.add([*steps, Evict()] if evict else steps)
        rounds += 1
    return session.scenario()


@st.composite
def _scenario(draw: st.DrawFn) -> Scenario:
    return play(draw)


def scenarios() -> st.SearchStrategy[Scenario]:
    """Whole scenarios (see :func:`play`), for tests and anything else that wants them drawn."""
    return _SCENARIOS


_SCENARIOS = _scenario()


# -- materialising actions into requests -------------------------------------------------------


class Materialiser:
    """Turns actions into requests against a reference session, answering each as it goes."""

    def __init__(self, reference: PolicyFactory = new_policy) -> None:
        self.session = Session(reference)
        self.calls: list[dict[str, Any]] = []
        self.expected: list[dict[str, Any]] = []

    def add(self, actions: Sequence[Action]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Place ``actions``; return their requests and the reference's answers."""
        start = len(self.calls)
        for action in actions:
            for request in self._requests(action):
                self.calls.append(request)
                self.expected.append(_answer(self.session, request))
        return self.calls[start:], self.expected[start:]

    def _requests(self, action: Action) -> Iterator[dict[str, Any]]:
        """The requests of ``action``, each made against the state its predecessors left."""
        policy = self.session.policy
        if not isinstance(action, Streak) or policy is None:
            count = 0 if policy is None else len(policy.kept)
            last = None if policy is None else policy.last_admitted
            yield _request(action if not isinstance(action, Streak) else Evict(), count, last)
            return
        duel = action.weights is not None and len(action.weights) > 1
        for _ in range(action.group):
            weights = None if duel else action.weights
            attn = None if weights is None else _cycle(weights, len(policy.kept))
            yield {"op": "step", "pos": _next_position(0, policy.last_admitted), "attn": attn}
        if not duel:
            return
        assert action.weights is not None
        length = min(max(policy.params.obsWindow, RUN_MIN), RUN_MAX)
        ring = _cycle(action.weights, length)
        boundary = -1 if policy.last_admitted is None else policy.last_admitted
        for t in range(length + action.extra):
            kept = [int(p) for p in policy.kept]
            attn = [
                ring[(i + t) % length] if p <= boundary else ABOVE_DUEL for i, p in enumerate(kept)
            ]
            yield {"op": "step", "pos": _next_position(0, policy.last_admitted), "attn": attn}

    def scenario(self) -> Scenario:
        return Scenario(tuple(self.calls), tuple(self.expected))


def scenario_of(calls: Sequence[dict[str, Any]], reference: PolicyFactory = new_policy) -> Scenario:
    """The scenario of ``calls`` (requests without ``id``) with a fresh reference's answers."""
    from conformance.adapter.replay import replay as answers

    expected = [_without_id(answer) for answer in answers(calls, reference)]
    return Scenario(tuple(calls), tuple(expected))


def _without_id(response: dict[str, Any]) -> dict[str, Any]:
    del response["id"]
    return response


def _answer(session: Session, request: dict[str, Any]) -> dict[str, Any]:
    response = session.handle({"id": 0, **decoded(request)})
    del response["id"]
    return response


def _next_position(gap: int, last: int | None) -> int:
    start = 0 if last is None else last + 1
    # A huge gap lands near the top of the range rather than beyond it.
    # A jump to the top of the range leaves room for a few dozen more steps.
    return min(start + gap, INT31_MAX) if gap < INT31_MAX else max(start, INT31_MAX - 40)


def _cycle(values: Sequence[float], count: int) -> list[float]:
    return [values[i % len(values)] for i in range(count)] if values else [0.0] * count


def _request(action: Step | Evict | BadStep | New, kept: int, last: int | None) -> dict[str, Any]:
    if isinstance(action, Evict):
        return {"op": "evict"}
    if isinstance(action, New):
        params_, seed = _new_arguments(action)
        return {"op": "new", "params": params_, "seed": seed}
    if isinstance(action, Step):
        weights = None if action.weights is None else _cycle(action.weights, kept)
        return {"op": "step", "pos": _next_position(action.gap, last), "attn": weights}
    pos: Any = _next_position(0, last)
    attn: Any = _cycle(action.weights, kept)
    pick = action.choice
    if action.kind in BAD_POSITION and pick % 2:
        attn = [*attn, 0.0]  # bad attention too: the position must be judged first
    if action.kind == "repeat":
        pos = -1 if last is None else last
    elif action.kind == "decrease":
        pos = -1 - pick if not last else max(last - 1 - pick, 0)
    elif action.kind == "negative":
        pos = -1 - pick
    elif action.kind == "too-large":
        pos = INT31_MAX + 1 + pick
    elif action.kind == "not-an-integer":
        pos = NOT_INTEGERS[pick % len(NOT_INTEGERS)]
    elif action.kind == "too-long":
        attn = [*attn, 0.0]
    elif action.kind == "too-short":
        attn = attn[:-1] if attn else [0.0]
    elif action.kind == "bad-weight":
        attn = attn or [0.0]
        attn[pick % len(attn)] = BAD_WEIGHTS[pick % len(BAD_WEIGHTS)]
    elif action.kind == "not-a-number":
        attn = attn or [0.0]
        attn[pick % len(attn)] = NOT_NUMBERS[pick % len(NOT_NUMBERS)]
    else:  # not-a-list
        attn = NOT_LISTS[pick % len(NOT_LISTS)]
    return {"op": "step", "pos": pos, "attn": attn}


def _new_arguments(action: New) -> tuple[Any, Any]:
    raw: dict[str, Any] = dict(action.params)
    fault, seed = action.fault, action.seed
    budget = raw["budget"]
    if fault == "even-kernel":
        raw["poolKernel"] = raw["poolKernel"] + 1 if raw["poolKernel"] < INT31_MAX else 2
    elif fault == "zero-kernel":
        raw["poolKernel"] = 0
    elif fault == "recent-equals-budget":
        raw["recentWindow"] = budget
    elif fault == "recent-above-budget":
        raw["recentWindow"] = budget + 1 if budget < INT31_MAX else INT31_MAX + 1
    elif fault == "zero-budget":
        raw["budget"] = 0
    elif fault == "zero-obs-window":
        raw["obsWindow"] = 0
    elif fault == "negative":
        raw["obsWindow"] = -1
    elif fault == "too-large":
        raw["obsWindow"] = INT31_MAX + 1
    elif fault == "fraction":
        raw["budget"] = budget + 0.5
    elif fault == "string":
        raw["budget"] = str(budget)
    elif fault == "boolean":
        raw["recentWindow"] = bool(raw["recentWindow"])
    elif fault == "missing":
        del raw[PARAM_NAMES[seed % len(PARAM_NAMES)]]
    elif fault == "extra":
        raw["slack"] = 1
    elif fault == "not-an-object":
        return list(raw.values()), seed
    elif fault == "bad-seed":
        return raw, seed + 0.5
    return raw, seed

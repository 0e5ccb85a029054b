"""Property tests: the reference and its numpy fast path each equal the independent oracle.

A scenario is drawn call by call (the attention length depends on the state): random params
(recentWindow 0, kernels wider than the cache, obsWindow 2^31 - 1), null steps, position gaps,
several steps between evictions, ``scores`` and refused calls of every kind mixed in. After
every call the two must agree bit for bit (victims, kept positions, sums, pooled scores, the
ring cursor), a refused call must raise the same kind in both and change nothing, and every
eviction must satisfy the invariants a checker would judge it by. Every test runs on the
readable reference (:class:`conformance.policy.reference.SnapKV`) and on the fast path
(``fast_policy``); agreeing with the oracle bit for bit, both agree with each
other, and ``test_fast_path_equals_the_reference_on_huge_params_and_long_runs`` compares them
directly where the oracle would be slow.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.adapter.server import Session
from conformance.policy.fast import fast_policy
from conformance.policy.reference import PolicyError, SnapKV, new_policy
from tests.support.oracles import MAX_INT31, OracleSnapKV, apply, float_bits, params_dict

#: Replays the catalogue, the fast path or numpy-built ports: must hold on any CPU and numpy.
pytestmark = pytest.mark.numpy_dispatch

IMPLEMENTATIONS = pytest.mark.parametrize("fast", [False, True], ids=["reference", "fast"])

SETTINGS = settings(
    max_examples=250,
    deadline=None,  # a shared, noisy machine: no timing in tests
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def policy_params(draw: st.DrawFn) -> dict[str, int]:
    budget = draw(st.integers(1, 9))
    recent = draw(st.one_of(st.just(0), st.integers(0, budget - 1)))
    obs = draw(st.one_of(st.integers(1, 5), st.sampled_from([8, 9, 17, MAX_INT31])))
    kernel = draw(st.one_of(st.sampled_from([1, 3, 5]), st.sampled_from([7, 19, MAX_INT31])))
    return params_dict(budget, recent, obs, kernel)


# Weights: few distinct values (ties), any float32, any float64 in range (narrowed), subnormals,
# zeros of both signs, integers (small and past 2^53), tiny negatives that narrow to -0.0, and
# the largest float64 that narrows to the largest float32 (the next one narrows to infinity).
WEIGHTS = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0**-53, 1.0 + 2.0**-23, 3.4028235677973362e38]),
    st.floats(0, 2.0**20, width=32),
    st.floats(0, 3.4e38, allow_nan=False),
    st.floats(0, 2.0**-126, width=32),
    st.sampled_from([-0.0, -1e-46, 0, 1, 3]),
    st.integers(0, 2**127),  # integer literals, rounded to float64 and then to float32
)

BAD_WEIGHTS = [
    *(-0.5, -(2.0**-149), 3.4028235677973366e38, 3.5e38, 1e39, 10**400, math.nan, math.inf),
    *("0.5", None, True, []),
]


def bad_positions(last: int | None) -> list[Any]:
    bad: list[Any] = [-1, 2**31, 1.5, "1", None, True, [1]]
    if last is not None:
        bad += [last, last - 1, float(last + 1)]
    return bad


def bad_attention(draw: st.DrawFn, kept: int) -> Any:
    """An attention that must be refused with ``invalid-attention`` when ``kept`` are kept."""
    kind = draw(st.sampled_from(["length", "element", "type"]))
    if kind == "type":
        return draw(st.sampled_from([0.5, "[]", {}, True]))
    if kind == "length" or kept == 0:
        length = draw(st.integers(0, kept + 2).filter(lambda n: n != kept))
        return [0.5] * length
    attn: list[Any] = [0.5] * kept
    attn[draw(st.integers(0, kept - 1))] = draw(st.sampled_from(BAD_WEIGHTS))
    return attn


def state(reference: Any) -> tuple[Any, ...]:
    """A policy's observable state bit for bit, with the rings themselves where it shows them."""
    scores = reference.scores()
    rings = None
    if isinstance(reference, SnapKV):
        rings = [float_bits(ring.values) for ring in reference.rings]
    return (
        scores.positions,
        float_bits(scores.sums),
        float_bits(scores.pooled),
        reference.slot,
        reference.last_admitted,
        rings,
    )


def check_eviction(reference: SnapKV, kept_before: list[int], victims: list[int]) -> None:
    """The invariants of one eviction, judged on its own terms."""
    budget, recent = reference.params.budget, reference.params.recentWindow
    protected = set(kept_before[len(kept_before) - recent :]) if recent else set()
    assert victims == sorted(set(victims)), "ascending and unique"
    assert set(victims) <= set(kept_before), "only kept positions"
    assert not set(victims) & protected, "never the recentWindow highest"
    assert len(victims) == max(0, len(kept_before) - budget), "the right count"
    assert list(reference.kept) == [p for p in kept_before if p not in victims]


def compare(reference: Any, oracle: OracleSnapKV) -> None:
    assert list(reference.kept) == oracle.kept
    assert reference.slot == oracle.slot
    assert reference.last_admitted == oracle.last
    scores = reference.scores()
    assert float_bits(scores.sums) == float_bits(oracle.sums())
    assert float_bits(scores.pooled) == float_bits(oracle.pooled())


def draw_call(draw: st.DrawFn, reference: SnapKV) -> tuple[tuple[Any, ...], str | None]:
    """One call and the error kind it must get (None: it must succeed)."""
    kept, last = len(reference.kept), reference.last_admitted
    exhausted = last == MAX_INT31
    choice = draw(st.sampled_from(["step"] * 5 + ["null", "evict", "evict", "bad-pos", "bad-attn"]))
    if choice == "evict" or (exhausted and choice in ("step", "null", "bad-attn")):
        return ("evict",), None
    if choice == "bad-pos":  # with a good or a bad attention: the position is judged first
        pos = draw(st.sampled_from(bad_positions(last)))
        attn = draw(st.sampled_from([[0.5] * kept, bad_attention(draw, kept)]))
        return ("step", pos, attn), "invalid-position"
    start = -1 if last is None else last
    room = MAX_INT31 - start  # >= 1: not exhausted
    big = draw(st.integers(0, 9)) == 0  # now and then a huge gap, towards 2^31 - 1
    gap = draw(st.integers(1, room if big else min(3, room)))
    pos = start + gap
    if choice == "bad-attn":
        return ("step", pos, bad_attention(draw, kept)), "invalid-attention"
    attn = None if choice == "null" else draw(st.lists(WEIGHTS, min_size=kept, max_size=kept))
    return ("step", pos, attn), None


@pytest.mark.slow
@IMPLEMENTATIONS
@SETTINGS
@given(raw=policy_params(), data=st.data())
def test_reference_equals_oracle_on_random_scenarios(
    fast: bool, raw: dict[str, int], data: Any
) -> None:
    reference = (fast_policy if fast else new_policy)(raw, data.draw(st.integers()))
    oracle = OracleSnapKV(raw)
    for _ in range(data.draw(st.integers(1, 40))):
        call, must_refuse = draw_call(data.draw, reference)
        kept_before, before, oracle_before = (
            list(reference.kept),
            state(reference),
            oracle.state(),
        )
        outcome = apply(reference, call)
        assert outcome == apply(oracle, call), call
        if must_refuse is not None:
            assert outcome == ("error", must_refuse)
            assert state(reference) == before
            assert oracle.state() == oracle_before
            continue
        assert outcome[0] == "ok"
        if call[0] == "evict":
            check_eviction(reference, kept_before, outcome[1])
        compare(reference, oracle)


@IMPLEMENTATIONS
@settings(SETTINGS, max_examples=25)
@given(
    raw=policy_params(),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(50, 300),
    every=st.integers(1, 7),
)
def test_reference_equals_oracle_on_long_random_workloads(
    fast: bool, raw: dict[str, int], seed: int, steps: int, every: int
) -> None:
    """numpy-seeded float32 attention, evicting every ``every`` steps: long runs, many wraps."""
    rng = np.random.default_rng(seed)
    reference, oracle = (fast_policy if fast else new_policy)(raw), OracleSnapKV(raw)
    for pos in range(steps):
        attn = [float(w) for w in rng.random(len(oracle.kept), dtype=np.float32)]
        reference.step(pos, attn)
        oracle.step(pos, attn)
        if pos % every == 0:
            kept_before = list(reference.kept)
            victims = reference.evict()
            assert victims == oracle.evict()
            check_eviction(reference, kept_before, victims)
    compare(reference, oracle)


@pytest.mark.slow
@settings(SETTINGS, max_examples=20)
@given(
    budget=st.integers(1, 400),
    obs=st.sampled_from([1, 2, 7, 16, 33, 1000, MAX_INT31]),
    kernel=st.sampled_from([1, 3, 7, 17, 19, 101, MAX_INT31]),
    seed=st.integers(0, 2**32 - 1),
    every=st.integers(1, 40),
    nulls=st.integers(0, 4),
)
def test_fast_path_equals_the_reference_on_huge_params_and_long_runs(
    budget: int, obs: int, kernel: int, seed: int, every: int, nulls: int
) -> None:
    """1,500 steps with a budget in the hundreds, where the oracle would take minutes: victims
    and every ``scores`` answer agree bit for bit, ties included (weights from few values)."""
    raw = params_dict(budget, budget // 3, obs, kernel)
    reference, fast = new_policy(raw), fast_policy(raw)
    rng = np.random.default_rng(seed)
    values = [*rng.random(5, dtype=np.float32).tolist(), 0.0]
    for pos in range(1500):
        attn = None
        if rng.integers(0, 5) >= nulls:
            attn = [values[i] for i in rng.integers(0, len(values), len(reference.kept))]
        reference.step(pos, attn)
        fast.step(pos, attn)
        if pos % every == 0:
            assert reference.evict() == fast.evict()
        if pos % 97 == 0:
            ours, theirs = reference.scores(), fast.scores()
            assert ours.positions == theirs.positions
            assert float_bits(ours.sums) == float_bits(theirs.sums)
            assert float_bits(ours.pooled) == float_bits(theirs.pooled)


PARAMS = params_dict(3, 1, 2, 3)

#: attn lists as a JSON decoder gives them (no booleans), legal and not, for three kept.
ATTNS: list[Any] = [
    [0.5, 0.25, 0.0],
    [0.5, 3, 2**70],  # integers, read as their nearest float64 and then float32
    [0.5, -0.0, 1e-46],  # zeros and a tiny weight that narrows to zero
    [0.5, -1e-46, 0.25],  # narrows to -0.0: accepted
    [0.5, -0.5, 0.25],
    [0.5, 3.5e38, 0.25],  # past the float32 range
    [0.5, 10**400, 0.25],  # past the float64 range
    [0.5, "0.5", 0.25],
    [0.5, None, 0.25],
    [0.5, [0.5], 0.25],
    [0.5, {"w": 0.5}, 0.25],
    [0.5, 0.25],  # too short
    [0.5, 0.25, 0.125, 0.0],  # too long
    None,
    "[]",
]


def outcome(call: Any) -> tuple[str, Any]:
    try:
        call()
    except PolicyError as error:
        return "error", (error.kind, error.message)
    return "ok", None


def observed(policy: Any) -> tuple[Any, ...]:
    scores = policy.scores()
    return scores.positions, float_bits(scores.sums), float_bits(scores.pooled), policy.slot


@pytest.mark.parametrize("attn", ATTNS, ids=lambda attn: json.dumps(attn)[:40])
def test_a_decoded_step_equals_the_references_step(attn):
    reference, fast = new_policy(PARAMS), fast_policy(PARAMS)
    for pos in range(3):
        reference.step(pos, [0.125] * pos)
        fast.step(pos, [0.125] * pos)
    assert outcome(lambda: fast.step_decoded(3, attn)) == outcome(lambda: reference.step(3, attn))
    assert observed(fast) == observed(reference)
    assert reference.evict() == fast.evict()
    assert observed(fast) == observed(reference)


def test_a_line_holding_a_boolean_weight_is_refused_by_the_served_fast_path():
    session = Session(fast_policy)
    for line in (
        b'{"id":1,"op":"new","params":{"budget":3,"recentWindow":1,"obsWindow":2,'
        b'"poolKernel":3},"seed":0}',
        b'{"id":2,"op":"step","pos":0,"attn":null}',
    ):
        assert session.handle_line(line)["ok"] is True
    for weight in (b"true", b"false"):
        answer = session.handle_line(b'{"id":3,"op":"step","pos":1,"attn":[%s]}' % weight)
        assert answer["ok"] is False and answer["error"]["kind"] == "invalid-attention"
        assert "attn[0] is not a number" in answer["error"]["message"]
    assert session.handle_line(b'{"id":4,"op":"step","pos":1,"attn":[1]}')["ok"] is True

"""One named test per rule and per refusal of SPEC.md §2, against the reference policy.

Expected values are worked out by hand from SPEC.md §2 with dyadic weights (every sum is exact),
and every scenario that runs calls is also replayed on the independent oracle
(:class:`tests.support.oracles.OracleSnapKV`), which must agree bit for bit (:func:`replay`).
"""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import pytest

from conformance.policy import reference
from conformance.policy.reference import FLOAT32_MAX, INT31_MAX, PARAM_NAMES, PolicyError, SnapKV
from tests.support.oracles import OracleError, OracleSnapKV, apply, float_bits, params_dict

BASE = params_dict(4, 1, 4, 3)
SMALLEST_SUBNORMAL = 2.0**-149


def history(policy: SnapKV) -> list[list[float]]:
    """Every ring in full, ``obsWindow`` slots each (the unwritten ones zero); small windows."""
    width = policy.params.obsWindow
    return [ring.values + [0.0] * (width - len(ring.values)) for ring in policy.rings]


def params(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


def replay(raw: dict[str, Any], calls: list[tuple], seed: int = 0) -> list[tuple[str, Any]]:
    """Run ``calls`` on the reference and the oracle; assert they agree; return the outcomes.

    After every call the two must agree on the outcome (result or error kind) and on the
    kept positions and window sums, bit for bit.
    """
    reference, oracle = SnapKV(raw, seed), OracleSnapKV(raw, seed)
    outcomes = []
    for call in calls:
        outcome = apply(reference, call)
        assert outcome == apply(oracle, call), call
        assert reference.kept == oracle.kept
        assert float_bits(reference.scores().sums) == float_bits(oracle.sums())
        outcomes.append(outcome)
    return outcomes


def victims(raw: dict[str, Any], calls: list[tuple]) -> list[list[int]]:
    """The victim lists of the ``evict`` calls in ``calls`` (all calls must succeed)."""
    outcomes = replay(raw, calls)
    assert all(status == "ok" for status, _ in outcomes), outcomes
    return [result for call, (_, result) in zip(calls, outcomes, strict=True) if call[0] == "evict"]


def run(raw: dict[str, Any], calls: list[tuple]) -> SnapKV:
    """A reference policy after ``calls`` (checked against the oracle on the way)."""
    replay(raw, calls)
    policy = SnapKV(raw)
    for call in calls:
        apply(policy, call)
    return policy


def refusal_kind(policy: Any, pos: Any, attn: Any) -> str:
    with pytest.raises((PolicyError, OracleError)) as caught:
        policy.step(pos, attn)
    return caught.value.kind


def assert_params_refused(raw: Any) -> None:
    with pytest.raises(PolicyError) as caught:
        SnapKV(raw)
    assert caught.value.kind == "invalid-params"
    with pytest.raises(OracleError):
        OracleSnapKV(raw)


def assert_step_refused(
    kind: str, pos: Any, attn: Any, setup: list[tuple] | None = None, raw: Any = BASE
) -> None:
    """After ``setup`` (default: positions 0, 1, 2 admitted), ``step(pos, attn)`` is refused."""
    setup = setup if setup is not None else [("step", p, None) for p in range(3)]
    reference, oracle = SnapKV(raw), OracleSnapKV(raw)
    for call in setup:
        apply(reference, call)
        apply(oracle, call)
    assert refusal_kind(reference, pos, attn) == kind
    assert refusal_kind(oracle, pos, attn) == kind


def sums(policy: SnapKV) -> list[float]:
    return policy.scores().sums


# -- parameters ------------------------------------------------------------------------------


def test_minimal_params_accepted() -> None:
    policy = SnapKV(params_dict(1, 0, 1, 1))
    assert policy.params.as_dict() == params_dict(1, 0, 1, 1)


def test_budget_zero_refused() -> None:
    assert_params_refused(params(budget=0, recentWindow=0))


def test_recent_window_equal_to_budget_refused() -> None:
    assert_params_refused(params(budget=4, recentWindow=4))


def test_recent_window_above_budget_refused() -> None:
    assert_params_refused(params(budget=4, recentWindow=5))


def test_recent_window_just_below_budget_accepted() -> None:
    assert SnapKV(params(budget=4, recentWindow=3)).params.recentWindow == 3


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_negative_param_refused(name: str) -> None:
    assert_params_refused(params(**{name: -1}))


def test_obs_window_zero_refused() -> None:
    assert_params_refused(params(obsWindow=0))


@pytest.mark.parametrize("kernel", [2, 4, 2**30])
def test_pool_kernel_even_refused(kernel: int) -> None:
    assert_params_refused(params(poolKernel=kernel))


def test_pool_kernel_zero_refused() -> None:
    assert_params_refused(params(poolKernel=0))


@pytest.mark.parametrize("kernel", [-1, -2, -7])
def test_pool_kernel_negative_refused(kernel: int) -> None:
    assert_params_refused(params(poolKernel=kernel))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_param_above_int31_refused(name: str) -> None:
    assert_params_refused(params(**{name: 2**31}))
    assert_params_refused(params(**{name: 2**31 + 1 if name == "poolKernel" else 2**64}))


@pytest.mark.parametrize(
    "raw",
    [
        params(budget=INT31_MAX),
        params(budget=INT31_MAX, recentWindow=INT31_MAX - 1),
        params(obsWindow=INT31_MAX),
        params(poolKernel=INT31_MAX),
        params_dict(INT31_MAX, INT31_MAX - 1, INT31_MAX, INT31_MAX),
    ],
    ids=["budget", "recentWindow", "obsWindow", "poolKernel", "all"],
)
def test_param_int31_max_accepted_where_legal(raw: dict[str, int]) -> None:
    assert SnapKV(raw).params.as_dict() == raw
    OracleSnapKV(raw)


def test_recent_window_int31_max_refused() -> None:
    # recentWindow < budget <= 2^31 - 1, so 2^31 - 1 is never a legal recentWindow.
    assert_params_refused(params(budget=INT31_MAX, recentWindow=INT31_MAX))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_missing_param_refused(name: str) -> None:
    raw = params()
    del raw[name]
    assert_params_refused(raw)


@pytest.mark.parametrize("extra", ["seed", "budgetx", "RecentWindow"])
def test_extra_param_refused(extra: str) -> None:
    assert_params_refused(params(**{extra: 1}))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_boolean_param_refused(name: str) -> None:
    # True == 1 and False == 0 in Python: each would be a legal value if read as an integer.
    assert_params_refused(params(**{name: name != "recentWindow"}))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_string_param_refused(name: str) -> None:
    assert_params_refused(params(**{name: str(BASE[name])}))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_fractional_param_refused(name: str) -> None:
    assert_params_refused(params(**{name: 4.5}))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_integral_float_param_refused_by_the_reference(name: str) -> None:
    # SPEC.md leaves 4.0 to ports; the reference accepts only JSON integers (SPEC.md §6, item 4).
    assert_params_refused(params(**{name: float(BASE[name])}))


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_null_param_refused(name: str) -> None:
    assert_params_refused(params(**{name: None}))


@pytest.mark.parametrize("raw", [None, [], list(BASE.items()), "budget", 4, True], ids=repr)
def test_params_not_an_object_refused(raw: Any) -> None:
    assert_params_refused(raw)


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        (params(poolKernel=4), "poolKernel"),
        (params(budget=0, recentWindow=0), "budget"),
        (params(obsWindow="4"), '"4"'),
        (params(extra=1), "extra"),
    ],
)
def test_params_refusal_message_names_the_value(raw: dict[str, Any], named: str) -> None:
    with pytest.raises(PolicyError) as caught:
        SnapKV(raw)
    assert named in caught.value.message


# -- attention -------------------------------------------------------------------------------


def test_attention_too_short_refused() -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5])


def test_attention_too_long_refused() -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, 0.5, 0.5])


def test_attention_on_empty_cache_must_be_empty() -> None:
    assert_step_refused("invalid-attention", 0, [0.5], setup=[])
    replay(BASE, [("step", 0, [])])


@pytest.mark.parametrize("weight", [-0.5, -1, -FLOAT32_MAX, -SMALLEST_SUBNORMAL, -1e-45])
def test_negative_weight_refused(weight: float) -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, weight])


def test_negative_weight_above_half_the_smallest_subnormal_refused() -> None:
    # Just beyond -2^-150 the nearest float32 is -2^-149: negative, so refused.
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, -(2.0**-150) * (1 + 2.0**-52)])


@pytest.mark.parametrize(
    "weight",
    [3.5e38, 1e39, 1e308, 2**128, 10**400, -(10**400), math.inf, -math.inf],
    ids=["3.5e38", "1e39", "1e308", "2**128", "10**400", "-10**400", "inf", "-inf"],
)
def test_weight_beyond_float32_range_refused(weight: float) -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, weight])


def test_weight_at_the_float32_rounding_midpoint_above_max_refused() -> None:
    # FLT_MAX + half an ulp ties to even, and even is 2^128: infinite, so refused.
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, float.fromhex("0x1.ffffffp+127")])


@pytest.mark.parametrize(
    "weight",
    [float.fromhex("0x1.fffffefffffffp+127"), FLOAT32_MAX, int(FLOAT32_MAX)],
    ids=["just-above-max", "max", "max-as-integer"],
)
def test_weight_rounding_down_to_float32_max_accepted(weight: float) -> None:
    policy = run(BASE, [("step", 0, None), ("step", 1, [weight])])
    assert history(policy)[0][0] == FLOAT32_MAX
    assert sums(policy)[0] == FLOAT32_MAX


def test_nan_weight_refused() -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, math.nan])


@pytest.mark.parametrize("weight", ["0.5", True, False, None, [0.5], {"w": 0.5}], ids=repr)
def test_non_number_weight_refused(weight: Any) -> None:
    assert_step_refused("invalid-attention", 3, [0.5, 0.5, weight])


@pytest.mark.parametrize("attn", [0.5, 0, "[0.5, 0.5, 0.5]", {}, True, (0.5, 0.5, 0.5)], ids=repr)
def test_attention_neither_null_nor_list_refused(attn: Any) -> None:
    assert_step_refused("invalid-attention", 3, attn)


def test_integer_weights_accepted() -> None:
    policy = run(BASE, [("step", 0, None), ("step", 1, [1]), ("step", 2, [0, 3])])
    assert sums(policy) == [1.0, 3.0, 0.0]


def test_minus_zero_accepted_as_zero() -> None:
    policy = run(BASE, [("step", 0, None), ("step", 1, None), ("step", 2, [-0.0, 0.0])])
    assert math.copysign(1.0, history(policy)[0][0]) < 0  # stored as given ...
    # ... but a sum starts at +0.0 and +0.0 + -0.0 is +0.0, so it ranks exactly like 0.0.
    assert float_bits(sums(policy)) == float_bits([0.0, 0.0, 0.0])


@pytest.mark.parametrize("weight", [-1e-46, -(2.0**-150)], ids=["-1e-46", "-2^-150"])
def test_tiny_negative_narrows_to_minus_zero_and_is_accepted(weight: float) -> None:
    policy = run(BASE, [("step", 0, None), ("step", 1, [weight])])
    assert float_bits(history(policy)[0][:1]) == float_bits([-0.0])
    assert float_bits(sums(policy)) == float_bits([0.0, 0.0])


def test_subnormal_weights_kept_exactly() -> None:
    weights = [SMALLEST_SUBNORMAL, 2.0**-130, 2e-45]  # 2e-45 rounds to 2^-149 in float32
    calls = [("step", p, None) for p in range(3)] + [("step", 3, weights)]
    policy = run(params(obsWindow=1), calls)
    assert [ring[0] for ring in history(policy)[:3]] == [
        SMALLEST_SUBNORMAL,
        2.0**-130,
        SMALLEST_SUBNORMAL,
    ]
    assert sums(policy)[:3] == [SMALLEST_SUBNORMAL, 2.0**-130, SMALLEST_SUBNORMAL]


def test_subnormal_outranks_zero() -> None:
    raw = params_dict(1, 0, 1, 1)
    calls = [("step", 0, None), ("step", 1, [SMALLEST_SUBNORMAL]), ("evict",)]
    assert victims(raw, calls) == [[1]]  # 1 has 0.0 < 2^-149: no flush to zero


# -- positions -------------------------------------------------------------------------------


def test_position_equal_to_last_refused() -> None:
    assert_step_refused("invalid-position", 2, None)


def test_position_decreasing_refused() -> None:
    assert_step_refused("invalid-position", 1, None)


def test_position_negative_refused() -> None:
    assert_step_refused("invalid-position", -1, None, setup=[])


def test_position_two_to_the_31_refused() -> None:
    assert_step_refused("invalid-position", 2**31, None)


def test_position_int31_max_accepted() -> None:
    assert run(BASE, [("step", INT31_MAX, None)]).kept == [INT31_MAX]


def test_first_position_zero_accepted() -> None:
    assert run(BASE, [("step", 0, None)]).kept == [0]


@pytest.mark.parametrize("pos", [3.5, 3.0, "3", None, [3], {}], ids=repr)
def test_position_not_an_integer_refused(pos: Any) -> None:
    assert_step_refused("invalid-position", pos, None)


@pytest.mark.parametrize("pos", [True, False])
def test_position_boolean_refused(pos: bool) -> None:
    assert_step_refused("invalid-position", pos, None, setup=[])


def test_position_judged_before_attention() -> None:
    assert_step_refused("invalid-position", 2, [-1.0])
    assert_step_refused("invalid-position", "x", "not a list")


def test_evicted_position_cannot_come_back() -> None:
    # "strictly greater than every position admitted before", evicted or not.
    raw = params_dict(1, 0, 1, 1)
    calls = [("step", 0, None), ("step", 1, [1.0]), ("evict",)]
    assert victims(raw, calls) == [[1]]
    assert_step_refused("invalid-position", 1, None, setup=calls, raw=raw)


def test_gaps_between_positions_allowed() -> None:
    calls = [("step", p, None) for p in (0, 7, 1000, INT31_MAX)]
    assert run(BASE, calls).kept == [0, 7, 1000, INT31_MAX]


# -- the ring --------------------------------------------------------------------------------


def test_null_attention_is_inert() -> None:
    raw = params(obsWindow=3)
    observed = [("step", 0, None), ("step", 1, [0.5])]
    before = run(raw, observed)
    after = run(raw, [*observed, ("step", 2, None)])
    assert before.slot == after.slot == 1  # the cursor did not move ...
    assert float_bits(history(after)[0] + history(after)[1]) == float_bits(
        history(before)[0] + history(before)[1]
    )  # ... nothing was written
    assert history(after)[2] == [0.0, 0.0, 0.0]
    # The next observed step lands in slot 1, as if the null step had never happened.
    later = run(raw, [*observed, ("step", 2, None), ("step", 3, [1, 2, 4])])
    assert [ring[1] for ring in history(later)[:3]] == [1.0, 2.0, 4.0]


def test_ring_wraps_and_overwrites_the_oldest_slot() -> None:
    raw = params(obsWindow=2)
    calls = [("step", 0, None), ("step", 1, [0.5]), ("step", 2, [0.25, 0]), ("step", 3, [2, 0, 0])]
    policy = run(raw, calls)
    assert policy.slot == 1
    assert history(policy)[0] == [2.0, 0.25]  # slot 0's 0.5 was overwritten by 2
    assert sums(policy)[0] == 2.25


def test_admitted_position_has_zero_history_never_a_stale_one() -> None:
    # 0 and 3 are evicted with written rings; 4 arrives next and must start from zeros, so
    # it is the lowest at the next eviction. Inheriting a ring left behind by an earlier entry
    # (here the reference's freed row holds 2's old [2, 0]) would tie it with 1 and evict 1.
    raw = params_dict(2, 0, 2, 1)
    calls = [
        ("step", 0, None),
        ("step", 1, [0.5]),
        ("step", 2, [0.5, 4]),
        ("step", 3, [1, 1, 2]),
        ("evict",),
        ("step", 4, [1, 1]),
        ("evict",),
    ]
    assert victims(raw, calls) == [[0, 3], [4]]
    policy = run(raw, calls[:-1])
    assert policy.kept == [1, 2, 4]
    assert history(policy)[2] == [0.0, 0.0]
    assert sums(policy) == [2.0, 3.0, 0.0]


# -- eviction --------------------------------------------------------------------------------


def test_evict_with_nothing_to_evict_returns_empty_and_changes_nothing() -> None:
    calls = [("step", 0, None), ("step", 1, [0.5])]
    policy = run(BASE, calls)
    before = snapshot(policy)
    assert policy.evict() == []
    assert snapshot(policy) == before
    assert victims(BASE, [*calls, ("evict",), ("evict",)]) == [[], []]


def test_recent_window_protected() -> None:
    # Positions 3 and 4 are the two most recent: protected though their sums are the lowest.
    raw = params_dict(3, 2, 1, 1)
    calls = [*(("step", p, None) for p in range(3)), ("step", 3, [1, 2, 4]), ("step", 4, None)]
    assert victims(raw, [*calls, ("evict",)]) == [[0, 1]]


def test_recent_window_zero_makes_the_newest_a_candidate() -> None:
    raw = params_dict(2, 0, 1, 1)
    calls = [("step", 0, None), ("step", 1, [1.0]), ("step", 2, [1.0, 1.0]), ("evict",)]
    assert victims(raw, calls) == [[2]]


def test_recent_window_one_protects_only_the_newest() -> None:
    raw = params_dict(2, 1, 1, 1)
    calls = [("step", 0, None), ("step", 1, [1.0]), ("step", 2, [1.0, 0.5]), ("evict",)]
    assert victims(raw, calls) == [[1]]


def test_multi_victim_eviction_after_several_steps() -> None:
    # Eight positions, budget 2: one evict returns six victims (obsWindow 4 < steps, so the
    # ring wraps in between; recentWindow 1 keeps 7).
    raw = params_dict(2, 1, 4, 1)
    weights = {p: [float(2 ** ((p + i) % 3)) for i in range(p)] for p in range(1, 8)}
    steps = [("step", 0, None)] + [("step", p, weights[p]) for p in range(1, 8)]
    (evicted,) = victims(raw, [*steps, ("evict",)])
    assert len(evicted) == 6 and evicted == sorted(set(evicted)) and 7 not in evicted
    assert victims(raw, [*steps, ("evict",), ("evict",)])[1] == []


def test_all_victims_chosen_from_one_scoring() -> None:
    # Kernel 5, sums [2, 1, 0, 1, 0, 0] over positions 0, 2, ..., 10: every pooled score of
    # 6, 8 and 10 is 1, so the two victims are 6 and 8. Evicting one at a time and re-pooling
    # would evict 6 and then 10 (with 6 gone, 10's window holds only zeros).
    raw = params_dict(4, 0, 1, 5)
    calls = [*(("step", p, None) for p in range(0, 10, 2)), ("step", 10, [2, 1, 0, 1, 0])]
    assert run(raw, calls).scores().pooled == [2.0, 2.0, 2.0, 1.0, 1.0, 1.0]
    assert victims(raw, [*calls, ("evict",)]) == [[6, 8]]


def test_victims_returned_ascending_not_in_rank_order() -> None:
    # Rank order (lowest first) is 3, 1, 2; the answer is ascending.
    raw = params_dict(2, 1, 1, 1)
    calls = [*(("step", p, None) for p in range(4)), ("step", 4, [8, 0.5, 1, 0.25]), ("evict",)]
    assert victims(raw, calls) == [[1, 2, 3]]


def test_ties_evict_the_lower_position() -> None:
    raw = params_dict(3, 1, 1, 1)
    calls = [*(("step", p, None) for p in range(4)), ("step", 4, [1, 0.5, 0.5, 0.5]), ("evict",)]
    assert victims(raw, calls) == [[1, 2]]


def test_pooling_over_kept_entries_not_position_numbers() -> None:
    # Kept 0, 10, 20, 30, 40 (kernel 3): adjacent kept entries are neighbours though 10 apart,
    # so 10's sum shields 0 and 20, and 30 (pooled 0.5) goes. Pooling over position numbers
    # (+-1) would shield nothing and evict 0 (sum 0).
    raw = params_dict(4, 1, 1, 3)
    calls = [*(("step", p, None) for p in (0, 10, 20, 30)), ("step", 40, [0, 4, 0, 0.5])]
    assert run(raw, calls).scores().pooled == [4.0, 4.0, 4.0, 0.5, 0.5]
    assert victims(raw, [*calls, ("evict",)]) == [[30]]


def test_pooling_clamps_at_both_ends() -> None:
    raw = params_dict(8, 0, 1, 3)
    calls = [*(("step", p, None) for p in range(5)), ("step", 5, [2, 0, 0, 0, 0.5])]
    # No wrap-around: the last entry (sum 0) sees only entry 4's 0.5, not entry 0's 2.
    assert run(raw, calls).scores().pooled == [2.0, 2.0, 0.0, 0.5, 0.5, 0.5]


def test_recent_entries_are_pool_neighbours() -> None:
    # 3 is protected (recentWindow 2) but its sum still shields its neighbour 2; pooling over
    # the candidates alone would evict 2 (sum 0) instead of 1.
    raw = params_dict(3, 2, 1, 3)
    calls = [*(("step", p, None) for p in range(4)), ("step", 4, [0.5, 0.25, 0, 8]), ("evict",)]
    assert victims(raw, calls) == [[0, 1]]


def test_pool_kernel_one_disables_pooling() -> None:
    raw = params_dict(3, 2, 1, 1)
    calls = [*(("step", p, None) for p in range(4)), ("step", 4, [0.5, 0.25, 0, 8]), ("evict",)]
    assert victims(raw, calls) == [[1, 2]]


def test_kernel_wider_than_the_cache_pools_over_all_entries() -> None:
    raw = params_dict(3, 0, 1, INT31_MAX)
    calls = [*(("step", p, None) for p in range(4)), ("step", 4, [0.5, 0.25, 0, 8])]
    assert run(raw, calls).scores().pooled == [8.0] * 5
    assert victims(raw, [*calls, ("evict",)]) == [[0, 1]]  # all tied: the lowest positions


def test_scores_view() -> None:
    calls = [("step", 0, None), ("step", 5, [0.5]), ("step", 9, [0.25, 1])]
    scores = run(params(obsWindow=2, poolKernel=3), calls).scores()
    assert scores.positions == [0, 5, 9]
    assert scores.sums == [0.75, 1.0, 0.0]
    assert scores.pooled == [1.0, 1.0, 1.0]
    assert {type(v) for v in scores.positions} == {int}
    assert {type(v) for v in scores.sums + scores.pooled} == {float}


def test_sums_follow_slot_order_across_many_slots() -> None:
    # Position 0's ring of 20: 1.0 in slot 0, then 19 x 2^-53. In slot order each 2^-53 ties
    # and rounds back to 1.0; numpy's pairwise np.sum would give 1 + 9 * 2^-52 (see
    # test_reference_summation_order.py for traps that tell every order apart).
    raw = params_dict(4, 1, 20, 1)
    calls = [("step", 0, None)]
    calls += [("step", p, [1.0 if p == 1 else 2.0**-53] * p) for p in range(1, 21)]
    policy = run(raw, calls)
    assert history(policy)[0] == [1.0] + [2.0**-53] * 19
    assert sums(policy)[0] == 1.0


def test_empty_attention_on_an_empty_cache_advances_the_ring() -> None:
    # [] is not null: it writes nothing (nothing is kept) but moves the cursor.
    policy = run(params(obsWindow=3), [("step", 0, []), ("step", 1, [0.5])])
    assert policy.slot == 2
    assert history(policy)[0] == [0.0, 0.5, 0.0]


# -- atomic refusal --------------------------------------------------------------------------

SETUP = [
    ("step", 0, None),
    ("step", 1, [0.5]),
    ("step", 2, [0.25, 0.75]),
    ("step", 3, [0.125, 0.5, 1.0]),
    ("evict",),
    ("step", 5, [1.0, 0.5, 0.25]),
]
SETUP_PARAMS = params_dict(3, 1, 3, 3)
GOOD = [0.0] * 4  # a valid attention after SETUP

REFUSALS = [
    ("invalid-position", 5, GOOD),
    ("invalid-position", 4, GOOD),
    ("invalid-position", -1, GOOD),
    ("invalid-position", 2**31, GOOD),
    ("invalid-position", 6.0, GOOD),
    ("invalid-position", "6", GOOD),
    ("invalid-position", None, GOOD),
    ("invalid-position", True, GOOD),
    ("invalid-position", 5, [-1.0] * 4),
    ("invalid-attention", 6, [0.5, 0.5, 0.5]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, 0.5, 0.5]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, -0.5]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, 3.5e38]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, 10**400]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, math.nan]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, math.inf]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, "0.5"]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, True]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, None]),
    ("invalid-attention", 6, [0.5, 0.5, 0.5, [0.5]]),
    ("invalid-attention", 6, 0.5),
    ("invalid-attention", 6, "x"),
    ("invalid-attention", 6, {}),
]


def snapshot(policy: SnapKV) -> tuple[Any, ...]:
    """Everything a call may change, bit for bit."""
    scores = policy.scores()
    return (
        policy.kept,
        [float_bits(ring) for ring in history(policy)],
        policy.slot,
        policy.last_admitted,
        float_bits(scores.sums),
        float_bits(scores.pooled),
    )


@pytest.mark.parametrize(("kind", "pos", "attn"), REFUSALS, ids=lambda v: repr(v)[:24])
def test_refused_step_changes_nothing(kind: str, pos: Any, attn: Any) -> None:
    # The bad weight comes last, after good ones: a port that writes while it validates fails.
    refused, twin, oracle = SnapKV(SETUP_PARAMS), SnapKV(SETUP_PARAMS), OracleSnapKV(SETUP_PARAMS)
    for call in SETUP:
        for policy in (refused, twin, oracle):
            apply(policy, call)
    assert refused.slot == 1 and refused.kept == [1, 2, 3, 5]  # a state worth keeping
    before, oracle_before = snapshot(refused), oracle.state()
    assert refusal_kind(refused, pos, attn) == kind
    assert refusal_kind(oracle, pos, attn) == kind
    assert snapshot(refused) == before
    assert oracle.state() == oracle_before
    # And the policy goes on exactly as one that never saw the refused call.
    for policy in (refused, twin):
        policy.step(6, [0.25, 2.0, 0.5, 1.0])
    assert refused.evict() == twin.evict()
    assert snapshot(refused) == snapshot(twin)


# -- the seed and huge parameters ------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, -5, 2**70])
def test_seed_is_ignored(seed: int) -> None:
    calls = [*SETUP, ("step", 6, [1, 0, 2, 0]), ("evict",)]

    def outcome(s: int) -> tuple[Any, ...]:
        policy = SnapKV(SETUP_PARAMS, s)
        return [apply(policy, call) for call in calls], snapshot(policy)

    assert outcome(seed) == outcome(0)


def test_huge_params_accepted_without_huge_allocation() -> None:
    maxima = params_dict(INT31_MAX, INT31_MAX - 1, INT31_MAX, INT31_MAX)
    evicting = params_dict(6, 2, INT31_MAX, INT31_MAX)  # evicts, with a ring that never wraps
    tracemalloc.start()
    try:
        big, small, oracle = SnapKV(maxima), SnapKV(evicting), OracleSnapKV(evicting)
        for pos in range(300):
            big.step(pos, [float((pos * i) % 5) for i in range(len(big.kept))])
            assert big.evict() == []
            attn = [float((pos + i) % 4) / 4 for i in range(len(small.kept))]
            small.step(pos, attn)
            oracle.step(pos, attn)
            assert small.evict() == oracle.evict()
        big.scores()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(big.kept) == 300 and big.slot == 300  # [] on the empty cache counts too
    assert peak < 16 * 2**20, peak  # obsWindow-sized rings would take 2.4 TB


# -- the reference's reading rules (policy/reference.py, SPEC.md §2.1, §2.3, §2.6) ---------------


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        (0.5, True),
        (3, True),
        (-0.0, True),
        (3.4028234663852886e38, True),  # the largest float32, exactly
        (340282346638528859811704183484516925440, True),  # the same, as an integer
        (1.1, False),  # not a float32: its nearest float32 differs
        (2**200, False),  # an integer beyond the float32 range
        (3.5e38, False),  # a float beyond it
        (True, False),
        ("0.5", False),
        (None, False),
    ],
)
def test_spec_2_6_a_weight_of_a_call_that_must_succeed_is_exactly_a_float32(value, exact):
    """SPEC.md §2.6: the weights of calls that must succeed are exactly float32 values: an
    integer or a float whose value narrowing to float32 leaves unchanged, within the range."""
    assert reference.check_weight_literal(value) is exact


def test_spec_2_3_a_weight_past_the_float32_range_narrows_to_an_infinity_of_its_sign():
    assert reference.float32_literal(1e39) == float("inf")
    assert reference.float32_literal(-1e39) == float("-inf")
    assert reference.float32_literal(-(10**400)) == float("-inf")


def test_spec_3_3_a_params_refusal_names_what_is_missing_in_words():
    """SPEC.md §3.3: a refusal's message is a string; the reference's names the missing
    params, so a porter reading it knows which."""
    with pytest.raises(reference.PolicyError) as caught:
        reference.Params.parse({"budget": 4, "recentWindow": 1})
    assert caught.value.kind == "invalid-params"
    assert caught.value.message == "params is missing obsWindow, poolKernel"


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"budget": 4, "recentWindow": 1, "obsWindow": 1}, "poolKernel"),
        ({"budget": 2**31, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1}, "budget"),
        ({"budget": 4, "recentWindow": 4, "obsWindow": 1, "poolKernel": 1}, "recentWindow"),
        ({"budget": 4, "recentWindow": 1, "obsWindow": 0, "poolKernel": 1}, "obsWindow"),
        ({"budget": 4, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1, "x": 1}, "x"),
    ],
)
def test_spec_3_3_every_params_refusal_carries_a_message_naming_the_field(params, named):
    """SPEC.md §3.3: a refusal's ``message`` is a string; the reference adapter answers with
    the policy's own, so each ``invalid-params`` refusal must have one, naming the field."""
    with pytest.raises(reference.PolicyError) as caught:
        reference.Params.parse(params)
    assert caught.value.kind == "invalid-params"
    assert isinstance(caught.value.message, str) and named in caught.value.message


def test_spec_2_1_params_already_parsed_parse_as_themselves():
    """A policy made from parsed params (``new_policy(Params)``) has the same params."""
    parsed = reference.Params.parse(
        {"budget": 4, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}
    )
    assert reference.Params.parse(parsed) == parsed

"""The known reductions of SPEC.md §2.7, against independent TOVA and H2O oracles.

- ``poolKernel 1, obsWindow 1`` is TOVA: evict the lowest latest observed weight (a position
  not observed since its admission scores 0), ties to the lower position.
- ``poolKernel 1`` with an ``obsWindow`` longer than the run is H2O: evict the lowest
  cumulative attention since admission, with the ``recentWindow`` newest protected.

Both oracles (:mod:`tests.support.oracles`) are written in their own terms and know nothing
of rings or pooling. Scenarios include null steps, gaps and several steps between evictions.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.policy.reference import SnapKV
from tests.support.oracles import MAX_INT31, H2OOracle, ScorePolicyOracle, TovaOracle, params_dict

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Few distinct values make ties common; 2^-53 against 1.0 makes the order of additions matter.
WEIGHTS = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0**-53]),
    st.floats(0, 1, width=32),
)


@st.composite
def scenario(draw: st.DrawFn) -> tuple[int, int, list[tuple[Any, ...]]]:
    """``(budget, recentWindow, calls)``: steps (some null, with gaps) and evictions."""
    budget = draw(st.integers(1, 8))
    recent = draw(st.integers(0, budget - 1))
    calls: list[tuple[Any, ...]] = []
    kept, pos = 0, draw(st.integers(0, 3))
    for _ in range(draw(st.integers(1, 60))):
        if draw(st.integers(0, 3)) == 0:
            calls.append(("evict",))
            kept = min(kept, budget)
            continue
        null = draw(st.integers(0, 5)) == 0
        attn = None if null else draw(st.lists(WEIGHTS, min_size=kept, max_size=kept))
        calls.append(("step", pos, attn))
        kept += 1
        pos += draw(st.integers(1, 4))
    return budget, recent, calls


def replay_both(policy: SnapKV, oracle: ScorePolicyOracle, calls: list[tuple[Any, ...]]) -> None:
    for call in calls:
        if call[0] == "step":
            policy.step(call[1], call[2])
            oracle.step(call[1], call[2])
        else:
            assert policy.evict() == oracle.evict()
    assert policy.kept == oracle.kept


@SETTINGS
@given(scenario())
def test_kernel_one_window_one_is_tova(case: tuple[int, int, list[tuple[Any, ...]]]) -> None:
    budget, recent, calls = case
    replay_both(SnapKV(params_dict(budget, recent, 1, 1)), TovaOracle(budget, recent), calls)


@pytest.mark.slow
@SETTINGS
@given(scenario(), st.sampled_from([None, MAX_INT31]))
def test_kernel_one_window_longer_than_the_run_is_h2o(
    case: tuple[int, int, list[tuple[Any, ...]]], obs: int | None
) -> None:
    budget, recent, calls = case
    observed = sum(1 for call in calls if call[0] == "step" and call[2] is not None)
    window = obs if obs is not None else observed + 1  # just longer than the run, or huge
    replay_both(SnapKV(params_dict(budget, recent, window, 1)), H2OOracle(budget, recent), calls)

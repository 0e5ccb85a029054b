"""conformance.mutants._sorts: unstable sorts written out, the same on every machine."""

from __future__ import annotations

import platform
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import mutants
from conformance.explain.play import play
from conformance.mutants._sorts import numpy_argpartition, numpy_argsort
from conformance.spec import resources
from conformance.suite.vectors import load_suite
from tests.support.numpy_dispatch import dispatched_features, numpy_answers

#: Replays the catalogue, the fast path or numpy-built ports: must hold on any CPU and numpy.
pytestmark = pytest.mark.numpy_dispatch

#: Few distinct values, so that most keys are tied: the case where the algorithms differ.
tied_values = st.lists(st.integers(0, 3).map(float), min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(values=tied_values)
def test_numpy_argsort_returns_a_permutation_that_sorts(values: list[float]) -> None:
    order = numpy_argsort(values)
    assert sorted(order) == list(range(len(values)))
    ranked = [values[index] for index in order]
    assert ranked == sorted(values)


@settings(max_examples=200, deadline=None)
@given(values=tied_values, data=st.data())
def test_numpy_argpartition_puts_the_kth_in_place_and_splits_around_it(
    values: list[float], data: st.DataObject
) -> None:
    kth = data.draw(st.integers(0, len(values) - 1))
    order = numpy_argpartition(values, kth)
    assert sorted(order) == list(range(len(values)))
    ranked = [values[index] for index in order]
    assert ranked[kth] == sorted(values)[kth]
    assert all(value <= ranked[kth] for value in ranked[:kth])
    assert all(value >= ranked[kth] for value in ranked[kth + 1 :])


def test_numpy_argpartition_refuses_a_kth_out_of_bounds() -> None:
    with pytest.raises(ValueError, match="kth 3 is out of bounds for 3 values"):
        numpy_argpartition([1.0, 2.0, 3.0], 3)


def test_the_written_out_sorts_leave_ties_where_no_stable_sort_would() -> None:
    """Not stable: on a tie-heavy input both leave equal keys out of index order (else they
    would model nothing a stable sort does not)."""
    values = [float(i % 3 == 0) for i in range(40)]
    order = numpy_argsort(values)
    assert order != sorted(range(40), key=lambda i: (values[i], i))
    part = numpy_argpartition(values, 10)[:11]
    assert sorted(part) != [i for i in range(40) if values[i] == 0.0][:11]


def _tie_heavy_cases() -> Iterator[tuple[list[float], int]]:
    rng = np.random.default_rng(20261205)
    for size in (2, 3, 16, 17, 33, 129, 200, 1025):
        for distinct in (2, 3, 50):
            values = rng.integers(0, distinct, size).astype(float).tolist()
            yield values, int(rng.integers(0, size))
            yield sorted(values), size // 2
            yield sorted(values, reverse=True), size - 1


_NUMPY_PORTABLE = """
import json, sys
import numpy as np
cases = json.load(sys.stdin)
print(json.dumps([
    [np.argsort(np.array(values)).tolist(), np.argpartition(np.array(values), kth).tolist()]
    for values, kth in cases
]))
"""


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="numpy's portable sort is selected by switching off x86 dispatch only",
)
def test_the_written_out_sorts_are_numpys_portable_code() -> None:
    """numpy, with every SIMD kernel it dispatches to switched off, answers as the written-out
    sorts do on tie-heavy inputs of every size the suite uses: they model numpy's own code, not
    a sort of ours that happens to be unstable."""
    cases = list(_tie_heavy_cases())
    answers = numpy_answers(_NUMPY_PORTABLE, cases, dispatched_features())
    for (values, kth), (argsort, argpartition) in zip(cases, answers, strict=True):
        assert numpy_argsort(values) == argsort, (len(values), "argsort")
        assert numpy_argpartition(values, kth) == argpartition, (len(values), kth)


@pytest.mark.slow
def test_no_catalogued_mistake_calls_numpys_unstable_sorts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Their order among equal keys is the CPU's (numpy dispatches to SIMD kernels), so a
    mistake calling them would answer one way on the machine that computed the shipped
    outcomes (conformance/data/kills.json) and another elsewhere. (A replay turns an exception
    into a crash outcome, so the calls are recorded, not refused.)"""
    calls: list[str] = []

    def recording(name: str, original: Any) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if not (name in ("argsort", "sort") and kwargs.get("kind") in ("stable", "mergesort")):
                calls.append(name)
            return original(*args, **kwargs)

        return recorded

    for name in ("argsort", "sort", "argpartition", "partition"):
        monkeypatch.setattr(np, name, recording(name, getattr(np, name)))
    ties = [
        vector
        for vector in load_suite([str(resources.suite_dir())])
        if vector.id.startswith(("ties/", "evict/")) and len(vector.calls) < 2000
    ]
    assert ties
    for mutant in mutants.CATALOGUE:
        for vector in ties:
            play(mutant.policy, vector)
            assert not calls, f"{mutant.name} called np.{calls[0]} on {vector.id}"

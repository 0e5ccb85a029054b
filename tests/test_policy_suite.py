"""The committed suite replayed on the reference and on its fast path, call by call.

The expectations in ``vectors/`` were written when the suite was generated; replaying every
vector on a fresh policy and comparing each answer with the file (victims, error kinds, and
success where the file expects it) checks the reference against the suite without going
through the checker, and checks that the suite still says what the reference does.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.adapter.replay import replay
from conformance.mutants._base import outcome
from conformance.policy.fast import fast_policy
from conformance.policy.reference import new_policy
from conformance.spec import resources
from conformance.suite.vectors import Vector, load_suite

SUITE = load_suite([resources.suite_dir()])


def expected_outcomes(vector: Vector) -> list[tuple[Any, ...]]:
    """What the file says each call produces, in :func:`outcome`'s terms."""
    expected = []
    for call in vector.calls:
        if call.expected_error is not None:
            expected.append(("error", call.expected_error))
        elif call.op == "evict":
            expected.append(("victims", tuple(call.expected_victims or ())))
        else:
            expected.append(("ok",))
    return expected


@pytest.mark.parametrize("factory", [new_policy, fast_policy], ids=["reference", "fast"])
def test_the_committed_suite_replays_on_the_reference(factory: Any) -> None:
    assert len(SUITE) > 100
    for vector in SUITE:
        answers = replay([call.request for call in vector.calls], factory)
        actual = [outcome(answer) for answer in answers]
        assert actual == expected_outcomes(vector), vector.id

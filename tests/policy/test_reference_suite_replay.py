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
from conformance.suite.vectors import load_suite
from tests.support.runner_support import expected_outcomes

SUITE = load_suite([resources.suite_dir()])


@pytest.mark.parametrize("factory", [new_policy, fast_policy], ids=["reference", "fast"])
def test_the_committed_suite_replays_on_the_reference(factory: Any) -> None:
    assert len(SUITE) > 100
    for vector in SUITE:
        answers = replay([call.request for call in vector.calls], factory)
        actual = [outcome(answer) for answer in answers]
        assert actual == expected_outcomes(vector), vector.id

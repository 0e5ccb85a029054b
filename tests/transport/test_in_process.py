"""The in-process adapter (:class:`conformance.transport.in_process.InProcessAdapter`): a policy's
exception is a crash of its call, and a request reaches the policy as the file writes it.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.judge import verdicts
from conformance.mutants import lookup
from conformance.policy import reference
from conformance.runner.client import Client
from conformance.runner.run import VectorRunner
from conformance.spec.resources import suite_dir
from conformance.suite.vectors import iter_vectors
from conformance.transport.failures import AdapterFailure
from conformance.transport.in_process import InProcessAdapter
from tests.support.runner_support import params

#: Parameters the reference accepts (odd poolKernel, SPEC.md §2.1).
ACCEPTED_PARAMS = params(2, 1, 2, 1)


NEW = {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0}


class PlantedError(Exception):
    """What the policy below raises: a bug a real adapter would die of."""


def policy_raising_at_position_1(params: Any, seed: int = 0) -> Any:
    policy = reference.new_policy(params, seed)
    step = policy.step

    def raising(pos: Any, attn: Any) -> None:
        if pos == 1:
            raise PlantedError("planted")
        step(pos, attn)

    policy.step = raising
    return policy


# -- a policy's exception (SPEC.md §3.1) ----------------------------------------------------------


def test_a_policy_that_raises_in_process_is_a_crash_of_its_call_and_of_later_exchanges():
    """A process whose policy raised would die: the call being answered is a crash (kind
    ``crash``, that call's index, the answers before it, the error as its cause), and every
    later exchange crashes at once, until the adapter is started again."""
    adapter = Client(InProcessAdapter(policy_raising_at_position_1))
    adapter.start()
    ticket = adapter.send(
        [NEW, {"op": "step", "pos": 0, "attn": []}, {"op": "step", "pos": 1, "attn": [0.5]}]
    )
    with pytest.raises(AdapterFailure) as caught:
        adapter.receive(ticket)
    failure = caught.value
    assert (failure.kind, failure.call_index, failure.detail) == (
        "crash",
        2,
        "the in-process adapter raised PlantedError: planted",
    )
    assert [answer["id"] for answer in failure.answers] == [2, 3]
    assert isinstance(failure.__cause__, PlantedError)
    assert not adapter.running
    later = adapter.send([{"op": "evict"}])
    with pytest.raises(AdapterFailure) as caught:
        adapter.receive(later)
    assert (caught.value.kind, caught.value.call_index, caught.value.detail) == (
        "crash",
        0,
        "the in-process adapter had crashed before",
    )
    assert caught.value.answers == []
    adapter.restart()
    assert adapter.exchange([NEW])[0]["ok"] is True


# -- weights reach the policy as the file writes them (SPEC.md §2.3, §4.3) ------------------------


def test_spec_2_3_a_port_reading_decimals_straight_to_float32_is_caught_in_process_too():
    """SPEC.md §2.3 reads a weight as the nearest float64 first, then narrows; SPEC.md §4.3
    has runners send each weight as the file writes it. A port that parses the decimal straight
    to float32 (the catalogued ``single-rounding``) reads that text, so in process it must get
    the request line's text too: rounding/many-digits-sent-as-written then catches it (wrong
    victims), as it does over a pipe, while the reference passes."""
    (vector,) = iter_vectors([suite_dir() / "rounding" / "many-digits-sent-as-written.json"])
    single = lookup("single-rounding")
    caught = VectorRunner(InProcessAdapter(single.factory, single.implementation())).run(vector)
    assert caught.verdict == verdicts.WRONG_VICTIMS
    assert VectorRunner(InProcessAdapter()).run(vector).passed

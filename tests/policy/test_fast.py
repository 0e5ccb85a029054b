"""The fast path's step for decoded lines answers and changes state exactly as the reference."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapter.server import Session
from conformance.policy.fast import fast_policy
from conformance.policy.reference import PolicyError, new_policy
from tests.support.oracles import float_bits, params_dict

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

"""The scores diagnosis tells the truth about a port's numbers, and the Python host never dies of
what a port returns.

The diagnosis compares a port's scores with the reference's bit for bit (``-0.0`` is not
``0.0``), writes infinity and NaN in words, and says "sums" whenever any sum differs, "pooled"
only when every sum is the reference's. The host answers an exception, or an answer JSON cannot
carry, with a refusal that names it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from typing import Any

from conformance.adapter.server import serve
from conformance.explain import diagnosis
from conformance.policy.reference import Scores, SnapKV
from tests.support.runner_support import params, reference_vector

# Four positions, position 0 with no attention at all (its sum is +0.0), the others some; one
# evict of budget 3 and recentWindow 1, kernel 3.
REQUESTS: list[dict[str, Any]] = [
    {"op": "new", "params": params(3, 1, 2, 3), "seed": 0},
    {"op": "step", "pos": 0, "attn": None},
    {"op": "step", "pos": 1, "attn": [0.0]},
    {"op": "step", "pos": 2, "attn": [0.0, 0.5]},
    {"op": "step", "pos": 3, "attn": [0.0, 0.25, 1.0]},
    {"op": "evict"},
]
VECTOR = reference_vector("diagnosis/values", REQUESTS)
EVICT = len(REQUESTS) - 1


def reference() -> Scores:
    scores = diagnosis.reference_scores(VECTOR, EVICT)
    assert scores is not None
    return scores


def diagnose(sums: list[float], pooled: list[float], victims: list[int]) -> diagnosis.Diagnosis:
    ref = reference()
    answers: list[dict[str, Any]] = [{"ok": True} for _ in REQUESTS[:EVICT]]
    answers.append({"ok": True, "positions": ref.positions, "sums": sums, "pooled": pooled})
    answers.append({"ok": True, "victims": victims})
    return diagnosis.diagnose(VECTOR, EVICT, answers)


def test_the_reference_scenario_has_a_zero_sum() -> None:
    ref = reference()
    assert ref.sums[0] == 0.0 and math.copysign(1.0, ref.sums[0]) > 0


def test_negative_zero_is_not_the_reference_s_zero() -> None:
    ref = reference()
    sums = [-0.0, *ref.sums[1:]]
    found = diagnose(sums, list(ref.pooled), [1])
    assert found.kind == "sums"
    assert "the sum of position 0 (kept index 0): adapter -0.0 (-0x0.0p+0)" in found
    assert "Its scores equal the reference's" not in found


def test_any_differing_sum_is_reported_before_a_differing_pooled_score() -> None:
    ref = reference()
    sums = list(ref.sums)
    sums[2] += 1.0  # a sum that differs, at a later position
    pooled = list(ref.pooled)
    pooled[0] += 1.0  # a pooled score that differs, at an earlier one
    found = diagnose(sums, pooled, [1])
    assert found.kind == "sums"
    assert "the sum of position 2 (kept index 2)" in found
    assert "pooled scores differ" not in found


def test_pooled_is_reported_only_when_every_sum_is_the_reference_s() -> None:
    ref = reference()
    pooled = list(ref.pooled)
    pooled[1] = 7.0
    pooled[2] = 7.0
    found = diagnose(list(ref.sums), pooled, [1])
    assert found.kind == "pooled"
    assert found.count("Its sums are the reference's, bit for bit") == 1
    assert "the pooled score of position 1 (kept index 1)" in found
    assert "(2 of 4 pooled scores differ)" in found


def test_infinity_and_nan_are_written_in_words() -> None:
    ref = reference()
    found = diagnose([math.inf, *ref.sums[1:]], list(ref.pooled), [1])
    assert "adapter infinity, reference 0.0 (0x0.0p+0)" in found
    assert diagnosis.exact(-math.inf) == "-infinity" and diagnosis.exact(math.nan) == "NaN"


# -- the Python host ---------------------------------------------------------------------------


def serve_lines(factory: Any, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(requests))
    out = io.BytesIO()
    assert serve(io.BytesIO(lines.encode()), out, factory) == 0
    return [json.loads(line) for line in out.getvalue().decode().splitlines()]


class InfiniteScores(SnapKV):
    """A float16 port's scores: the sum of 70000 overflows to infinity."""

    def scores(self) -> Scores:
        scores = super().scores()
        return Scores(scores.positions, [math.inf] * len(scores.sums), scores.pooled)


class NumpyVictims(SnapKV):
    def evict(self) -> list[int]:
        import numpy as np

        return [np.int64(v) for v in super().evict()]  # type: ignore[misc]


class RaisesOnStep(SnapKV):
    def step(self, pos: Any, attn: Any) -> None:
        if pos == 2:
            raise ValueError("could not broadcast input array from shape (2,) into shape (3,)")
        super().step(pos, attn)


def test_an_answer_json_cannot_carry_is_a_refusal_naming_it_not_a_crash() -> None:
    requests = [*REQUESTS[:3], {"op": "scores"}, {"op": "evict"}, {"op": "bye"}]
    answers = serve_lines(InfiniteScores, requests)
    assert len(answers) == len(requests)  # the host went on after it
    refused = answers[3]
    assert refused["ok"] is False and refused["id"] == 3
    assert refused["error"]["kind"] == "unsupported"
    assert "sums[0] is infinity" in refused["error"]["message"]
    assert answers[-1] == {"id": 5, "ok": True}


def test_numpy_integers_among_the_victims_are_named() -> None:
    requests = [*REQUESTS, {"op": "bye"}]
    answers = serve_lines(NumpyVictims, requests)
    refused = answers[EVICT]
    assert refused["ok"] is False
    assert "victims[0] is a numpy.int64" in refused["error"]["message"]


def test_an_exception_in_the_port_is_a_refusal_naming_it() -> None:
    answers = serve_lines(RaisesOnStep, [*REQUESTS[:4], {"op": "bye"}])
    refused = answers[3]
    assert refused["ok"] is False and refused["error"]["kind"] == "unsupported"
    assert "ValueError: could not broadcast" in refused["error"]["message"]
    assert answers[-1]["ok"] is True


def test_an_expectation_naming_a_position_not_kept_is_no_tie_not_a_crash():
    """``run`` does not validate expectations: a vector whose evict expects a position that
    is not a candidate (here 1000000) gets no tie diagnosis, and no KeyError."""
    requests = [
        {"op": "new", "params": params(2, 0, 1, 1), "seed": 0},
        {"op": "step", "pos": 0, "attn": None},
        {"op": "step", "pos": 1, "attn": [0.5]},
        {"op": "step", "pos": 2, "attn": [0.5, 0.5]},
        {"op": "evict"},
    ]
    vector = reference_vector("diagnosis/impossible-expectation", requests)
    (right,) = [call.expected_victims for call in vector.calls if call.op == "evict"]
    impossible = dataclasses.replace(
        vector,
        calls=(
            *vector.calls[:-1],
            dataclasses.replace(vector.calls[-1], expect={"victims": [10**6]}),
        ),
    )
    assert len(right) == 1
    assert diagnosis.tied_selection(impossible, 4, right) is None

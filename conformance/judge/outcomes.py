"""What each answer decides, as one value: the port's *outcomes* for a vector, compared with the
expected ones and with what a catalogued mistake answers (:mod:`conformance.explain.triage`).

Pure, like all judging: answers in, outcomes out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.spec.protocol import answer_problem
from conformance.suite.vectors import Vector

#: One call's answer as triage compares it: ``("ok",)``, ``("victims", (...))``,
#: ``("error", kind)``, ``("dies",)`` (a crash or a hang) or ``("malformed",)`` (an answer
#: that breaks the protocol's shape, which no catalogued mistake produces).
Outcome = tuple[Any, ...]
OK: Outcome = ("ok",)
DIES: Outcome = ("dies",)
MALFORMED: Outcome = ("malformed",)


def answer_outcome(answer: Mapping[str, Any], op: str) -> Outcome:
    """What one answer decides, for comparison with a mistake's; never raises."""
    if not isinstance(answer, Mapping) or answer_problem(answer, op) is not None:
        return MALFORMED
    if answer["ok"] is not True:
        return ("error", answer["error"]["kind"])
    if op == "evict":
        victims = answer["victims"]
        if not isinstance(victims, list) or not all(type(v) is int for v in victims):
            return MALFORMED
        return ("victims", tuple(victims))
    return OK


def answer_outcomes(
    vector: Vector, answers: Sequence[Mapping[str, Any]], failure_kind: str | None = None
) -> tuple[Outcome, ...]:
    """The port's outcomes for ``vector``: one per answer, then ``dies``/``malformed`` when the
    exchange was cut short by a crash or hang (``failure_kind`` ``crash``/``timeout``) or by a
    protocol failure."""
    outcomes = [
        answer_outcome(answer, call.op) for call, answer in zip(vector.calls, answers, strict=False)
    ]
    return cut_short(outcomes, len(vector.calls), failure_kind)


def cut_short(
    outcomes: Sequence[Outcome], calls: int, failure_kind: str | None = None
) -> tuple[Outcome, ...]:
    """``outcomes`` (one per answer to a vector of ``calls`` calls), then ``dies``/``malformed``
    when the exchange was cut short (see :func:`answer_outcomes`)."""
    if failure_kind is not None and len(outcomes) < calls:
        return (*outcomes, MALFORMED if failure_kind == "protocol" else DIES)
    return tuple(outcomes)


def expected_outcomes(vector: Vector) -> tuple[Outcome, ...]:
    """The outcomes the vector expects: what a port that passes it answered."""
    outcomes: list[Outcome] = []
    for call in vector.calls:
        if call.expected_error is not None:
            outcomes.append(("error", call.expected_error))
        elif call.op == "evict":
            outcomes.append(("victims", tuple(call.expected_victims or ())))
        else:
            outcomes.append(OK)
    return tuple(outcomes)

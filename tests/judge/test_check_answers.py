"""The protocol-check judge (:mod:`conformance.judge.check_answers`): each rule of SPEC.md §3 it
applies to an adapter's answer lines, pinned on its own.

Each test names the SPEC.md rule it pins; the expected values come from SPEC.md and the committed
checks, never from the code under test.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conformance.judge import checker, verdicts
from conformance.judge.check_answers import VICTIMS_ASCENDING, judge_check
from conformance.spec.resources import suite_dir
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.suite.stream import load_checks
from conformance.suite.validation import reference_answers
from conformance.suite.vectors import load_suite

_CHECKS = {check.id: check for check in load_checks([suite_dir()])}


def check(name: str) -> ProtocolCheck:
    return _CHECKS[f"protocol/{name}"]


def lines(*answers: Any) -> list[bytes]:
    return [a if isinstance(a, bytes) else json.dumps(a).encode() for a in answers]


HELLO = {"id": 1, "ok": True, "protocol": 1, "implementation": {}, "capabilities": []}


def refused(request_id: Any, kind: Any) -> dict[str, Any]:
    return {"id": request_id, "ok": False, "error": {"kind": kind, "message": "no"}}


# -- the protocol-check judge (SPEC.md §3) -------------------------------------------------------


@pytest.mark.parametrize("protocol", [1.0, True, 2, "1", None])
def test_spec_3_2_hello_protocol_must_be_the_integer_1_in_a_check(protocol):
    """SPEC.md §3.2: hello answers ``"protocol": 1``, the JSON integer; ``1.0`` and ``true``
    equal 1 in Python and are still not it (SPEC.md §1)."""
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    hello = json.loads(answers[0])
    assert hello["protocol"] == 1  # the reference's own answer passes
    assert judge_check(item, answers).passed
    verdict = judge_check(
        item, [json.dumps({**hello, "protocol": protocol}).encode(), *answers[1:]]
    )
    assert (verdict.verdict, verdict.call_index, verdict.op) == (
        verdicts.PROTOCOL_ERROR,
        0,
        "hello",
    )
    assert f"hello answered protocol {json.dumps(protocol)}, not 1" in verdict.message


def test_spec_3_3_an_answer_without_an_id_is_a_protocol_error_in_a_check():
    """SPEC.md §3.3: every answer carries the request's id; one without any fails, saying so,
    and the judge does not trip over the missing member."""
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    no_id = {k: v for k, v in json.loads(answers[1]).items() if k != "id"}
    verdict = judge_check(item, [answers[0], json.dumps(no_id).encode(), *answers[2:]])
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 1)
    assert "answered with id no id, expected 2" in verdict.message
    assert (verdict.expected, verdict.actual) == ({"id": 2}, {"id": None})


def test_spec_3_3_an_id_echoed_as_a_float_names_the_echo_rule_and_both_ids():
    """SPEC.md §3.3: an integer id is echoed as the same integer: ``2.0`` fails, and the result
    holds the id wanted and the id given."""
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, [answers[0], b'{"id":2.0,"ok":true}', *answers[2:]])
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 1)
    assert "an integer id is echoed as the same integer" in verdict.message
    assert (verdict.expected, verdict.actual) == ({"id": 2}, {"id": 2.0})


def test_spec_3_3_a_request_without_an_integer_id_gets_id_null():
    """SPEC.md §3.3: a request whose id is not an integer is answered with ``"id": null``; an
    answer echoing anything else fails and says which rule."""
    item = check("id-not-an-integer")
    answers = reference_answers(item.payload)
    assert judge_check(item, answers).passed
    index, expected = next(
        (i, e) for i, e in enumerate(item.expect) if e["id"] is None and i < len(answers)
    )
    wrong = {**json.loads(answers[index]), "id": 0}
    verdict = judge_check(
        item, [*answers[:index], json.dumps(wrong).encode(), *answers[index + 1 :]]
    )
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, expected["line"])
    assert 'a request without an integer id gets "id": null' in verdict.message
    assert (verdict.expected, verdict.actual) == ({"id": None}, {"id": 0})


def test_spec_3_3_an_id_beyond_float64_is_judged_not_crashed_on():
    """SPEC.md §3.1: ``1e999`` reads as infinity in most JSON readers; an answer echoing it as
    its id is a protocol error the judge reports, never an exception in the judge."""
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, [answers[0], b'{"id":1e999,"ok":true}', *answers[2:]])
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 1)
    assert "answered with id Infinity, expected 2" in verdict.message


def test_spec_3_3_the_evidence_of_a_refusal_and_of_a_success_in_a_check():
    """SPEC.md §3.3: a check's failing verdict carries what was expected and what came, as JSON
    values: ``"ok"`` for a success, ``{"error": kind}`` for a refusal."""
    item = check("hello-protocol-true")  # line 0: hello with protocol true, must be refused
    assert item.expect[0]["ok"] is False
    kind = item.expect[0]["error"]
    success = judge_check(item, lines(HELLO, HELLO))
    assert (success.verdict, success.expected, success.actual) == (
        verdicts.UNEXPECTED_SUCCESS,
        {"error": kind},
        "ok",
    )
    other = "unsupported" if kind != "unsupported" else "bad-request"
    wrong = judge_check(item, lines(refused(1, other), HELLO))
    assert (wrong.verdict, wrong.expected, wrong.actual) == (
        verdicts.WRONG_ERROR_KIND,
        {"error": kind},
        {"error": other},
    )
    item = check("crlf")  # every request succeeds
    refusal = judge_check(item, lines(refused(1, "bad-request")))
    assert (refusal.verdict, refusal.expected, refusal.actual) == (
        verdicts.UNEXPECTED_REFUSAL,
        "ok",
        {"error": "bad-request"},
    )
    assert "refused with bad-request, expected it to succeed" in refusal.message


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("bad-request", 'no error kind ("bad-request")'),
        ({"kind": 5, "message": ""}, 'no error kind ({"kind": 5, "message": ""})'),
        (None, "no error kind (null)"),
    ],
)
def test_spec_3_3_a_refusal_without_an_error_kind_is_judged_and_named(error, kind):
    """SPEC.md §3.3: a refusal carries ``error.kind``, a string; a refusal whose error is not an
    object, or whose kind is not a string, is judged (an unexpected refusal here), never an
    exception, and the result says what the kind was."""
    item = check("crlf")
    verdict = judge_check(item, lines({"id": 1, "ok": False, "error": error}))
    assert (verdict.verdict, verdict.actual) == (verdicts.UNEXPECTED_REFUSAL, {"error": kind})


def test_spec_3_3_wrong_victims_in_a_check_carry_both_lists():
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    expected = item.expect[2]["victims"]
    verdict = judge_check(item, [*answers[:2], b'{"id":3,"ok":true,"victims":[0]}'])
    assert (verdict.verdict, verdict.expected, verdict.actual) == (
        verdicts.WRONG_VICTIMS,
        expected,
        [0],
    )
    assert f"evicted [0], expected {json.dumps(expected)}" in verdict.message


def test_spec_3_3_victims_missing_is_named_missing():
    item = check("victims-empty-list")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, [*answers[:2], b'{"id":3,"ok":true}'])
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert "victims is missing, not a list" in verdict.message
    verdict = judge_check(item, [*answers[:2], b'{"id":3,"ok":true,"victims":"3"}'])
    assert 'victims is "3", not a list' in verdict.message


def test_spec_3_2_an_adapter_that_does_not_exit_at_end_of_input_times_out():
    """SPEC.md §3.2: end of input ends the session. Every answer right but the process still
    running when the runner gave up is a timeout, not a pass."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, answers, timed_out=True)
    assert verdict.verdict == verdicts.TIMEOUT
    assert verdict.message == "the adapter did not exit at the end of its input"
    crashed = judge_check(item, answers, exit_status=1)
    assert crashed.verdict == verdicts.CRASH
    assert "end of input ends the session with status 0, not 1" in crashed.message


def test_spec_3_1_a_missing_answer_says_why():
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    stopped = judge_check(item, answers[:2])
    assert (stopped.verdict, stopped.call_index) == (
        verdicts.PROTOCOL_ERROR,
        item.expect[2]["line"],
    )
    assert stopped.message.endswith("no answer (the adapter stopped answering)")
    hung = judge_check(item, answers[:2], timed_out=True)
    assert hung.verdict == verdicts.TIMEOUT and hung.message.endswith(
        "no answer before the timeout"
    )


def test_spec_3_1_extra_answers_are_counted_in_the_result():
    """SPEC.md §3.1: one answer per request line; the result of a check answered too often
    holds how many answers were due and how many came."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, [*answers, b'{"id":null,"ok":true}'])
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert (verdict.expected, verdict.actual) == (len(item.expect), len(item.expect) + 1)


def test_spec_3_1_an_answered_blank_line_is_named_as_the_likely_mistake():
    """SPEC.md §3.1: a blank line gets no answer. An adapter that answers one shifts every later
    answer; the id fault that follows names that likely cause, and only then."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    shifted = [answers[0], json.dumps(refused(None, "bad-request")).encode(), *answers[1:]]
    verdict = judge_check(item, shifted)
    assert (verdict.verdict, verdict.call_index) == (
        verdicts.PROTOCOL_ERROR,
        item.expect[1]["line"],
    )
    assert "answered with id null, expected 2" in verdict.message
    assert verdict.message.endswith(" (the answers are out of step: was a blank line answered?)")
    # no blank line before the faulty answer: no such hint
    first = judge_check(item, [b'{"id":7,"ok":true,"protocol":1}', *answers[1:]])
    assert first.verdict == verdicts.PROTOCOL_ERROR and "out of step" not in first.message
    # a blank line skipped, but a fault that is not about the id: no hint either
    wrong = judge_check(item, [answers[0], json.dumps(refused(2, "bad-request")).encode()])
    assert wrong.verdict == verdicts.UNEXPECTED_REFUSAL and "out of step" not in wrong.message


def test_spec_3_1_a_fault_on_a_line_that_is_not_a_request_is_placed_on_that_line():
    """SPEC.md §3.1: a line that is not a JSON object is answered with ``"id": null``; when the
    answer to it is wrong, the result names the line, its op being unknown."""
    item = check("not-an-object")
    answers = reference_answers(item.payload)
    index, expected = next((i, e) for i, e in enumerate(item.expect) if e["line"] > 0)
    verdict = judge_check(item, [*answers[:index], b'{"id":null,"ok":true}'])
    assert verdict.call_index == expected["line"]
    assert verdict.op == "line"


CHECKS = {check.id: check for check in load_checks([suite_dir()])}


def _with_victims(answers: list[bytes], index: int, victims: list[int]) -> list[bytes]:
    answer = json.loads(answers[index])
    answer["victims"] = victims
    return [*answers[:index], json.dumps(answer).encode(), *answers[index + 1 :]]


def test_victims_in_rank_order_in_a_check_break_the_victims_rule_not_the_checks() -> None:
    """protocol/scores-kept-positions pins the scores answer's shape; an evict in it answered
    [2, 0] (the reference's [0, 2] in rank order) breaks the victims' own rule, which the
    verdict quotes, and is a broken invariant as in a vector."""
    check = CHECKS["protocol/scores-kept-positions"]
    answers = reference_answers(check.payload)
    evict = next(i for i, item in enumerate(check.expect) if "victims" in item)
    assert check.expect[evict]["victims"] == [0, 2]
    verdict = judge_check(check, _with_victims(answers, evict, [2, 0]))
    assert verdict.verdict == verdicts.BROKEN_INVARIANT
    assert verdict.rule == verdicts.NOT_ASCENDING
    assert verdict.message.startswith(VICTIMS_ASCENDING)
    assert check.rule not in verdict.message
    assert "put 0 after 2" in verdict.message
    # A list in the right order but of the wrong positions is still wrong victims, under the
    # check's rule.
    wrong = judge_check(check, _with_victims(answers, evict, [0, 1]))
    assert wrong.verdict == verdicts.WRONG_VICTIMS and wrong.message.startswith(check.rule)


def test_the_same_list_out_of_order_is_a_broken_invariant_in_a_vector_too() -> None:
    vector = next(
        v
        for v in load_suite([suite_dir()])
        if any(call.expected_victims and len(call.expected_victims) > 1 for call in v.calls)
        and not any(call.expected_error for call in v.calls)
        and len(v.calls) < 40
    )
    answers = []
    for index, call in enumerate(vector.calls):
        answer = {"id": index, "ok": True}
        if call.op == "evict":
            victims = list(call.expected_victims or [])
            answer["victims"] = victims[::-1] if len(victims) > 1 else victims
        answers.append(answer)
    verdict = checker.judge(vector, answers)
    assert verdict.verdict == verdicts.BROKEN_INVARIANT
    assert verdict.rule == verdicts.NOT_ASCENDING


# -- what a failing check's result carries (the fields a report and the triage read) ------------


def test_a_check_that_stops_short_names_the_check_the_line_and_the_op() -> None:
    """No answer where one is due: the result is the check's, about the line and op whose
    answer is missing; a crash before it keeps the exit status."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    line = item.expect[2]["line"]
    due = (item.id, line, "evict")
    for judged in (
        judge_check(item, answers[:2], timed_out=True),
        judge_check(item, answers[:2], exit_status=3),
        judge_check(item, answers[:2]),
    ):
        assert (judged.vector_id, judged.call_index, judged.op) == due, judged
    crashed = judge_check(item, answers[:2], exit_status=3)
    assert (crashed.verdict, crashed.exit_status) == (verdicts.CRASH, 3)
    assert crashed.message.endswith("the adapter exited with status 3 before answering")


def test_the_end_of_a_check_s_session_is_judged_as_the_check_s() -> None:
    """Every answer right, then too many answers, no exit, or a non-zero status: each result
    is the check's; a crash keeps the status; only a broken victims list carries a rule."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    extra = judge_check(item, [*answers, b'{"id":null,"ok":true}'])
    hung = judge_check(item, answers, timed_out=True)
    crashed = judge_check(item, answers, exit_status=4)
    assert [r.vector_id for r in (extra, hung, crashed)] == [item.id] * 3
    assert crashed.exit_status == 4
    wrong = judge_check(item, [answers[0], json.dumps(refused(2, "bad-request")).encode()])
    assert (wrong.vector_id, wrong.op, wrong.rule) == (item.id, "new", None)


def test_an_ok_that_is_no_boolean_is_shown_as_sent() -> None:
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    verdict = judge_check(item, [answers[0], b'{"id":2,"ok":"yes"}'])
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert verdict.message.endswith('the answer\'s ok is "yes", not true or false')


def test_a_repeated_victim_is_named_as_a_repeat() -> None:
    check_ = CHECKS["protocol/scores-kept-positions"]
    answers = reference_answers(check_.payload)
    evict = next(i for i, item in enumerate(check_.expect) if "victims" in item)
    verdict = judge_check(check_, _with_victims(answers, evict, [0, 0]))
    assert (verdict.verdict, verdict.rule) == (verdicts.BROKEN_INVARIANT, verdicts.NOT_ASCENDING)
    assert verdict.message.endswith(
        "victims must be strictly ascending, but they repeat position 0"
    )


def test_a_hello_answer_that_breaks_the_handshake_is_named_by_its_rule() -> None:
    """protocol 1 but no implementation object: the handshake's own words."""
    item = check("blank-lines")
    answers = reference_answers(item.payload)
    hello = b'{"id":1,"ok":true,"protocol":1,"capabilities":[]}'
    verdict = judge_check(item, [hello, *answers[1:]])
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert verdict.message.endswith("the answer to hello has no implementation object")


def _scores_answer(answers: list[bytes], index: int, **lists: list[float]) -> list[bytes]:
    answer = json.loads(answers[index])
    answer.update(lists)
    return [*answers[:index], json.dumps(answer).encode(), *answers[index + 1 :]]


#: protocol/scores-kept-positions: its second scores answer (positions 0 to 4) and what is due.
SCORES = CHECKS["protocol/scores-kept-positions"]
SCORED = next(i for i, item in enumerate(SCORES.expect) if item.get("positions") == [0, 1, 2, 3, 4])
DUE = {name: SCORES.expect[SCORED][name] for name in ("positions", "sums", "pooled")}


@pytest.mark.parametrize(
    ("lists", "message"),
    [
        (
            {"sums": [1.0, 0.5, 0.375, 0.25, 0.0]},
            "scores sums[1] (position 1) is 0.5, expected 0.375",
        ),
        (
            {"sums": [1.0, 1.0, 0.375, 0.25, 0.0]},
            "scores sums[1] (position 1) is 1.0, expected 0.375 (the pooled value: are sums "
            "and pooled swapped?)",
        ),
        (
            {"pooled": [1.0, 1.0, 0.375, 0.25, 0.25]},
            "scores pooled[3] (position 3) is 0.25, expected 0.375 (the sums value: are sums "
            "and pooled swapped?)",
        ),
    ],
    ids=["wrong-sum", "sum-swapped", "pooled-swapped"],
)
def test_a_wrong_score_value_names_the_list_the_index_the_position_and_both_values(
    lists: dict[str, list[float]], message: str
) -> None:
    """SPEC.md §2.5: the first sum or pooled score that is not the reference's float64, and,
    when it is the other list's value there, the likely swap; the result shows the answer's
    three lists against the three due."""
    answers = reference_answers(SCORES.payload)
    assert json.loads(answers[SCORED])["sums"] == DUE["sums"]  # the reference's own
    verdict = judge_check(SCORES, _scores_answer(answers, SCORED, **lists))
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert verdict.message.endswith(
        message + "; SPEC.md §2.5: the float64 values an evict now would rank by"
    )
    assert verdict.expected == DUE
    shown = {**DUE, **lists}
    assert verdict.actual == shown


def test_a_scores_expectation_without_sums_still_judges_the_pooled_scores() -> None:
    """A check may pin the pooled scores alone: the sums are then not compared, and a wrong
    pooled score is still found."""
    expect = [dict(item) for item in SCORES.expect]
    del expect[SCORED]["sums"]
    pooled_only = dataclasses.replace(SCORES, expect=tuple(expect))
    answers = reference_answers(SCORES.payload)
    wrong_sums = _scores_answer(answers, SCORED, sums=[9.0, 9.0, 9.0, 9.0, 9.0])
    assert judge_check(pooled_only, wrong_sums).passed
    wrong = _scores_answer(answers, SCORED, pooled=[1.0, 1.0, 0.5, 0.375, 0.25])
    verdict = judge_check(pooled_only, wrong)
    assert "scores pooled[2] (position 2) is 0.5, expected 0.375" in verdict.message
    assert verdict.expected == {"positions": DUE["positions"], "pooled": DUE["pooled"]}

"""Tests that pin what mutation testing found unpinned (benchmarks/mutation_score.py).

Each test kills mutants of the kit's core that every other test let survive: a rule of the
judge, the protocol-check judge or the codec that a refactor could lose silently. Each names
the SPEC.md rule it pins; the expected values come from SPEC.md and the committed checks and
vectors, never from the code under test.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.adapter.replay import replay
from conformance.adapter.server import Session
from conformance.cli.commands._options import add_timeout
from conformance.judge import checker, verdicts
from conformance.judge.answers import held
from conformance.judge.check_answers import judge_check
from conformance.judge.outcomes import (
    DIES,
    MALFORMED,
    answer_outcome,
    answer_outcomes,
    expected_outcomes,
)
from conformance.mutants import lookup
from conformance.policy import reference
from conformance.policy.fast import fast_policy
from conformance.runner.client import Client, Handshake
from conformance.runner.results import VectorResult
from conformance.runner.run import VectorRunner
from conformance.spec import protocol
from conformance.spec.errors import GenerationError, VectorError
from conformance.spec.resources import suite_dir
from conformance.spec.text import KEEP_ITEMS, KEEP_TEXT, json_text
from conformance.suite import validation
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.suite.stream import load_checks
from conformance.suite.tags import load_vocabulary
from conformance.suite.validation import (
    CheckDraft,
    FloatLiteral,
    check_document,
    check_file,
    check_problems,
    parse_json,
    realize,
    reference_answers,
    replay_problems,
    rule_problems,
    validate_paths,
    weight_problem,
)
from conformance.suite.vectors import Vector, iter_vectors, parse_document
from conformance.transport import framing
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from conformance.transport.session import ANSWER_TIMEOUT, HAND_OVER, AdapterProcess
from tests.support.runner_support import REFERENCE_ARGV, broken, params, reference_vector

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


# -- the vector judge (SPEC.md §2-§4) ------------------------------------------------------------


#: budget 2, recentWindow 1: three steps, then an evict that must drop one of positions 0 and 1
#: (position 2 is the protected newest entry, SPEC.md §2.4).
_REQUESTS = [
    {"op": "new", "params": params(2, 1, 2, 1), "seed": 0},
    {"op": "step", "pos": 0, "attn": []},
    {"op": "step", "pos": 1, "attn": [0.5]},
    {"op": "step", "pos": 2, "attn": [0.25, 0.75]},
    {"op": "evict"},
    {"op": "evict"},
]


@pytest.fixture(scope="module")
def small() -> Vector:
    return reference_vector("kills/small", _REQUESTS)


def reference_of(vector: Vector) -> list[dict[str, Any]]:
    session = Session()
    return [session.handle({**call.request, "id": i}) for i, call in enumerate(vector.calls)]


def test_the_small_vector_is_what_spec_2_says(small):
    """The fixture's expectations, read from SPEC.md §2.4 rather than trusted: one victim among
    the unprotected positions 0 and 1, then nothing left to evict."""
    victims = small.calls[4].expected_victims
    assert len(victims) == 1 and victims[0] in (0, 1)
    assert small.calls[5].expected_victims == []
    assert checker.judge(small, reference_of(small)).passed


@pytest.mark.parametrize(
    "answer", [{"ok": False, "error": {"kind": "invalid-position", "message": "x"}}, {"ok": 1}, {}]
)
def test_spec_3_3_a_step_that_must_succeed_is_judged_when_refused_or_malformed(small, answer):
    """SPEC.md §3.3/§3.4: a step the reference accepts must be answered ``"ok": true``; a
    refusal is an unexpected refusal and an answer without a boolean ok a protocol error, even
    for the plain steps the judge reads fastest."""
    answers = reference_of(small)
    answers[2] = {"id": 2, **answer}
    verdict = checker.judge(small, answers)
    assert verdict.call_index == 2 and verdict.op == "step"
    if answer.get("ok") is False:
        assert verdict.verdict == verdicts.UNEXPECTED_REFUSAL
        assert verdict.expected == {"ok": True}
        assert verdict.actual == {"error": "invalid-position", "message": "x"}
        assert verdict.message.endswith("(x), but the call must succeed")
    else:
        assert verdict.verdict == verdicts.PROTOCOL_ERROR
        assert verdict.actual == answer  # the answer as given, its id left out


def test_spec_3_3_an_evict_refused_names_the_victims_it_had_to_give(small):
    answers = reference_of(small)
    answers[4] = {"id": 4, "ok": False, "error": {"kind": "no-policy", "message": "x"}}
    verdict = checker.judge(small, answers)
    want = small.calls[4].expected_victims
    assert (verdict.verdict, verdict.call_index) == (verdicts.UNEXPECTED_REFUSAL, 4)
    assert verdict.expected == {"victims": want}
    assert verdict.message.endswith(f" (expected victims [{want[0]}])")


def test_spec_3_3_a_wrong_error_kind_carries_both_kinds():
    vector = reference_vector(
        "kills/refused", [{"op": "new", "params": params(0, 0, 1, 1), "seed": 0}]
    )
    kind = vector.calls[0].expected_error
    assert kind == "invalid-params"  # SPEC.md §2.1: budget 0 is out of range
    answers = [{"id": 0, "ok": False, "error": {"kind": "bad-request", "message": "no"}}]
    verdict = checker.judge(vector, answers)
    assert verdict.verdict == verdicts.WRONG_ERROR_KIND
    assert (verdict.expected, verdict.actual) == (
        {"error": "invalid-params"},
        {"error": "bad-request", "message": "no"},
    )
    assert verdict.message == "refused with bad-request (no), expected invalid-params"
    success = checker.judge(vector, [{"id": 0, "ok": True, "extra": 1}])
    assert success.verdict == verdicts.UNEXPECTED_SUCCESS
    assert success.actual == {"ok": True, "extra": 1}
    assert success.expected == {"error": "invalid-params"}


def test_spec_3_too_few_or_too_many_answers_name_the_call(small):
    """One answer per call: a run cut short without a failure names the first unanswered call,
    and one answered too often names the last call."""
    answers = reference_of(small)
    n = len(small.calls)
    for given, index in ((n - 1, n - 1), (n - 3, n - 3), (n + 1, n - 1)):
        got = answers[:given] if given <= n else [*answers, {"id": n, "ok": True}]
        verdict = checker.judge(small, got)
        assert (verdict.vector_id, verdict.verdict) == ("kills/small", verdicts.PROTOCOL_ERROR)
        assert (verdict.call_index, verdict.op) == (index, small.calls[index].op)
        assert verdict.message == f"{given} answers to {n} calls"


def test_a_failure_names_its_call_even_at_either_end(small):
    """The call a crash is about: the first (index 0, ``new``) has its op; a failure after the
    last call (the adapter died at end of input) has none, and the judge does not fail on it."""
    first = checker.judge(small, [], failure=AdapterFailure("crash", 0, "exited"))
    assert (first.vector_id, first.verdict, first.call_index, first.op) == (
        "kills/small",
        verdicts.CRASH,
        0,
        "new",
    )
    n = len(small.calls)
    after = checker.judge(
        small, reference_of(small), failure=AdapterFailure("crash", n, "exited", exit_status=3)
    )
    assert (after.verdict, after.call_index, after.op, after.exit_status) == (
        verdicts.CRASH,
        n,
        None,
        3,
    )


def test_a_failing_verdict_carries_the_answers_outcomes_and_a_pass_none(small):
    """Triage compares what each answer decided; judging hands it over with every failure
    (and ``dies`` for the call a crash cut off), never with a pass."""
    answers = reference_of(small)
    passed = checker.judge(small, answers)
    assert (passed.vector_id, passed.verdict, passed.answers) == ("kills/small", verdicts.PASS, ())
    cut = checker.judge(small, answers[:3], failure=AdapterFailure("crash", 3, "exited"))
    assert cut.answers == (("ok",), ("ok",), ("ok",), DIES)
    wrong = [*answers[:4], {"id": 4, "ok": True, "victims": [1 - answers[4]["victims"][0]]}]
    verdict = checker.judge(small, [*wrong, answers[5]])
    assert verdict.verdict == verdicts.WRONG_VICTIMS
    assert verdict.answers[4] == ("victims", (1 - answers[4]["victims"][0],))


def test_spec_2_4_descending_victims_say_which_came_after_which(small):
    vector = reference_vector(
        "kills/two",
        [*_REQUESTS[:4], {"op": "step", "pos": 3, "attn": [0.5, 0.25, 0.25]}, {"op": "evict"}],
    )
    answers = reference_of(vector)
    answers[5] = {"id": 5, "ok": True, "victims": [1, 0]}
    verdict = checker.judge(vector, answers)
    assert verdict.rule == verdicts.NOT_ASCENDING
    assert verdict.message == "victims must be strictly ascending, but they put 0 after 1"
    answers[5] = {"id": 5, "ok": True, "victims": [1, 1]}
    assert checker.judge(vector, answers).message.endswith("but they repeat position 1")


def test_spec_2_4_victims_that_are_not_a_list_say_what_came(small):
    answers = reference_of(small)
    answers[4] = {"id": 4, "ok": True, "victims": "3"}
    verdict = checker.judge(small, answers)
    assert verdict.rule == verdicts.NOT_INTEGERS
    assert verdict.message == 'victims must be a list of integers, got "3"'


def test_what_a_result_keeps_of_a_long_list_or_object():
    """A result keeps at most KEEP_ITEMS members of an adapter's list or object, saying how
    many it left out; exactly KEEP_ITEMS are kept whole."""
    whole = {str(i): i for i in range(KEEP_ITEMS)}
    assert verdicts.kept(whole) == whole
    cut = verdicts.kept({str(i): i for i in range(KEEP_ITEMS + 2)})
    assert len(cut) == KEEP_ITEMS + 1 and cut["..."] == "(2 more members)"


def test_show_positions_elides_the_middle_of_a_long_list():
    assert checker.show_positions(list(range(16))) == "[" + ", ".join(map(str, range(16))) + "]"
    shown = checker.show_positions(list(range(20)))
    assert shown == "[0, 1, 2, 3, 4, 5, 6, 7, ... 4 more ..., 12, 13, 14, 15, 16, 17, 18, 19]"


# -- the result model (the report's ``results``, schema/report.schema.json) ----------------------


def test_a_result_made_from_a_verdict_keeps_the_runners_record():
    verdict = verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 1, "evict", "m")
    plain = VectorResult(verdict)
    assert (plain.stderr_tail, plain.duration, plain.known_failure, plain.divergence) == (
        "",
        0.0,
        False,
        None,
    )
    assert plain.fails_run
    full = VectorResult(
        verdict,
        stderr_tail="err",
        diagnosis="why",
        divergence="sums",
        duration=2.5,
        known_failure=True,
    )
    assert (full.stderr_tail, full.diagnosis, full.divergence, full.duration) == (
        "err",
        "why",
        "sums",
        2.5,
    )
    assert not full.fails_run


def test_a_results_line_says_what_failed_where():
    failed = VectorResult(verdicts.Verdict("v", verdicts.CRASH, message="died"))
    assert failed.describe() == "v: crash: died"
    known = VectorResult(
        verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 2, "evict", "m"), known_failure=True
    )
    assert known.describe() == "v: call 2 (evict): wrong-victims: m"
    stale = VectorResult(verdicts.Verdict("v", verdicts.PASS), known_failure=True)
    assert stale.describe() == (
        "v: pass (listed as a known failure, but it passes: remove it from the list)"
    )
    assert VectorResult(verdicts.Verdict("v", verdicts.PASS)).describe() == "v: pass"


def test_a_result_as_json_is_what_the_report_schema_says():
    """schema/report.schema.json's ``result`` is closed and lists every member; a result's JSON
    validates against it, with the duration rounded to the microsecond."""
    import jsonschema

    schema = json.loads((suite_dir().parent / "schema" / "report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(
        {"$defs": schema["$defs"], "$ref": "#/$defs/result"}
    )
    result = VectorResult(
        verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 1, "evict", "m", [1], [2]),
        stderr_tail="e",
        duration=1.23456789,
    )
    data = result.to_json()
    assert list(validator.iter_errors(data)) == []
    assert data["duration"] == 1.234568
    assert (data["id"], data["verdict"], data["expected"], data["actual"]) == (
        "v",
        "wrong-victims",
        [1],
        [2],
    )


# -- what each answer decides (judge/outcomes.py, what triage compares) --------------------------


def test_a_refusal_decides_the_outcome_a_refusal_is_expected_to():
    """A refused call's outcome is the one the vector expects of a call that must be refused
    with that kind: triage compares the two, so their spelling is one."""
    vector = reference_vector(
        "kills/refused", [{"op": "new", "params": params(0, 0, 1, 1), "seed": 0}]
    )
    refusal = {"id": 0, "ok": False, "error": {"kind": "invalid-params", "message": "x"}}
    assert answer_outcomes(vector, [refusal]) == expected_outcomes(vector)
    assert answer_outcome(refusal, "new") == ("error", "invalid-params")


def test_a_cut_exchange_ends_in_dies_or_malformed_and_only_then(small):
    """``dies`` (a crash or a hang) or ``malformed`` (a protocol failure) stands for the call the
    failure cut off; answers cut short without a failure, or a failure after the last answer,
    add nothing."""
    answers = reference_of(small)
    assert len(answer_outcomes(small, answers[:3])) == 3
    assert answer_outcomes(small, answers[:3], "protocol")[-1] == MALFORMED
    assert answer_outcomes(small, answers[:3], "timeout")[-1] == DIES
    assert answer_outcomes(small, answers, "crash") == expected_outcomes(small)


# -- the codec and the protocol's shape rules (spec/protocol.py, SPEC.md §1, §3) ------------------


def test_spec_1_a_vector_file_can_keep_its_integers_as_written():
    assert protocol.decode_strict_file('{"a": 12}', parse_int=str) == {"a": "12"}


def test_nesting_depth_of_a_scalar_is_zero_and_of_containers_their_depth():
    assert [protocol.nesting_depth(v) for v in (5, "ab", None)] == [0, 0, 0]
    assert protocol.nesting_depth([[], {"a": [1]}]) == 3


def test_spec_2_3_a_weight_written_as_text_reaches_a_policy_as_a_reader_makes_it():
    """SPEC.md §2.3: a request reaches a policy as a JSON reader decodes it; a number kept as
    its text (``NumberText``) inside an object, such as ``params``, becomes a plain float or
    int, and other members stay as they are."""
    decoded = protocol.decoded({"params": {"a": protocol.NumberText("1.50"), "b": 2, "c": "x"}})
    params = decoded["params"]
    assert params == {"a": 1.5, "b": 2, "c": "x"}
    assert [type(params[k]) for k in "abc"] == [float, int, str]


def test_spec_3_1_messages_are_written_in_ascii_unless_asked_otherwise():
    assert protocol.dumps({"a": "é"}) == '{"a":"\\u00e9"}'
    assert protocol.dumps({"a": "é"}, ensure_ascii=False) == '{"a":"é"}'


def test_spec_2_3_a_number_kept_as_text_is_written_as_that_text_however_deep():
    """A :class:`NumberText` is encoded as its text (``0.10``, not ``0.1``), also inside a list
    inside a list."""
    text = protocol.NumberText("0.10")
    assert protocol.dumps([[text], [1]]) == "[[0.10],[1]]"
    assert protocol.dumps({"a": [text]}) == '{"a":[0.10]}'


def test_spec_3_5_an_op_not_implemented_is_unsupported_with_a_message():
    """SPEC.md §3.5: an optional op the adapter does not announce is refused ``unsupported``,
    with the request's id and a message (a string: SPEC.md §3.3)."""
    with pytest.raises(protocol.BadRequest) as caught:
        protocol.parse_request({"id": 4, "op": "scores"}, implemented=protocol.CORE_OPS)
    error = caught.value
    assert (error.id, error.kind) == (4, "unsupported")
    assert isinstance(error.message, str) and "scores" in error.message


def test_spec_3_3_an_evict_answer_needs_victims_and_a_scores_answer_its_lists():
    assert protocol.answer_problem({"id": 1, "ok": True}, "evict") == (
        "the evict answer has no victims"
    )
    assert protocol.answer_problem({"id": 1, "ok": True}, "step") is None
    unequal = {"id": 1, "ok": True, "positions": [1, 2], "sums": [1.0], "pooled": [1.0, 2.0]}
    assert protocol.answer_problem(unequal, "scores") == "scores has 2 positions but 1 sums"


@pytest.mark.parametrize(
    ("value", "is_number"),
    [(1.5, True), (3, True), (10**400, False), (True, False), ("1", False), (None, False)],
)
def test_spec_2_6_scores_are_float64_numbers(value, is_number):
    """SPEC.md §2.6: a score is a JSON number with a float64 value: an integer literal counts,
    one beyond float64's range does not, nor does ``true``."""
    assert protocol.is_float64(value) is is_number


def test_validate_message_checks_a_request_against_the_request_schema_whatever_its_op():
    hello = {"id": 1, "op": "hello", "protocol": 1}
    assert protocol.validate_message("request", hello, op="hello") == []
    assert protocol.validate_message("response", {"id": 1, "ok": True}, op="evict") != []


# -- the runner's handshake (parse_hello_answer, SPEC.md §3.2) -----------------------------------

_IMPLEMENTATION = {"name": "n", "language": "l", "version": "1"}


def test_spec_3_2_a_hello_answer_is_read_with_its_id_and_optional_capabilities():
    hello = protocol.parse_hello_answer(
        {"id": 7, "ok": True, "protocol": 1, "implementation": _IMPLEMENTATION}
    )
    assert (hello.id, hello.protocol, hello.capabilities) == (7, 1, ())
    assert dict(hello.implementation) == _IMPLEMENTATION


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([1], "the answer to hello is not a JSON object: [1]"),
        ({"id": 1, "ok": 1}, "the answer to hello has no boolean ok (is the program an adapter?)"),
        (
            {"id": 1, "ok": False, "error": {"kind": "unsupported", "message": "v2 only"}},
            "the adapter refused hello for protocol 1 (unsupported: v2 only); "
            "it speaks another protocol version",
        ),
        (
            {"id": 1, "ok": False, "error": "v2"},
            "the adapter refused hello for protocol 1 (",  # an error that is not an object
        ),
        ({"id": 1, "ok": True, "protocol": 1}, "the answer to hello has no implementation object"),
        (
            {
                "id": 1,
                "ok": True,
                "protocol": 1,
                "implementation": {**_IMPLEMENTATION, "version": 5},
            },
            "the answer to hello has no string implementation.version: 5",
        ),
        (
            {
                "id": 1,
                "ok": True,
                "protocol": 1,
                "implementation": _IMPLEMENTATION,
                "capabilities": "scores",
            },
            'capabilities in the answer to hello must be a list of strings, got "scores"',
        ),
    ],
)
def test_spec_3_2_a_bad_hello_answer_is_refused_saying_why(answer, message):
    with pytest.raises(ValueError) as caught:
        protocol.parse_hello_answer(answer)
    assert str(caught.value).startswith(message)


def test_spec_1_a_reader_hook_is_used_alone_and_the_strict_rules_still_hold():
    """The codec's hooks (a float or integer kept as text, for validation) change nothing
    else: NaN is still not JSON, and a repeated member name still lets the last one count on
    the wire (SPEC.md §3.1) while a vector file refuses it."""
    assert protocol.decode("[1.50]", parse_float=str) == ["1.50"]
    assert protocol.decode("[12]", parse_int=str) == ["12"]
    assert protocol.decode('{"a":1,"a":2.5}', parse_float=str) == {"a": "2.5"}
    for text in ('{"a":NaN}', '{"a":-Infinity}'):
        with pytest.raises(protocol.DecodeError):
            protocol.decode_strict_file(text)
        with pytest.raises(protocol.DecodeError):
            protocol.decode(text, parse_float=str)
    with pytest.raises(protocol.DecodeError):
        protocol.decode_strict_file('{"a":1,"a":2}')


def test_spec_3_1_an_integer_literal_beyond_pythons_digit_limit_is_beyond_the_kits_limits():
    import sys

    digits = sys.get_int_max_str_digits() + 1
    with pytest.raises(protocol.DecodeError) as caught:
        protocol.decode("1" * digits)
    assert str(caught.value) == (
        f"an integer literal of more than {digits - 1} digits "
        "(SPEC.md §3.1: beyond the kit's limits)"
    )


def test_spec_2_3_a_message_of_numbers_kept_as_text_is_encoded_as_written():
    text = protocol.NumberText("0.10")
    assert protocol.encode({"a": text}) == b'{"a":0.10}\n'
    assert protocol.encode({"a": [text]}) == b'{"a":[0.10]}\n'


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


# -- validation (suite/validation.py, SPEC.md §4.3, §4.4) ------------------------------------------

#: Parameters the reference accepts (odd poolKernel) and parameters it refuses (even poolKernel,
#: SPEC.md §2.1).
ACCEPTED_PARAMS = params(2, 1, 2, 1)
REFUSED_PARAMS = params(2, 1, 2, 2)


def vector_document(
    top: dict[str, Any],
    calls: list[Any],
    *,
    canonical: bool,
    tags: tuple[str, ...] = ("ties",),
    vector_id: str = "rules/validation",
) -> str:
    """A vector file's text. ``canonical``: the layout the suite ships (the calls last, one a
    line, which the loader reads line by line); else all on one line. A call given as a string
    is written as that text (to write a weight's digits as they are)."""
    head = {
        "format": "snapkv-vector/1",
        "id": vector_id,
        "description": "A vector for the validation tests. Catches: nothing.",
        "tags": list(tags),
        **top,
    }
    written = [c if isinstance(c, str) else json.dumps(c, separators=(",", ":")) for c in calls]
    if not canonical:
        return json.dumps(head)[:-1] + ', "calls": [' + ", ".join(written) + "]}"
    return (
        json.dumps(head, indent=2)[:-2]
        + ',\n  "calls": [\n'
        + ",\n".join(f"    {line}" for line in written)
        + "\n  ]\n}\n"
    )


def found(problems: list[Any]) -> list[tuple[str, str]]:
    return [(problem.pointer, problem.reason) for problem in problems]


#: The small vector of SPEC.md §2 (3 entries, budget 2, victims [1]) with its third step's
#: weights to be filled in as text.
def small_calls(third_step_weights: str) -> list[Any]:
    return [
        {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0},
        {"op": "step", "pos": 0, "attn": []},
        {"op": "step", "pos": 1, "attn": [0.5]},
        f'{{"op":"step","pos":2,"attn":[{third_step_weights}]}}',
        {"op": "evict", "expect": {"victims": [1]}},
    ]


SMALL_TOP = {"params": ACCEPTED_PARAMS, "seed": 0}
#: 0.1's float32 is 13421773 * 2^-27; its shortest round-trip decimal is 0.10000000149011612.
FLOAT32_OF_TENTH = 13421773 * 2.0**-27
#: The same float64 written with one more digit: numerically another decimal (SPEC.md §4.3).
TENTH_LONGER = "0.100000001490116121"


def test_the_float32_of_a_tenth_and_its_longer_spelling_are_what_the_tests_assume():
    assert repr(FLOAT32_OF_TENTH) == "0.10000000149011612"
    assert float(TENTH_LONGER) == FLOAT32_OF_TENTH


@pytest.mark.parametrize("canonical", [True, False], ids=["by-line", "whole-file"])
@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ("0.5,0.25", []),
        ("0.5,0.10000000149011612", []),
        ("0.5,1.0000000149011612E-1", []),
        ("16777216,0", []),
        ("0.5,0.1", [("/calls/3/attn/1", "0.1 is not exactly a float32")]),
        (f"0.5,{TENTH_LONGER}", [("/calls/3/attn/1", "not in shortest round-trip form")]),
        # 2^60 + 1: a float64 reader rounds it to 2^60, a float32, but the integer is not one
        ("1152921504606846977,3", [("/calls/3/attn/0", "is not exactly a float32")]),
    ],
)
def test_spec_4_3_weights_of_a_call_that_must_succeed_are_judged_by_their_text(
    weights, expected, canonical
):
    """SPEC.md §4.3: every weight of a call that must succeed is an exact float32 written as a
    decimal numerically equal to its shortest round-trip form, or an integer literal of exactly
    that value; judged whether the file is read line by line or whole."""
    text = vector_document(SMALL_TOP, small_calls(weights), canonical=canonical)
    problems = found(check_document(text, None)[1])
    assert [pointer for pointer, _ in problems] == [pointer for pointer, _ in expected]
    for (_, reason), (_, words) in zip(problems, expected, strict=True):
        assert words in reason
    # bytes are read as the file's bytes, the same way
    assert found(check_document(text.encode(), None)[1]) == problems


@pytest.mark.parametrize(
    ("weights", "words"),
    [("0.5,0.1", "0.1 is not exactly a float32"), (f"0.5,{TENTH_LONGER}", "shortest round-trip")],
)
def test_spec_4_3_rule_problems_judges_the_weights_of_data_read_keeping_literals(weights, words):
    """SPEC.md §4.3 on data alone (no lines, no file to read again): its weights' own text."""
    from conformance.suite.validation import parse_json

    text = vector_document(SMALL_TOP, small_calls(weights), canonical=False)
    data = parse_json(text, keep_literals=True)
    problems = found(rule_problems(data, None, load_vocabulary()))
    assert [pointer for pointer, _ in problems] == ["/calls/3/attn/1"]
    assert words in problems[0][1]


def test_spec_4_3_parse_json_keeps_a_float_s_text_only_when_asked():

    assert type(parse_json("[0.50]")[0]) is float
    assert isinstance(parse_json("[0.50]", keep_literals=True)[0], FloatLiteral)


def test_spec_4_3_text_that_is_not_utf_8_is_a_problem_of_the_file_not_a_crash():
    """SPEC.md §4.3 (strict JSON) and §3.1 (UTF-8 only): a document given as text holding a
    lone surrogate, which no UTF-8 file can, is judged as the bytes it stands for: not valid
    JSON, reported, never an exception."""
    vector, problems = check_document('{"format":"snapkv-vector/1","id":"\ud800"}', None)
    assert vector is None
    assert [(p.pointer, p.reason.split(" (")[0]) for p in problems] == [
        ("", "not valid JSON: not UTF-8")
    ]


def test_spec_4_3_the_weights_of_a_call_that_must_be_refused_may_be_anything():
    """SPEC.md §4.3: only calls that must succeed have their weights judged."""
    calls = [
        {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0},
        {"op": "step", "pos": 0, "attn": []},
        '{"op":"step","pos":0,"attn":[0.1],"expect":{"error":"invalid-position"}}',
        '{"op":"step","pos":1,"attn":[0.1,0.1],"expect":{"error":"invalid-attention"}}',
    ]
    for canonical in (True, False):
        text = vector_document(SMALL_TOP, calls, canonical=canonical)
        assert found(check_document(text, None)[1]) == []


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("1e39", "1e39 is not exactly a float32 (it is beyond the float32 range)"),
        ("-1E39", "-1E39 is not exactly a float32 (it is beyond the float32 range)"),
        ("true", "true is not a number"),
        ('"0.5"', '"0.5" is not a number'),
        ("0.1", "0.1 is not exactly a float32 (the nearest float32 is 0.10000000149011612)"),
    ],
)
def test_spec_4_3_a_weight_s_problem_quotes_the_weight_as_the_file_writes_it(text, starts):

    reason = weight_problem(parse_json(text, keep_literals=True))
    assert reason is not None and reason.startswith(starts), reason


def refused_new_vector(params_value: Any, seed: Any) -> str:
    new = {"op": "new", "params": params_value, "seed": seed, "expect": {"error": "invalid-params"}}
    return vector_document({"params": params_value, "seed": seed}, [new], canonical=False)


@pytest.mark.parametrize(
    ("params_value", "seed", "pointers"),
    [
        ({**REFUSED_PARAMS, "budget": 2.0}, 0, ["/params/budget", "/calls/0/params/budget"]),
        (REFUSED_PARAMS, 1.0, ["/seed", "/calls/0/seed"]),
        (
            [2.0, {"a/b": [1e0]}],
            0,
            ["/params/0", "/params/1/a~1b/0", "/calls/0/params/0", "/calls/0/params/1/a~1b/0"],
        ),
    ],
)
def test_spec_4_3_an_integral_float_where_an_integer_is_meant_is_named_where_it_is(
    params_value, seed, pointers
):
    """SPEC.md §4.3: no integral value written with a fraction or exponent where an integer is
    meant, however deep in params (a refused new may hold any params), each at its JSON
    pointer (RFC 6901: "/" in a key is "~1"), at the top level and in the new alike."""
    problems = found(check_document(refused_new_vector(params_value, seed), None)[1])
    assert sorted(pointer for pointer, _ in problems) == sorted(pointers)
    assert all("integral value written with a fraction or exponent" in r for _, r in problems)


def test_spec_4_2_a_refused_new_alone_is_valid_and_one_more_call_is_the_one_problem():
    """SPEC.md §4.2, §4.3: a vector whose new is refused has no other call; such a call is the
    one problem named, not also replayed (it would only be refused with no-policy)."""
    new = {"op": "new", "params": REFUSED_PARAMS, "seed": 0, "expect": {"error": "invalid-params"}}
    top = {"params": REFUSED_PARAMS, "seed": 0}
    assert found(check_document(vector_document(top, [new], canonical=True), None)[1]) == []
    more = [new, {"op": "step", "pos": 0, "attn": []}, {"op": "evict", "expect": {"victims": []}}]
    problems = found(check_document(vector_document(top, more, canonical=True), None)[1])
    assert [pointer for pointer, _ in problems] == ["/calls/1"]
    assert "must have no other call" in problems[0][1]


def test_spec_4_3_a_replay_names_the_expected_victims_and_the_reference_s_refusal():
    """SPEC.md §4.3: every expectation is reproduced by the reference; an evict it refuses is
    named with the victims expected and the reference's own refusal, kind and message."""

    new = {"op": "new", "params": REFUSED_PARAMS, "seed": 0, "expect": {"error": "invalid-params"}}
    evict = {"op": "evict", "expect": {"victims": [0]}}
    text = vector_document({"params": REFUSED_PARAMS, "seed": 0}, [new, evict], canonical=False)
    vector = parse_document(text.encode()).vector()
    answers = replay([call.request for call in vector.calls], fast_policy)
    error = answers[1]["error"]
    assert error["kind"] == "no-policy" and error["message"]
    assert found(replay_problems(vector)) == [
        (
            "/calls/1/expect",
            f"expected victims [0], but the reference refuses it with no-policy "
            f"({error['message']})",
        )
    ]


def test_spec_4_3_a_mismatch_in_a_later_replay_batch_is_named_at_its_own_call(monkeypatch):
    """SPEC.md §4.3: validate replays a long vector a batch of calls at a time; a wrong
    expectation past the first batch is named at its own call's pointer."""
    requests = [{"op": "new", "params": params(2, 0, 1, 1), "seed": 0}]
    for pos in range(4):
        requests.append({"op": "step", "pos": pos, "attn": [0.5] * min(pos, 2) if pos else None})
        requests.append({"op": "evict"})
    vector = reference_vector("kills/batches", requests)
    last = len(vector.calls) - 1
    wrong = dataclasses.replace(vector.calls[last], expect={"victims": [0]})
    right = vector.calls[last].expected_victims
    assert right != [0]
    vector = dataclasses.replace(vector, calls=(*vector.calls[:last], wrong))
    monkeypatch.setattr(validation, "REPLAY_BATCH", 2)
    assert found(replay_problems(vector)) == [
        (f"/calls/{last}/expect", f"expected victims [0], the reference returns {right}")
    ]


def test_spec_4_3_a_document_is_judged_at_the_path_it_is_given():
    """SPEC.md §4.3: the path matches the id; the path given is the one judged and named."""

    text = vector_document(SMALL_TOP, small_calls("0.5,0.25"), canonical=True)
    problems = check_document(text, "elsewhere/other.json")[1]
    assert found(problems) == [
        (
            "/id",
            "id 'rules/validation' does not match the file path; "
            "expected <dir>/rules/validation.json",
        )
    ]
    assert problems[0].path == str(Path("elsewhere/other.json"))
    assert check_document(text, "suite/rules/validation.json")[1] == []


def test_spec_4_3_only_tags_of_the_vocabulary_given(tmp_path):
    """SPEC.md §4.3: only tags of the vocabulary; a caller's vocabulary is the one judged."""

    text = vector_document(SMALL_TOP, small_calls("0.5,0.25"), canonical=True, tags=("own",))
    path = tmp_path / "rules" / "validation.json"
    path.parent.mkdir()
    path.write_text(text)
    own = {"own": "a tag of this suite's vocabulary"}
    assert found(check_document(text, None, tags=own)[1]) == []
    assert found(check_file(path, tags=own)[1]) == []
    unknown = ("/tags/0", "unknown tag 'own'; the vocabulary is vectors/TAGS.md")
    assert found(check_document(text, None)[1]) == [unknown]
    assert found(check_file(path)[1]) == [unknown]


def tie_vector(tmp_path: Any) -> Any:
    """Two entries that tie at 0.5: SPEC.md §2.4 evicts the lower position, 0."""
    calls = small_calls("0.0,0.5")
    calls[-1] = {"op": "evict", "expect": {"victims": [0]}}
    path = tmp_path / "rules" / "validation.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(vector_document(SMALL_TOP, calls, canonical=True))
    return path


def test_spec_4_3_the_replay_runs_on_the_policy_given(tmp_path):
    """SPEC.md §4.3 replays on the reference by default; a policy given is the one replayed
    (here one that breaks ties to the higher position, SPEC.md §2.4)."""
    from conformance.suite.validation import check_file

    ties_to_higher = lookup("ties-to-higher-position").policy
    path = tie_vector(tmp_path)
    wrong = [("/calls/4/expect", "expected victims [0], the reference returns [1]")]
    assert found(check_file(path)[1]) == []
    assert found(check_file(path, factory=ties_to_higher)[1]) == wrong
    assert found(validate_paths([path]).problems) == []
    assert found(validate_paths([path], factory=ties_to_higher).problems) == wrong


def test_validate_paths_counts_every_file_and_goes_on_past_a_root_it_cannot_walk(tmp_path):

    first_file = tie_vector(tmp_path / "a")
    other = tmp_path / "b" / "rules" / "other.json"
    other.parent.mkdir(parents=True)
    other.write_text(first_file.read_text().replace("rules/validation", "rules/other"))
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = tmp_path / "missing"
    report = validate_paths([missing, tmp_path / "a", tmp_path / "b", empty])
    assert report.files == 2
    assert report.summary() == "2 vector file(s) checked: 2 invalid, 2 problem(s)"
    first, second = report.problems
    assert first.path == str(missing) and "no such file or directory" in first.reason
    assert (second.path, second.pointer, second.reason) == (
        str(empty),
        "",
        "no vector files (*.json) found",
    )
    assert isinstance(second, VectorError)


# -- validation of protocol checks (SPEC.md §4.4) --------------------------------------------------


def check_data(name: str) -> dict[str, Any]:
    return json.loads((suite_dir() / "protocol" / f"{name}.json").read_text())


def test_spec_4_4_a_committed_check_with_latitude_is_what_the_reference_answers(tmp_path):
    """SPEC.md §4.4: a check's expectations are the reference's answers, including the
    latitude an expectation allows; a committed check with latitude is valid."""

    data = check_data("deep-nesting")
    assert any("latitude" in item for item in data["expect"])
    path = tmp_path / "protocol" / "deep-nesting.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    assert check_file(path)[1] == []


def test_spec_4_4_a_check_file_s_problems_name_the_file_and_say_what_is_wrong(tmp_path):
    """SPEC.md §4.4: the check's id matches its path; its problems are the file's, each
    ``pointer: reason`` (the pointer within the check) as one reason of the file."""

    data = check_data("victims-empty-list")
    path = tmp_path / "protocol" / "elsewhere.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    problems = check_file(path)[1]
    assert [(p.path, p.pointer, p.reason) for p in problems] == [
        (str(path), "", "/id: 'protocol/victims-empty-list' does not match the file's path")
    ]


def test_spec_4_4_a_check_s_schema_problems_carry_their_pointers():

    data = check_data("victims-empty-list")
    del data["rule"]
    assert check_problems(data, None) == ["/: 'rule' is a required property"]
    data = check_data("victims-empty-list")
    data["expect"][2]["ok"] = "yes"
    assert "/expect/2/ok: 'yes' is not of type 'boolean'" in check_problems(data, None)


def test_spec_4_4_expectations_that_are_not_the_reference_s_answers():
    """SPEC.md §4.4: a check's expectations are the reference's answers: other victims, and an
    outcome the reference does not give (named with the check, the line and both outcomes)."""

    data = check_data("victims-empty-list")
    data["expect"][2]["victims"] = [0]
    assert check_problems(data, None) == ["/expect: not what the reference answers"]
    data = check_data("victims-empty-list")
    data["expect"][2] = {"line": 2, "id": 3, "ok": False, "error": "no-policy"}
    assert check_problems(data, None) == [
        "/expect: not what the reference answers: protocol/victims-empty-list: "
        "line 2 meant no-policy, the reference says ok"
    ]


def test_spec_4_4_a_draft_whose_outcomes_do_not_count_its_answered_lines_is_refused():

    data = check_data("victims-empty-list")
    send = tuple(data["send"])
    outcomes = ("ok",) * len(data["expect"])
    draft = CheckDraft("rules-draft", "a rule", "What it pins.", "a mistake.", send, outcomes)
    realized = realize(draft)
    assert realized.description == "What it pins. Catches: a mistake."
    assert realized.expect == tuple(data["expect"])
    with pytest.raises(GenerationError, match=r"5 answered lines, 4 outcomes, 5 answers"):
        realize(dataclasses.replace(draft, outcomes=outcomes[:-1]))


# -- the transport and the client (transport/, runner/client.py, SPEC.md §3) ---------------------

IMPLEMENTATION = {"name": "in-process port", "language": "python", "version": "9"}
NEW = {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0}


def test_spec_3_2_the_report_s_adapter_is_what_the_hello_answer_said():
    """SPEC.md §3.2: the answer to hello names the implementation (name, language, version),
    the protocol and the capabilities; the report's ``adapter`` keeps them under those names
    (schema/report.schema.json)."""
    handshake = Handshake("port", "c", "1.0", 1, ("scores",))
    assert handshake.to_json() == {
        "implementation": {"name": "port", "language": "c", "version": "1.0"},
        "protocol": 1,
        "capabilities": ["scores"],
    }


def assert_batches_received_in_order(adapter: Any, first: Any, second: Any, first_id: int) -> None:
    """Two batches sent one after the other are received in that order only (SPEC.md §3.1):
    the second first is refused, each answers with its own id, and one received is gone."""
    first_batch = adapter.send([first])
    second_batch = adapter.send([second])
    with pytest.raises(RuntimeError, match=r"^receive batches in the order they were sent$"):
        adapter.receive(second_batch)
    assert [answer["id"] for answer in adapter.receive(first_batch)] == [first_id]
    assert [answer["id"] for answer in adapter.receive(second_batch)] == [first_id + 1]
    with pytest.raises(RuntimeError, match=r"^receive batches in the order they were sent$"):
        adapter.receive(second_batch)


def test_spec_3_1_an_in_process_adapter_numbers_requests_from_hello_on():
    """SPEC.md §3.1, §3.2: every request gets the next id of one counter, hello's being 1, and
    each answer echoes its request's id, batch after batch; batches are received in the order
    they were sent; a closed adapter answers nothing."""
    adapter = Client(InProcessAdapter(implementation=IMPLEMENTATION))
    assert not adapter.running
    assert adapter.handshake is None  # what tells a runner to start it (runner.run)
    assert adapter.stderr_tail() == ""  # no process, no stderr to show
    with pytest.raises(RuntimeError, match=r"^the adapter is not running; call start\(\) first$"):
        adapter.send([{"op": "bye"}])
    handshake = adapter.start()
    assert (handshake.name, handshake.language, handshake.version) == tuple(IMPLEMENTATION.values())
    assert adapter.running
    steps = [NEW, {"op": "step", "pos": 0, "attn": []}, {"op": "evict"}]
    assert [answer["id"] for answer in adapter.exchange(steps)] == [2, 3, 4]
    assert [answer["id"] for answer in adapter.exchange(steps[1:])] == [5, 6]
    assert_batches_received_in_order(adapter, {"op": "evict"}, {"op": "evict"}, 7)
    adapter.close()
    assert not adapter.running
    with pytest.raises(RuntimeError, match="not running"):
        adapter.send([{"op": "bye"}])
    adapter.restart()
    assert [answer["id"] for answer in adapter.exchange([NEW])] == [2]


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


def test_a_cancelled_adapter_process_never_starts():
    """An interrupted run cancels its adapters: a start after that fails, killing what it
    started."""
    adapter = AdapterProcess(REFERENCE_ARGV)
    adapter.cancel()
    with pytest.raises(AdapterStartError, match=r"^the run was interrupted$"):
        adapter.start()
    assert not adapter.running


def validated_evict_failure(field: str, text: str) -> tuple[AdapterFailure, dict[str, Any]]:
    """Run new, a step and an evict with ``validate_protocol`` against an adapter that sets
    the evict answer's ``field`` to the JSON ``text``; the failure and the answer it judged."""
    adapter = Client.process(
        [*broken("rewritten_field"), "evict", field, text], validate_protocol=True
    )
    adapter.start()
    try:
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange([NEW, {"op": "step", "pos": 0, "attn": []}, {"op": "evict"}])
    finally:
        adapter.close()
    answer = {"id": 4, "ok": True, "victims": [], field: json.loads(text)}
    return caught.value, answer


@pytest.mark.parametrize(
    ("field", "text", "first", "more"),
    [
        ("note", '"extra"', "/: Additional properties are not allowed ('note' was unexpected)", ""),
        (
            "victims",
            '[-1,"x"]',
            "/victims/0: -1 is less than the minimum of 0",
            " (and 1 more)",
        ),
    ],
)
def test_spec_3_2_with_validate_protocol_an_answer_must_validate_against_its_op_s_schema(
    field, text, first, more
):
    """SPEC.md §3.2 and the shipped schema/protocol/response.schema.json (closed): with
    ``validate_protocol`` an evict answer with a field v1 does not define, or victims that are
    not positions, is a protocol failure of that call, naming the schema's first problem, how
    many more there are, and the answer."""
    failure, answer = validated_evict_failure(field, text)
    assert (failure.kind, failure.call_index) == ("protocol", 2)
    assert [a["id"] for a in failure.answers] == [2, 3]
    assert failure.detail == (
        "the answer to evict does not validate against schema/protocol/response.schema.json: "
        f"{first}{more}: {json.dumps(answer)}"
    )


def test_spec_3_2_a_second_answer_to_hello_fails_the_start_showing_the_adapter_s_stderr():
    """SPEC.md §3.2: hello is answered once, when asked. An adapter that answered before it
    was asked has its real answer arrive with id 1 after the handshake: a failed start, which
    shows what the adapter wrote to stderr (where a porter looks first)."""
    script = f"echo early-bird-on-stderr >&2; exec {shlex.join(broken('hello_before_asked'))}"
    adapter = Client.process(["sh", "-c", script])
    adapter.start()
    try:
        with pytest.raises(AdapterStartError) as caught:
            adapter.exchange([NEW])
    finally:
        adapter.close()
    assert caught.value.message.startswith("the adapter answered hello twice")
    assert "early-bird-on-stderr" in caught.value.stderr_tail


# -- the fast path (policy/fast.py, SPEC.md §2.4) --------------------------------------------------


def test_spec_2_4_the_fast_path_evicts_the_lowest_pooled_scores_among_thousands():
    """SPEC.md §2.4: evict removes the ``excess`` candidates of lowest (pooled score, position).
    5,000 candidates of distinct scores and 1,666 victims: a size where numpy's partition leaves
    the entries after the one it was asked to place in no particular order, so a threshold read
    one place off is wrong. The victims are derived here by sorting, not by the policy."""
    weights = np.random.default_rng(217).random(5000).astype(np.float32)
    # one ring slot and a pooling kernel of 1: each candidate's pooled score is its weight
    policy = fast_policy({"budget": 3335, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1})
    for position in range(5000):
        policy.step(position, None)
    policy.step(5000, [float(weight) for weight in weights])  # 5001 kept, 5000 candidates
    ranked = sorted(range(5000), key=lambda i: (float(weights[i]), i))
    assert policy.evict() == sorted(ranked[:1666])


@pytest.mark.parametrize(
    ("before", "attn"),
    [([], [1]), ([[]], [0.5, 1]), ([[]], [0.5, None])],
    ids=["one-weight-with-none-kept", "an-extra-integer", "an-extra-null"],
)
def test_spec_2_3_the_fast_path_refuses_attention_of_the_wrong_length_as_the_reference_does(
    before, attn
):
    """SPEC.md §2.3: ``attn`` has one weight per kept position, else ``invalid-attention``;
    the fast path refuses with the reference's kind and words, whatever the list holds (here
    floats enough for the kept positions plus one value that is not a float)."""
    refusals = []
    for make in (reference.new_policy, fast_policy):
        policy = make(ACCEPTED_PARAMS, 0)
        for position, weights in enumerate(before):
            policy.step(position, weights)
        with pytest.raises(reference.PolicyError) as caught:
            policy.step(len(before), attn)
        refusals.append((caught.value.kind, caught.value.message))
    assert refusals[0][0] == "invalid-attention"
    assert refusals[1] == refusals[0]


def test_spec_3_2_the_fast_path_s_positions_stay_integers_as_its_arrays_grow():
    """SPEC.md §3.2: victims are a list of integers. Past the fast path's first 16 rows its
    arrays grow; 40 entries of equal (zero) score, budget 20, one protected: the victims are
    positions 0 to 19 (SPEC.md §2.4, the lower position first), each a Python int, so the
    answer writes ``0``, never ``0.0``."""
    policy = fast_policy({"budget": 20, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1})
    for position in range(40):
        policy.step(position, None)
    victims = policy.evict()
    assert json.dumps(victims) == json.dumps(list(range(20)))
    assert json.dumps(policy.kept) == json.dumps(list(range(20, 40)))


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


#: An adapter that answers every request with ok (hello as protocol v1 asks), and faults named
#: on its command line: ``twice:N`` answers request N twice at once, ``late:N:M`` writes request
#: N's answer again after answering M, ``null:N`` answers N as unreadable (id null), ``text:N``,
#: ``array:N`` and ``latin:N`` answer N with a long line that is not JSON, a JSON array, and
#: 200 bytes that are not UTF-8; ``slow:N`` answers N after 0.6 s, ``long:N`` with a line of 2,000
#: characters, ``partial:N`` with 300 characters and no newline and then exits with status 3,
#: ``shut:N`` closes its stdout instead of answering and keeps running; ``protocol2`` answers hello
#: with protocol 2 after writing to stderr.
SCRIPTED = """
import json, os, sys, time

faults = sys.argv[1:]
written = {}
for raw in sys.stdin:
    request = json.loads(raw)
    rid = request["id"]
    answer = {"id": rid, "ok": True}
    if request["op"] == "hello":
        answer.update(protocol=1, implementation={"name": "s", "language": "py", "version": "0"})
        answer["capabilities"] = []
        if "protocol2" in faults:
            print("only protocol 2 here", file=sys.stderr, flush=True)
            answer["protocol"] = 2
    if f"slow:{rid}" in faults:
        time.sleep(0.6)
    if f"long:{rid}" in faults:
        print("0123456789" * 200, flush=True)
        continue
    if f"partial:{rid}" in faults:
        sys.stdout.write("abcdefghij" * 30)
        sys.stdout.flush()
        sys.exit(3)
    if f"shut:{rid}" in faults:
        os.close(1)
        time.sleep(60)
    if f"text:{rid}" in faults:
        print("not json " + "x" * 200, flush=True)
        continue
    if f"array:{rid}" in faults:
        print("[1, 2]", flush=True)
        continue
    if f"latin:{rid}" in faults:
        sys.stdout.buffer.write(b"\\xff" * 200 + b"\\n")
        sys.stdout.flush()
        continue
    if f"null:{rid}" in faults:
        answer = {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "what?"}}
    written[rid] = json.dumps(answer, separators=(",", ":"))
    print(written[rid], flush=True)
    if f"twice:{rid}" in faults:
        print(written[rid], flush=True)
    for fault in faults:
        if fault.startswith("late:") and fault.endswith(f":{rid}"):
            print(written[int(fault.split(":")[1])], flush=True)
    if request["op"] == "bye":
        break
"""


def scripted(tmp_path: Path, *faults: str, **settings: Any) -> Client:
    script = tmp_path / "scripted_adapter.py"
    script.write_text(SCRIPTED)
    adapter = Client.process([sys.executable, str(script), *faults], **{"timeout": 20, **settings})
    adapter.start()
    return adapter


STEP = {"op": "step", "pos": 0, "attn": []}


def failure_of(adapter: Client, *batches: list[dict[str, Any]]) -> AdapterFailure:
    """The failure of the last of ``batches`` (the ones before it must pass)."""
    try:
        for batch in batches[:-1]:
            adapter.exchange(batch)
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange(batches[-1])
    finally:
        adapter.kill()
    return caught.value


def test_spec_3_1_a_request_answered_twice_in_its_exchange_is_blamed(tmp_path):
    """SPEC.md §3.1: one answer per request, in order. Request 0 of an exchange answered twice
    is blamed (not the request after it), with both ids."""
    failure = failure_of(scripted(tmp_path, "twice:2"), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", 0, False)
    assert failure.detail == (
        "request 0 of this exchange was answered twice (a second answer with id 2 came where "
        "the answer with id 3 was due)"
    )


@pytest.mark.parametrize(
    ("faults", "batches", "blamed"),
    [
        # the first request of the previous exchange, answered again
        (("twice:2",), [[NEW], [STEP]], 0),
        # request 2 answered again three exchanges later: older than the previous exchange
        (("late:2:4",), [[NEW], [STEP], [STEP], [STEP]], -1),
    ],
    ids=["previous-exchange", "older-exchange"],
)
def test_spec_3_1_an_extra_answer_to_an_earlier_exchange_is_placed_there(
    tmp_path, faults, batches, blamed
):
    """SPEC.md §3.1: an extra answer that arrives after its exchange belongs to that exchange
    (``earlier``): placed at its request's index in the previous exchange, -1 when older."""
    failure = failure_of(scripted(tmp_path, *faults), *batches)
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", blamed, True)
    assert failure.detail == (
        "an extra answer with id 2 arrived after all answers to its exchange: "
        "the adapter answered that request twice"
    )


def test_spec_3_3_an_answer_with_id_null_says_the_request_was_not_read(tmp_path):
    """SPEC.md §3.3: a request an adapter cannot read is refused with id null; the failure
    is that request's, and shows the adapter's error."""
    failure = failure_of(scripted(tmp_path, "null:3"), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    error = {"kind": "bad-request", "message": "what?"}
    assert failure.detail == (
        f"the adapter could not read the request (it answered with id null: {json_text(error)})"
    )


def test_spec_3_2_a_wrong_answer_to_bye_is_a_problem_of_closing_named_in_words(tmp_path):
    """SPEC.md §3.2: bye is answered like any request. A wrong answer to it, or a second
    answer to hello found while waiting for it, is a problem of closing, in words a report can
    show."""
    unreadable = scripted(tmp_path, "null:2")  # bye is request 2
    unreadable.close()
    assert unreadable.close_problems[0].startswith(
        "the answer to bye was wrong: the adapter could not read the request"
    )
    hello_twice = scripted(tmp_path, "twice:1")
    hello_twice.close()
    assert hello_twice.close_problems[0].startswith("the adapter answered hello twice")


def test_an_adapter_process_not_started_has_no_stderr_to_show_and_answers_nothing():
    adapter = AdapterProcess(REFERENCE_ARGV)
    assert adapter.stderr_tail() == ""
    with pytest.raises(RuntimeError, match=r"^the adapter is not running; call start\(\) first$"):
        adapter.send([NEW])


def test_a_failure_of_an_unknown_kind_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"^unknown failure kind 'hang'$"):
        AdapterFailure("hang", 0, "detail")
    assert AdapterFailure("crash", 0, "detail").stderr_tail == ""


def test_an_answer_is_held_with_its_refusal_message_capped_and_unjudged_fields_dropped():
    """What a vector holds in flight is bounded by its calls, not by what the adapter writes:
    a refusal's message is cut to KEEP_TEXT characters, fields no rule reads are dropped, and
    an answer holding only judged fields with a short error is kept as it is."""
    long = {"id": 3, "ok": False, "error": {"kind": "invalid-position", "message": "x" * 10**6}}
    bounded = held(long)
    assert bounded["error"]["kind"] == "invalid-position"
    assert len(bounded["error"]["message"]) <= KEEP_TEXT + 100
    # an error that is not an object is judged as such (a protocol error), and shown capped
    text = held({"id": 3, "ok": False, "error": "z" * 10**6})["error"]
    assert text.startswith("zzz") and len(text) <= KEEP_TEXT + 100
    chatty = {"id": 3, "ok": True, "victims": [1], "note": "y" * 10**6}
    assert held(chatty) == {"id": 3, "ok": True, "victims": [1]}
    plain = {"id": 3, "ok": False, "error": {"kind": "no-policy", "message": "no"}}
    assert held(plain) == plain
    # a short error is held as the adapter wrote it, whatever it holds: the judge names its faults
    for error in ({"kind": "no-policy"}, {"kind": "no-policy", "message": 5}, {"message": "m"}):
        assert held({"id": 3, "ok": False, "error": error})["error"] == error
    # a long one keeps its kind and its message, capped, and nothing else
    chatty_error = {"kind": "no-policy", "message": "m", "trace": "y" * 10**6}
    assert held({"id": 3, "ok": False, "error": chatty_error})["error"] == {
        "kind": "no-policy",
        "message": "m",
    }
    no_kind = {"message": "x" * 10**6}
    assert held({"id": 3, "ok": False, "error": no_kind})["error"].keys() == {"message"}
    odd = {"kind": "no-policy", "message": 5, "trace": "y" * 10**6}
    held_odd = held({"id": 3, "ok": False, "error": odd})["error"]
    assert held_odd.get("kind") == "no-policy" and "trace" not in held_odd


@pytest.mark.parametrize(
    ("fault", "starts", "shown"),
    [
        ("text:3", "the answer is not JSON (", json_text(("not json " + "x" * 200)[:120])),
        ("array:3", "the answer is not a JSON object: ", json_text([1, 2])),
        ("latin:3", "the answer is not UTF-8 (", json_text(b"\xff" * 120)),
    ],
    ids=["not-json", "not-an-object", "not-utf-8"],
)
def test_spec_3_1_an_answer_line_that_is_not_a_json_object_is_that_call_s_protocol_error(
    tmp_path, fault, starts, shown
):
    """SPEC.md §3.1: each answer is one line of UTF-8 JSON, an object. A line that is not is a
    protocol failure of the call it answers, showing the line's first 120 characters."""
    failure = failure_of(scripted(tmp_path, fault), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    assert [answer["id"] for answer in failure.answers] == [2]
    assert failure.detail.startswith(starts)
    assert failure.detail.endswith(shown)


def test_spec_3_1_an_extra_answer_read_where_a_later_one_is_due_is_never_taken_for_it(tmp_path):
    """SPEC.md §3.1: an answer is matched to its request by id, even when it is written as
    the plain ``{"id":N,"ok":true}`` the driver reads without a decoder: request 2's answer
    written again where request 4's is due is an extra answer to the previous exchange."""
    failure = failure_of(scripted(tmp_path, "late:2:3"), [NEW], [STEP, STEP])
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", 0, True)


def test_spec_3_2_with_validate_protocol_even_a_plain_ok_answer_is_checked(tmp_path):
    """With ``validate_protocol`` every answer meets its op's schema, the plain ``ok`` too: an
    evict answered ``{"id":N,"ok":true}`` lacks its victims."""
    script = tmp_path / "scripted_adapter.py"
    script.write_text(SCRIPTED)
    adapter = Client.process([sys.executable, str(script)], validate_protocol=True)
    adapter.start()
    failure = failure_of(adapter, [NEW, STEP, {"op": "evict"}])
    assert (failure.kind, failure.call_index) == ("protocol", 2)
    assert failure.detail.startswith(
        "the answer to evict does not validate against schema/protocol/response.schema.json"
    )


def test_an_adapter_process_receives_batches_in_the_order_they_were_sent():
    adapter = Client.process(REFERENCE_ARGV)
    adapter.start()
    try:
        assert_batches_received_in_order(adapter, NEW, STEP, 2)
    finally:
        adapter.kill()


def test_spec_3_1_a_long_batch_is_answered_whole_and_handed_over_in_bounded_lists(tmp_path):
    """SPEC.md §3.1: one answer per request, in order, ids counted from hello on, however many
    requests a batch holds. A batch of more than HAND_OVER requests (a long vector) is written a
    piece at a time; with ``into`` its answers come HAND_OVER at a time, then the rest."""
    count = HAND_OVER + 904
    adapter = scripted(tmp_path)
    try:
        whole = adapter.exchange([STEP] * count)
        handed: list[list[dict[str, Any]]] = []
        ticket = adapter.send([STEP] * count)
        assert adapter.receive(ticket, into=handed.append) == []
    finally:
        adapter.kill()
    assert whole == [{"id": 2 + index, "ok": True} for index in range(count)]
    assert [len(answers) for answers in handed] == [HAND_OVER, 904]
    first = 2 + count
    assert [answer["id"] for answers in handed for answer in answers] == list(
        range(first, first + count)
    )


def test_a_long_batch_s_pieces_are_its_request_lines_cut_after_the_line_reaching_the_size(
    monkeypatch,
):
    """A long batch is written in pieces that join to exactly the short path's bytes (ids
    spliced in from the first), each piece ending with the line that brings it to PIECE bytes
    or more, the last holding the rest. Line lengths here are chosen so that a piece reaching
    exactly PIECE bytes, and one a byte short of it, both occur at a first piece and a later
    one."""
    monkeypatch.setattr(framing, "PIECE", 99)
    # each line is b'{"id":N,' (9 bytes for ids 10-99) + a body padded to the length wanted
    lengths = [32, 33, 33, 40, 33, 33, 33, 32, 33, 33, 40, 30]
    bodies = [b'"op":"bye","x":"' + b"x" * (length - 9 - 19) + b'"}\n' for length in lengths]
    assert [len(b'{"id":%d,' % (10 + i) + body) for i, body in enumerate(bodies)] == lengths
    pieces = list(framing.pieces(10, bodies))
    assert b"".join(pieces) == framing.with_ids(10, bodies)
    expected_sizes = [32 + 33 + 33 + 40, 33 + 33 + 33, 32 + 33 + 33 + 40, 30]
    assert [len(piece) for piece in pieces] == expected_sizes
    assert list(framing.pieces(10, [])) == []


def test_an_adapter_runs_with_the_environment_and_directory_it_is_given(tmp_path):
    """An adapter runs with exactly the environment and in the directory it is given (a port
    that needs a library path or a model file next to it)."""
    script = tmp_path / "where.py"
    script.write_text(
        "import json, os, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "name = os.environ.get('PORT_NAME', 'no PORT_NAME')\n"
        "print(json.dumps({'id': request['id'], 'ok': True, 'protocol': 1, 'implementation':"
        " {'name': name, 'language': os.getcwd(), 'version': '0'}}), flush=True)\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    adapter = Client.process([sys.executable, str(script)], env={"PORT_NAME": "from-env"}, cwd=home)
    try:
        handshake = adapter.start()
    finally:
        adapter.kill()
    assert (handshake.name, handshake.language) == ("from-env", str(home))


def test_an_adapter_process_refuses_an_empty_command_and_a_second_start():
    with pytest.raises(ValueError, match=r"^the adapter command is empty$"):
        AdapterProcess([])
    adapter = AdapterProcess(REFERENCE_ARGV)
    adapter.start()
    try:
        with pytest.raises(
            RuntimeError, match=r"^the adapter is already running; use restart\(\)$"
        ):
            adapter.start()
    finally:
        adapter.kill()


def test_each_answer_is_allowed_the_same_default_time_by_every_front_end(pytestconfig):
    """README: ``--timeout`` defaults to 10 s, for the CLI, the pytest plugin and the library
    alike (the plugin keeps its own literal: it imports nothing of the kit until used). The
    plugin's default is read from this very pytest run, which loads it as an installed plugin."""
    parser = argparse.ArgumentParser()
    add_timeout(parser)
    assert parser.parse_args([]).timeout == ANSWER_TIMEOUT == 10.0
    assert AdapterProcess(REFERENCE_ARGV).timeout == ANSWER_TIMEOUT
    assert pytestconfig.getoption("snapkv_timeout") == ANSWER_TIMEOUT


def test_spec_3_2_a_hello_answer_the_kit_refuses_shows_the_adapter_s_stderr(tmp_path):
    """SPEC.md §3.2: hello is answered with protocol 1. A start refused for its answer shows
    what the adapter wrote to stderr, as every failed start does."""
    with pytest.raises(AdapterStartError) as caught:
        scripted(tmp_path, "protocol2")
    assert "only protocol 2 here" in caught.value.stderr_tail


def test_spec_3_1_an_answer_later_than_the_timeout_is_a_timeout(tmp_path):
    """SPEC.md §3.1 and README: each answer gets ``--timeout`` seconds; one that comes later
    is a timeout even though it comes (here 0.6 s late for a timeout of 0.2 s)."""
    adapter = scripted(tmp_path, "slow:3")
    adapter.exchange([NEW])  # in the usual time, however loaded the machine
    adapter.transport.timeout = 0.2
    failure = failure_of(adapter, [STEP])
    assert (failure.kind, failure.call_index) == ("timeout", 0)
    assert failure.detail == "no answer within 0.2 s"


def test_spec_3_1_an_overlong_answer_shows_its_first_80_characters(tmp_path):
    """SPEC.md §3.1: each answer is one line. The runner reads at most ``max_line`` bytes of it
    (README: 16 MiB by default) and then stops, naming the limit and showing how the line
    starts, exactly its first 80 characters."""
    failure = failure_of(scripted(tmp_path, "long:3", max_line=1000), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    assert failure.detail == (
        "the answer line is longer than 1000 bytes (not read further); "
        f"it starts {json_text(('0123456789' * 8).encode())}"
    )


def test_spec_3_1_an_answer_cut_short_by_an_exit_shows_the_status_and_200_characters(tmp_path):
    """SPEC.md §3.1: an answer is a whole line. An adapter that exits in the middle of one has
    crashed: the failure names its exit status and shows the unfinished line, exactly its first
    200 characters."""
    failure = failure_of(scripted(tmp_path, "partial:3"), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.exit_status) == ("crash", 1, 3)
    assert failure.detail == (
        "the adapter stopped in the middle of its answer and exited (exit status 3); "
        f"the unfinished line: {json_text(('abcdefghij' * 20).encode())}"
    )


def test_spec_3_1_an_adapter_that_closes_its_stdout_and_runs_on_is_a_crash(tmp_path):
    """SPEC.md §3.1: stdout carries the answers. An adapter that closes it cannot answer: a
    crash of the call it owed, even while the process runs on (no exit status to show)."""
    failure = failure_of(scripted(tmp_path, "shut:3", grace=0.2), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.exit_status) == ("crash", 1, None)
    assert failure.detail == "the adapter closed its stdout without answering"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads descriptors in /proc")
def test_a_killed_adapter_leaves_no_descriptor_open():
    """Nothing of an adapter outlives it: after kill (and after close), every descriptor that
    starting it opened is closed, however many adapters a long run starts. Descriptors are
    told apart by what they point to (a pipe's inode), so one that an earlier test's garbage
    frees meanwhile, or a number used again, cannot hide a leak. Stderr's pipe is closed by
    its drain thread when it reads the end, a moment after the kill: each stop gets up to ten
    seconds for that, which a descriptor held for good never meets."""

    def open_descriptors() -> set[tuple[str, str]]:
        found = set()
        for entry in Path("/proc/self/fd").iterdir():
            with contextlib.suppress(OSError):  # the listing's own descriptor, gone by now
                found.add((entry.name, os.readlink(entry)))
        return found

    adapter = AdapterProcess(REFERENCE_ARGV)
    for stop in (adapter.kill, adapter.close):
        before = open_descriptors()
        adapter.start()
        opened = open_descriptors() - before
        assert len(opened) >= 3  # its stdin, stdout and stderr at least
        stop()
        deadline = time.monotonic() + 10.0
        while opened & open_descriptors() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not opened & open_descriptors()

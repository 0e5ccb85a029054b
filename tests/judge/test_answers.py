"""Each rule the judge applies, pinned on its own, in both places it is judged.

Most rules about an answer's JSON types are applied on two paths: the vector path (the
runner's handshake in ``conformance.runner.client``, each answer line read by
``conformance.judge.answers``, the answers judged in ``conformance.judge.checker``) and the
protocol-check judge (``conformance.judge.check_answers``, its lines read by the same rules).
A port that breaks a rule fails many vectors and checks, so a slip in one copy of the rule is
hidden by the other: every test here plants exactly one fault where only the rule under test
can catch it, in one path, and asserts the verdict that rule gives. Expected values come from
SPEC.md and the reference's own answers, never from the code under test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.judge import checker, verdicts
from conformance.judge.answers import (
    CutVictims,
    cut_victims,
    decode_answer,
    held,
    held_victims,
    read_answer,
)
from conformance.judge.check_answers import judge_check
from conformance.judge.checker import BROKEN_INVARIANT, NOT_ASCENDING, NOT_INTEGERS, NOT_KEPT, judge
from conformance.judge.verdicts import Judged, Verdict
from conformance.runner import run as runner
from conformance.runner.client import Client, parse_handshake
from conformance.spec.protocol import is_integer, same_integer
from conformance.spec.resources import suite_dir
from conformance.spec.text import KEEP_TEXT
from conformance.suite.stream import load_checks
from conformance.suite.validation import (
    CheckDraft,
    check_document,
    realize,
    reference_answers,
)
from conformance.suite.vectors import Vector
from conformance.transport.failures import AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from tests.support.runner_support import broken, params, reference_vector

CHECKS = {check.id: check for check in load_checks([suite_dir()])}


def rewritten(op: str, field: str, text: str) -> list[str]:
    """An adapter answering as the reference, but with ``field`` of every ``op`` answer set to
    the JSON ``text`` (``ID`` for the request's id; ``-`` removes the field)."""
    return [*broken("rewritten_field"), op, field, text]


def answers_of(vector: Vector) -> list[dict[str, Any]]:
    adapter = Client(InProcessAdapter())
    adapter.start()
    return adapter.exchange([call.request for call in vector.calls])


@pytest.fixture(scope="module")
def evicts_zero() -> Vector:
    """Two null steps tie at 0 (budget 1): the reference evicts [0], so a victim ``0.0`` or
    ``false`` has the value of the right answer and only its JSON type is wrong."""
    vector = reference_vector(
        "rules/evicts-zero",
        [
            {"op": "new", "params": params(1, 0, 1, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "step", "pos": 1, "attn": None},
            {"op": "evict"},
        ],
    )
    assert vector.calls[3].expected_victims == [0]  # SPEC.md §2.4: ties go to the lower position
    return vector


def run_one(vector: Vector, argv: list[str]) -> checker.VectorResult:
    (result,) = runner.run_suite([vector], argv, timeout=10.0).results
    return result


# -- SPEC.md §1: the exact JSON integer -----------------------------------------------------------


@pytest.mark.parametrize("value", [1.0, True, "1", None, [1]])
def test_spec_1_same_integer_refuses_every_other_json_value_equal_in_python(value):
    """SPEC.md §1: an integer is a JSON number without fraction or exponent, and true/false are
    never numbers: 1.0 and true equal 1 in Python, and are not the integer 1."""
    assert not same_integer(value, 1)
    assert same_integer(1, 1)


def test_spec_1_same_integer_null_is_only_null():
    """SPEC.md §3.1: a request without an integer id is answered ``"id": null``: 0, false and
    a missing id (None from ``.get``, tested by the callers) are not null."""
    assert same_integer(None, None)
    assert not same_integer(0, None) and not same_integer(False, None)
    assert not same_integer(None, 0)


@pytest.mark.parametrize(("value", "integer"), [(0, True), (-3, True), (2**70, True)])
def test_spec_1_is_integer_accepts_integers_of_any_size(value, integer):
    assert is_integer(value) is integer


@pytest.mark.parametrize("value", [False, True, 0.0, 1.0, "0", None])
def test_spec_1_is_integer_refuses_booleans_and_integral_floats(value):
    """SPEC.md §1: ``false`` is not 0 and ``0.0`` is not an integer."""
    assert not is_integer(value)


# -- the vector path: the runner's handshake and id echo (SPEC.md §3.1, §3.2) ---------------------


@pytest.mark.parametrize("text", ["1.0", "true"])
def test_spec_3_2_runner_refuses_a_hello_whose_protocol_is_not_the_integer_1(evicts_zero, text):
    """SPEC.md §3.2: the answer's protocol is the integer 1 (client.parse_handshake through
    protocol.parse_hello_answer's same_integer)."""
    with pytest.raises(AdapterStartError, match=f"answered hello with protocol {text}"):
        run_one(evicts_zero, rewritten("hello", "protocol", text))


@pytest.mark.parametrize("text", ["1.0", "true"])
def test_spec_3_1_runner_refuses_a_hello_id_that_is_not_the_integer_1(evicts_zero, text):
    """SPEC.md §3.1: the id is echoed as the same integer; hello's id is 1, which 1.0 and true
    equal in Python (answers.echoes_id's same_integer)."""
    with pytest.raises(AdapterStartError, match=f"the answer has id {text}, expected 1"):
        run_one(evicts_zero, rewritten("hello", "id", text))


@pytest.mark.parametrize(("text", "shown"), [("ID.0", "5.0"), ("-", "null")])
def test_spec_3_1_runner_fails_an_id_echoed_as_a_float_or_left_out(evicts_zero, text, shown):
    """SPEC.md §3.1: every answer echoes its request's integer id; ``5.0`` and no id at all
    are protocol errors (answers.read_answer). The evict is request 5, after hello."""
    result = run_one(evicts_zero, rewritten("evict", "id", text))
    assert (result.verdict, result.call_index, result.op) == (verdicts.PROTOCOL_ERROR, 3, "evict")
    assert f"the answer has id {shown}, expected 5" in result.message


def test_spec_3_2_handshake_refuses_ok_1():
    """SPEC.md §3.2: ``ok`` is the boolean true; ``1`` is a number (parse_hello_answer)."""
    hello = {
        "id": 1,
        "ok": 1,
        "protocol": 1,
        "implementation": {"name": "n", "language": "l", "version": "v"},
        "capabilities": [],
    }
    with pytest.raises(AdapterStartError, match="no boolean ok"):
        parse_handshake(hello)
    assert parse_handshake({**hello, "ok": True}).protocol == 1


def test_spec_3_2_runner_refuses_a_hello_answered_ok_1(evicts_zero):
    with pytest.raises(AdapterStartError, match="no boolean ok"):
        run_one(evicts_zero, rewritten("hello", "ok", "1"))


# -- the vector path: the checker (SPEC.md §3.2, §5) ----------------------------------------------


@pytest.mark.parametrize("text", ["[0.0]", "[false]"])
def test_spec_5_runner_fails_victims_that_equal_the_expected_ones_only_in_python(evicts_zero, text):
    """SPEC.md §3.2, §5: victims are a list of integers; ``[0.0]`` and ``[false]`` have the
    value of the expected ``[0]`` (checker._judge_victims' is_integer)."""
    result = run_one(evicts_zero, rewritten("evict", "victims", text))
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.NOT_INTEGERS)
    assert f"victims must be a list of integers, got {text}" in result.message


@pytest.mark.parametrize("victims", [[0.0], [False]])
def test_spec_5_checker_fails_victims_of_the_wrong_json_type(evicts_zero, victims):
    answers = answers_of(evicts_zero)
    answers[3]["victims"] = victims
    result = checker.judge(evicts_zero, answers)
    assert (result.verdict, result.rule, result.call_index) == (
        verdicts.BROKEN_INVARIANT,
        verdicts.NOT_INTEGERS,
        3,
    )


def test_spec_3_2_runner_fails_a_step_answered_ok_1(evicts_zero):
    """SPEC.md §3.2: ``ok`` is a boolean; ``1`` is not true (protocol.answer_problem)."""
    result = run_one(evicts_zero, rewritten("step", "ok", "1"))
    assert (result.verdict, result.call_index) == (verdicts.PROTOCOL_ERROR, 1)
    assert "no boolean ok" in result.message


@pytest.fixture(scope="module")
def refusing() -> Vector:
    """A weight refused, then a later new refused (even poolKernel), then a gap in positions."""
    vector = reference_vector(
        "rules/refusals",
        [
            {"op": "new", "params": params(2, 0, 2, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "step", "pos": 1, "attn": [-0.5]},
            {"op": "new", "params": params(2, 0, 2, 2), "seed": 0},
            {"op": "step", "pos": 5, "attn": [0.5]},
            {"op": "evict"},
        ],
    )
    expected = [call.expected_error for call in vector.calls]
    assert expected == [None, None, "invalid-attention", "invalid-params", None, None]
    return vector


def test_spec_3_3_checker_ok_0_is_not_a_refusal(refusing):
    """SPEC.md §3.3: a refusal has ``"ok": false``; ``0`` is a number, even beside a refusal's
    error object of the right kind (protocol.answer_problem's ``ok is False``)."""
    answers = answers_of(refusing)
    answers[2]["ok"] = 0
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index) == (verdicts.PROTOCOL_ERROR, 2)
    assert "no boolean ok" in result.message


def test_spec_4_2_checker_fails_a_later_new_accepted_where_it_must_be_refused(refusing):
    """SPEC.md §4.2, §3.2: a refused new must be refused; a port that accepts an even
    poolKernel answers it ok (checker._judge_call's unexpected-success)."""
    answers = answers_of(refusing)
    answers[3] = {"id": answers[3]["id"], "ok": True}
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index, result.op) == (verdicts.UNEXPECTED_SUCCESS, 3, "new")
    assert result.expected == {"error": "invalid-params"}


def test_spec_4_2_checker_fails_a_first_new_accepted_where_it_must_be_refused():
    """SPEC.md §4.2: a vector whose construction must be refused holds that new alone; an ok is
    an unexpected success, not a pass."""
    vector = reference_vector(
        "rules/refused-new", [{"op": "new", "params": params(2, 2, 2, 1), "seed": 0}]
    )
    assert vector.calls[0].expected_error == "invalid-params"  # recentWindow < budget
    result = checker.judge(vector, [{"id": 1, "ok": True}])
    assert (result.verdict, result.call_index, result.op) == (verdicts.UNEXPECTED_SUCCESS, 0, "new")


def test_spec_2_3_checker_fails_a_step_refused_where_it_must_succeed(refusing):
    """SPEC.md §2.3: gaps between positions are allowed; a port that refuses the step at 5
    after 0 (a refused step that must succeed) is an unexpected refusal at that step."""
    answers = answers_of(refusing)
    answers[4] = {
        "id": answers[4]["id"],
        "ok": False,
        "error": {"kind": "invalid-position", "message": "gap"},
    }
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index, result.op) == (
        verdicts.UNEXPECTED_REFUSAL,
        4,
        "step",
    )
    assert result.actual == {"error": "invalid-position", "message": "gap"}


def test_spec_2_4_checker_fails_the_oldest_protected_entry_evicted():
    """SPEC.md §2.4 step 3: the recentWindow highest kept positions are never candidates. The
    victims here are in ascending order, kept, and as many as the budget requires, and only
    the oldest protected entry is among them: a protected window one entry short would take
    it for a candidate and call the answer merely wrong victims."""
    vector = reference_vector(
        "rules/protected",
        [
            {"op": "new", "params": params(3, 2, 2, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "step", "pos": 1, "attn": [0.5]},
            {"op": "step", "pos": 2, "attn": [0.5, 0.5]},
            {"op": "step", "pos": 3, "attn": [0.5, 0.5, 0.5]},
            {"op": "evict"},
        ],
    )
    # Kept [0, 1, 2, 3], budget 3: one victim, from the candidates [0, 1]; [2, 3] protected.
    assert vector.calls[5].expected_victims in ([0], [1])
    answers = answers_of(vector)
    answers[5]["victims"] = [2]
    result = checker.judge(vector, answers)
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.PROTECTED_EVICTED)
    assert "evicted [2], among the recentWindow 2 protected entries [2, 3]" in result.message


# -- the protocol-check judge (SPEC.md §3, §4.4, §5) ----------------------------------------------


def edited(lines: list[bytes], index: int, **fields: Any) -> list[bytes]:
    """``lines`` with answer ``index`` changed: each field set (a value of ``...`` removes
    it). Python's json writes 1.0 as ``1.0`` and True as ``true``, as a port's JSON would."""
    answers = list(lines)
    answer = json.loads(answers[index])
    for name, value in fields.items():
        if value is ...:
            answer.pop(name, None)
        else:
            answer[name] = value
    answers[index] = json.dumps(answer).encode()
    return answers


def reference(check_id: str) -> tuple[Any, list[bytes]]:
    item = CHECKS[check_id]
    answers = reference_answers(item.payload)
    assert judge_check(item, answers) == Verdict(item.id, verdicts.PASS)
    return item, answers


@pytest.mark.parametrize(("index", "value"), [(0, 1.0), (0, True), (1, 2.0), (1, ...)])
def test_spec_3_1_check_judge_refuses_an_id_that_is_not_the_same_integer(index, value):
    """SPEC.md §3.1: the id is echoed as the same integer: 1.0 and true for 1, 2.0 for 2 and
    a missing id are protocol errors (check_answers._outcome_fault through answers.echoes_id)."""
    item, answers = reference("protocol/hello-repeated")
    verdict = judge_check(item, edited(answers, index, id=value))
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, index)
    assert "answered with id" in verdict.message


def test_spec_3_1_check_judge_refuses_a_missing_id_where_null_is_due():
    """SPEC.md §3.1: a request without an integer id is answered with ``"id": null``, present:
    an answer without the member is not one (answers.echoes_id's ``"id" in answer``)."""
    item, answers = reference("protocol/id-not-an-integer")
    assert json.loads(answers[5])["id"] is None
    verdict = judge_check(item, edited(answers, 5, id=...))
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 5)
    assert "answered with id no id, expected null" in verdict.message


@pytest.mark.parametrize("value", [1.0, True])
def test_spec_3_2_check_judge_refuses_a_hello_protocol_that_is_not_the_integer_1(value):
    """SPEC.md §3.2: hello's answer carries the integer 1 (check_answers._outcome_fault)."""
    item, answers = reference("protocol/hello-repeated")
    verdict = judge_check(item, edited(answers, 4, protocol=value))
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 4)
    assert "hello answered protocol" in verdict.message


@pytest.mark.parametrize(("index", "value"), [(5, 1), (1, 1), (5, "true")])
def test_spec_3_2_check_judge_refuses_an_ok_that_is_not_a_boolean(index, value):
    """SPEC.md §3.2: ``ok`` is true or false; ``1`` is a number (check_answers._outcome_fault)."""
    item, answers = reference("protocol/hello-repeated")
    verdict = judge_check(item, edited(answers, index, ok=value))
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, index)
    assert "not true or false" in verdict.message


def test_spec_3_3_check_judge_refuses_ok_0_on_a_refusal():
    """SPEC.md §3.3: a refusal's ``ok`` is false; ``0`` beside the right error kind is not."""
    item, answers = reference("protocol/hello-protocol-true")
    assert json.loads(answers[0])["ok"] is False
    verdict = judge_check(item, edited(answers, 0, ok=0))
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 0)


def test_spec_3_2_check_judge_refuses_victims_true_for_1():
    """SPEC.md §3.2: victims are integers: ``[1.0]`` and ``[true]`` for the expected ``[1]``."""
    item, answers = reference("protocol/hello-repeated")
    assert json.loads(answers[5])["victims"] == [1]
    for victims in ([1.0], [True]):
        verdict = judge_check(item, edited(answers, 5, victims=victims))
        assert (verdict.verdict, verdict.call_index) == (verdicts.WRONG_VICTIMS, 5), victims


@pytest.fixture(scope="module")
def evicts_zero_check():
    """A check whose evict's victims are [0] (two null steps tie: the lower goes first)."""
    line = '{{"id":{},"op":"{}"{}}}\n'.format
    params_text = json.dumps(params(1, 0, 1, 1), separators=(",", ":"))
    draft = CheckDraft(
        "rules-evicts-zero",
        "SPEC.md §3.2: victims is a list of integers",
        "Two null steps tie and the lower is evicted: victims [0].",
        "victims written as floats or booleans",
        (
            line(1, "hello", ',"protocol":1'),
            line(2, "new", f',"params":{params_text},"seed":0'),
            line(3, "step", ',"pos":0,"attn":null'),
            line(4, "step", ',"pos":1,"attn":null'),
            line(5, "evict", ""),
        ),
        ("ok",) * 5,
    )
    item = realize(draft)
    assert item.expect[4]["victims"] == [0]
    return item


@pytest.mark.parametrize("victims", [[0.0], [False]])
def test_spec_3_2_check_judge_refuses_victims_zero_of_the_wrong_json_type(
    evicts_zero_check, victims
):
    """SPEC.md §3.2: ``[0.0]`` and ``[false]`` equal ``[0]`` in Python; they are not a list of
    integers (check_answers._outcome_fault's victims same_integer)."""
    answers = reference_answers(evicts_zero_check.payload)
    assert judge_check(evicts_zero_check, answers).passed
    verdict = judge_check(evicts_zero_check, edited(answers, 4, victims=victims))
    assert (verdict.verdict, verdict.call_index) == (verdicts.WRONG_VICTIMS, 4)


def test_spec_3_2_check_judge_fails_exit_status_1_at_end_of_input():
    """SPEC.md §3.2: end of input ends the session with exit status 0; every answer right and
    then status 1 is a failure (judge_check's last exit status test)."""
    item, answers = reference("protocol/crlf")
    verdict = judge_check(item, answers, exit_status=1)
    assert verdict.verdict == verdicts.CRASH
    assert "status 0, not 1" in verdict.message


# -- validation (SPEC.md §4.2, §4.3) --------------------------------------------------------------


def vector_text(top: dict[str, Any], calls: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "format": "snapkv-vector/1",
            "id": "rules/validation",
            "description": "A vector for the judge-rule tests. Catches: nothing.",
            "tags": ["ties"],
            **top,
            "calls": calls,
        }
    )


def problems_of(text: str) -> list[tuple[str, str]]:
    return [(p.pointer, p.reason) for p in check_document(text, None)[1]]


#: Even poolKernel: the construction is refused with invalid-params (SPEC.md §2.1).
REFUSED = params(2, 1, 2, 2)


def test_spec_4_2_validation_refuses_a_refused_new_followed_by_one_call():
    """SPEC.md §4.2: a vector whose construction is refused has no other call, not even one:
    the adapter would still hold the previous vector's policy."""
    new = {"op": "new", "params": REFUSED, "seed": 0, "expect": {"error": "invalid-params"}}
    assert problems_of(vector_text({"params": REFUSED, "seed": 0}, [new])) == []
    one_more = [new, {"op": "evict", "expect": {"victims": []}}]
    problems = problems_of(vector_text({"params": REFUSED, "seed": 0}, one_more))
    assert any(
        pointer == "/calls/1" and "must have no other call" in reason
        for pointer, reason in problems
    ), problems


@pytest.mark.parametrize(
    ("top", "first", "name"),
    [
        ({"seed": 0}, {"seed": False}, "seed"),
        ({"seed": 1}, {"seed": True}, "seed"),
        ({"seed": 1}, {"seed": 1.0}, "seed"),
        ({"params": {**REFUSED, "budget": 1}}, {"params": {**REFUSED, "budget": True}}, "params"),
        ({"params": {**REFUSED, "budget": 2}}, {"params": {**REFUSED, "budget": 2.0}}, "params"),
    ],
)
def test_spec_4_3_validation_compares_params_and_seed_as_json(top, first, name):
    """SPEC.md §4.3: the first new's params and seed equal the top-level ones as JSON values:
    ``false`` is not ``0`` and ``1.0`` is not ``1`` (validation.rule_problems' _same_json).
    The new is refused (even poolKernel), so the schema lets it hold any value."""
    top = {"params": REFUSED, "seed": 0, **top}
    new = {"op": "new", **top, **first, "expect": {"error": "invalid-params"}}
    problems = problems_of(vector_text(top, [new]))
    assert (f"/calls/0/{name}", f"differs from the top-level {name}") in problems, problems
    same = {"op": "new", **top, "expect": {"error": "invalid-params"}}
    assert problems_of(vector_text(top, [same])) == []


def test_the_rewritten_adapter_with_nothing_rewritten_passes(evicts_zero):
    """The adapter the runner tests use is the reference but for the one field it rewrites."""
    result = run_one(evicts_zero, rewritten("scores", "positions", "[]"))
    assert result.passed, result.message


def test_answers_of_is_the_reference(evicts_zero):
    assert checker.judge(evicts_zero, answers_of(evicts_zero)).passed


# -- scores answers in a protocol check (SPEC.md §2.5, §3.2) ------------------------------------

#: The answers of protocol/scores-kept-positions that are scores: before any step, with five
#: kept, and after the evict that leaves 1, 3 and 4 (3 and 4 the protected recent entries).
EMPTY, FIVE, AFTER = 2, 8, 10


def scores_edited(index: int, **lists: list[Any]) -> Judged:
    item, answers = reference("protocol/scores-kept-positions")
    assert [json.loads(answers[i])["positions"] for i in (EMPTY, FIVE, AFTER)] == [
        [],
        [0, 1, 2, 3, 4],
        [1, 3, 4],
    ]
    answer = json.loads(answers[index])
    for name, values in lists.items():
        answer[name] = values
    answers[index] = json.dumps(answer).encode()
    return judge_check(item, answers)


def scores_of(index: int) -> dict[str, list[Any]]:
    _, answers = reference("protocol/scores-kept-positions")
    answer = json.loads(answers[index])
    return {name: answer[name] for name in ("positions", "sums", "pooled")}


def test_spec_3_2_check_judge_fails_scores_lists_of_unequal_length():
    """SPEC.md §3.2: positions, sums and pooled are all three of the same length."""
    pooled = scores_of(FIVE)["pooled"]
    verdict = scores_edited(FIVE, pooled=pooled[:-1])
    assert (verdict.verdict, verdict.call_index, verdict.op) == (
        verdicts.PROTOCOL_ERROR,
        FIVE,
        "scores",
    )
    assert "scores has 5 positions but 4 pooled" in verdict.message


@pytest.mark.parametrize(
    ("name", "values", "words"),
    [
        ("positions", [1.0, 3.0, 4.0], "positions must be a list of integers"),
        ("positions", [1, 3, True], "positions must be a list of integers"),
        ("sums", ["0.5", 0.0, 0.0], "sums must be a list of numbers"),
        ("pooled", None, "pooled must be a list of numbers"),
    ],
)
def test_spec_2_5_check_judge_fails_scores_of_the_wrong_json_type(name, values, words):
    """SPEC.md §2.5, §1: positions are integers (1.0 and true are not), scores numbers."""
    verdict = scores_edited(AFTER, **{name: values})
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, AFTER)
    assert words in verdict.message


def test_spec_2_5_check_judge_fails_scores_without_the_protected_recent_entries():
    """SPEC.md §2.5: the protected recent entries are scored too. A port that scores only
    the candidates lists 0, 1 and 2 of the five kept, each with its own sum and pooled score."""
    five = scores_of(FIVE)
    verdict = scores_edited(FIVE, **{name: values[:3] for name, values in five.items()})
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, FIVE)
    assert "leave out the kept position(s) [3, 4], the newest" in verdict.message


def test_spec_2_5_check_judge_fails_scores_positions_not_ascending():
    """SPEC.md §2.5: the kept positions ascending, each list in the same order."""
    after = scores_of(AFTER)
    verdict = scores_edited(AFTER, **{name: values[::-1] for name, values in after.items()})
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, AFTER)
    assert "put 3 after 4" in verdict.message
    repeated = {name: [values[0], *values[:2]] for name, values in after.items()}
    assert "put 1 after 1" in scores_edited(AFTER, **repeated).message


def test_spec_2_5_check_judge_fails_an_evicted_position_still_scored():
    """SPEC.md §2.5: only kept positions: 0, evicted by the evict before, is not one."""
    after = scores_of(AFTER)
    stale = {name: [values[0], *values] for name, values in after.items()}
    stale["positions"][0] = 0
    verdict = scores_edited(AFTER, **stale)
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, AFTER)
    assert "list [0], which are not kept" in verdict.message


def test_spec_3_5_scores_check_asks_an_adapter_without_the_capability_for_unsupported():
    """SPEC.md §3.5, §3.3: an adapter that does not announce scores passes the check by
    refusing every scores request as unsupported; one that announces it may not refuse."""
    item, answers = reference("protocol/scores-kept-positions")
    hello = json.loads(answers[0])
    without = [json.dumps({**hello, "capabilities": []}).encode(), *answers[1:]]
    for index in (EMPTY, FIVE, AFTER):
        refused = {"id": index + 1, "ok": False, "error": {"kind": "unsupported", "message": ""}}
        without[index] = json.dumps(refused).encode()
    assert judge_check(item, without).passed
    announced = [answers[0], *without[1:]]
    verdict = judge_check(item, announced)
    assert (verdict.verdict, verdict.call_index) == (verdicts.UNEXPECTED_REFUSAL, EMPTY)
    answered = [without[0], *answers[1:]]
    verdict = judge_check(item, answered)
    assert (verdict.verdict, verdict.call_index) == (verdicts.UNEXPECTED_SUCCESS, EMPTY)


def test_spec_2_5_a_scores_verdict_carries_its_evidence_and_says_which_rule():
    """SPEC.md §2.5, §3.2: a malformed scores answer's verdict carries what was expected (the
    kept positions) and what came (the answer's three lists, as sent), and its message says
    which rule broke, in words a porter can act on: the shape rule with its section, the order
    rule, the newest (protected) entries left out, and both faults when both are there."""
    five, after = scores_of(FIVE), scores_of(AFTER)

    short = scores_edited(FIVE, pooled=five["pooled"][:-1])
    assert short.expected == {"positions": [0, 1, 2, 3, 4]}
    assert short.actual == {**five, "pooled": five["pooled"][:-1]}
    assert short.message.endswith(
        "(SPEC.md §3.2: one position, sum and pooled score per kept position)"
    )

    backwards = {name: values[::-1] for name, values in after.items()}
    reversed_verdict = scores_edited(AFTER, **backwards)
    assert reversed_verdict.expected == {"positions": [1, 3, 4]}
    assert reversed_verdict.actual == backwards
    assert reversed_verdict.message.endswith(
        "scores positions [4, 3, 1] put 3 after 4: they are the kept positions in ascending "
        "order, not in rank or insertion order"
    )

    candidates = {name: values[:3] for name, values in five.items()}
    left_out = scores_edited(FIVE, **candidates)
    assert left_out.actual == candidates
    assert left_out.message.endswith(
        "scores positions [0, 1, 2], expected the kept positions [0, 1, 2, 3, 4]: they leave "
        "out the kept position(s) [3, 4], the newest: the protected recent entries are scored "
        "too"
    )

    middle = {name: [values[0], values[2]] for name, values in after.items()}  # 3 left out
    assert scores_edited(AFTER, **middle).message.endswith(
        "scores positions [1, 4], expected the kept positions [1, 3, 4]: they leave out the "
        "kept position(s) [3]"
    )

    both = {name: [values[0], *values[:1], *values[2:]] for name, values in after.items()}
    both["positions"][0] = 0  # [0, 1, 4]: 0 was evicted, 3 is missing
    assert scores_edited(AFTER, **both).message.endswith(
        "scores positions [0, 1, 4], expected the kept positions [1, 3, 4]: they leave out the "
        "kept position(s) [3] and list [0], which are not kept (evicted, or never admitted)"
    )


# -- what is held of an answer until its vector is judged -----------------------------------------


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


# -- victims held bounded: a list no batch could make right is held cut ------------------------
def test_a_list_within_the_room_is_held_whole() -> None:
    answer = {"id": 4, "ok": True, "victims": [0, 1, 2]}
    assert held_victims(answer, 3) == (answer, 0)
    assert held_victims(answer, None) == (answer, None)


def test_a_list_past_the_room_is_held_cut_with_what_judging_needs() -> None:
    victims = list(range(300_000))
    held, room = held_victims({"id": 4, "ok": True, "victims": victims}, 10)
    cut = held["victims"]
    assert isinstance(cut, CutVictims) and len(cut) == 1_000 and cut.total == 300_000
    assert cut.disorder is None and room == 10 - 300_000
    assert cut_victims([*range(5_000), 7]).disorder == (4_999, 7)
    assert cut_victims([*range(5_000), "x"])[-1] == "x"  # what is not an integer is kept


def vector_evicting_one() -> object:
    new = {"op": "new", "params": params(1, 0, 1, 1), "seed": 0}
    steps = [{"op": "step", "pos": 0, "attn": None}, {"op": "step", "pos": 1, "attn": [1.0]}]
    return reference_vector("cut/one", [new, *steps, {"op": "evict"}])


def verdict_for(victims: list) -> object:
    vector = vector_evicting_one()
    answers = [{"id": index, "ok": True} for index in range(3)]
    return judge(vector, [*answers, {"id": 3, "ok": True, "victims": victims}])  # type: ignore[arg-type]


def test_a_cut_list_is_judged_by_the_rule_the_whole_list_breaks() -> None:
    """Strictly ascending but longer than what is kept: some are not kept; out of order
    beyond what is held: not ascending; not integers: not integers."""
    long = verdict_for(cut_victims(list(range(300_000))))
    assert (long.verdict, long.rule) == (BROKEN_INVARIANT, NOT_KEPT)  # type: ignore[attr-defined]
    assert "position 2, which is not currently kept" in long.message  # type: ignore[attr-defined]
    late = cut_victims([*range(5_000), 3])
    disorder = verdict_for(late)
    assert disorder.rule == NOT_ASCENDING  # type: ignore[attr-defined]
    assert "put 3 after 4999" in disorder.message  # type: ignore[attr-defined]
    stray = verdict_for(cut_victims([*range(2_000), None]))
    assert stray.rule == NOT_INTEGERS  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":7,"ok":true}\n',
        b'{"id":7,"ok":true,"victims":[]}\n',
        b'{"id":7,"ok":true,"victims":[0]}\n',
        b'{"id":7,"ok":true,"victims":[3,1,2147483647,9999999999999999999]}\n',
        b'{"id":7,"ok":true,"victims":[1,1]}\n',  # judged later: kept as written
        # longer than the compact reading takes (a flood): the decoder's, alike
        b'{"id":7,"ok":true,"victims":[' + b",".join(b"%d" % k for k in range(20_000)) + b"]}\n",
    ],
    ids=["ok", "no-victims", "one", "four", "repeated", "over-64-KiB"],
)
def test_a_compact_answer_is_read_as_the_decoder_reads_it(line):
    got = read_answer(line, 2, 5, 1)
    assert got == held(decode_answer(line))
    assert repr(got) == repr(decode_answer(line))


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":8,"ok":true,"victims":[1]}\n',  # another id
        b'{"id":7,"ok":true,"victims":[01]}\n',
        b'{"id":7,"ok":true,"victims":[1.0]}\n',
        b'{"id":7,"ok":true,"victims":[-1]}\n',
        b'{"id":7,"ok":true,"victims":[12345678901234567890]}\n',
        b'{"id":7,"ok":true,"victims":[1]}\r\n',
        b'{"id":7,"ok":true,"victims":[1],"victims":[2]}\n',
        b'{"id":7,"ok":true,"victims":[1]} \n',
    ],
)
def test_any_other_answer_is_read_by_the_decoder(line):
    got = read_answer(line, 2, 5, 1)
    decoded = decode_answer(line)
    if isinstance(decoded, dict) and decoded.get("id") == 7:
        assert got == held(decoded) and repr(got) == repr(held(decoded))
    else:
        assert not isinstance(got, dict) or got != {"id": 7, "ok": True, "victims": [1]}

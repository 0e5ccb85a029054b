"""conformance.judge.check_answers: a wrong victims list gets the same verdict, and names the same
rule, whether a vector or a protocol check receives it."""

from __future__ import annotations

import json

from conformance.judge import checker, verdicts
from conformance.judge.check_answers import VICTIMS_ASCENDING, judge_check
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from conformance.suite.validation import reference_answers
from conformance.suite.vectors import load_suite

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

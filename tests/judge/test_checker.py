"""The checker judges answers on their own terms first, then against the reference's.

Answers here are the reference's own (from an in-process session), edited to plant exactly one
fault, so each test shows one verdict and nothing else.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import mutants
from conformance.adapter.server import Session
from conformance.explain import diagnosis
from conformance.judge import checker, outcomes, verdicts
from conformance.judge.answers import cut_victims
from conformance.judge.outcomes import (
    DIES,
    MALFORMED,
    answer_outcome,
    answer_outcomes,
    expected_outcomes,
)
from conformance.policy.reference import SnapKV, float32_literal
from conformance.runner.client import Client
from conformance.runner.results import VectorResult
from conformance.spec.text import KEEP_ITEMS, catches_of
from conformance.suite.vectors import Vector
from conformance.transport.failures import AdapterFailure
from conformance.transport.in_process import InProcessAdapter
from tests.support.runner_support import params, reference_vector, workload


def answers_of(vector: Vector, factory: Any = None) -> list[dict[str, Any]]:
    """What an in-process session of ``factory`` (the reference by default) answers."""
    adapter = Client(InProcessAdapter(factory))
    adapter.start()
    return adapter.exchange([call.request for call in vector.calls])


def evict_indices(vector: Vector) -> list[int]:
    return [i for i, call in enumerate(vector.calls) if call.op == "evict"]


@pytest.fixture(scope="module")
def vector() -> Vector:
    # budget 4, recentWindow 2: evicts leave 4 kept, the 2 newest protected.
    return workload("checker/workload", params(4, 2, 3, 3), range(0, 30, 2), seed=3, evict_every=3)


@pytest.fixture
def answers(vector: Vector) -> list[dict[str, Any]]:
    return answers_of(vector)


def first_multi_victim_evict(vector: Vector) -> int:
    return next(i for i in evict_indices(vector) if len(vector.calls[i].expected_victims) >= 2)


def judge_with(vector: Vector, answers: list[dict[str, Any]], index: int, **fields: Any):
    edited = copy.deepcopy(answers)
    edited[index].update(fields)
    return checker.judge(vector, edited)


def test_the_reference_passes(vector, answers):
    result = checker.judge(vector, answers)
    assert result.verdict == verdicts.PASS
    assert result.passed and result.call_index is None and result.message == ""


@pytest.mark.parametrize(
    ("victims", "rule"),
    [
        ("3", verdicts.NOT_INTEGERS),
        ([True], verdicts.NOT_INTEGERS),
        ([1.0], verdicts.NOT_INTEGERS),
        (None, verdicts.NOT_INTEGERS),
    ],
)
def test_victims_that_are_not_a_list_of_integers(vector, answers, victims, rule):
    index = first_multi_victim_evict(vector)
    result = judge_with(vector, answers, index, victims=victims)
    assert (result.verdict, result.rule, result.call_index) == (
        verdicts.BROKEN_INVARIANT,
        rule,
        index,
    )
    assert result.op == "evict"
    assert "list of integers" in result.message


def test_victims_descending_or_repeated(vector, answers):
    index = first_multi_victim_evict(vector)
    expected = vector.calls[index].expected_victims
    result = judge_with(vector, answers, index, victims=expected[::-1])
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.NOT_ASCENDING)
    assert result.expected == expected and result.actual == expected[::-1]
    repeated = [expected[0], expected[0]]
    result = judge_with(vector, answers, index, victims=repeated)
    assert result.rule == verdicts.NOT_ASCENDING
    assert f"repeat position {expected[0]}" in result.message


def test_victim_not_currently_kept(vector, answers):
    index = first_multi_victim_evict(vector)
    expected = vector.calls[index].expected_victims
    never_admitted = 1  # the workload admits even positions only
    victims = sorted([never_admitted, *expected[1:]])
    result = judge_with(vector, answers, index, victims=victims)
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.NOT_KEPT)
    assert "position 1, which is not currently kept" in result.message


def test_victim_already_evicted_is_not_kept(vector, answers):
    evicts = [i for i in evict_indices(vector) if vector.calls[i].expected_victims]
    first, second = evicts[0], evicts[1]
    gone = vector.calls[first].expected_victims[0]
    victims = sorted({gone, *vector.calls[second].expected_victims[1:]})
    result = judge_with(vector, answers, second, victims=victims)
    assert result.rule == verdicts.NOT_KEPT
    assert f"position {gone}," in result.message


def test_protected_recent_entry_evicted(vector, answers):
    index = first_multi_victim_evict(vector)
    expected = vector.calls[index].expected_victims
    kept = diagnosis.expected_state(vector, index).kept
    newest = kept[-1]  # one of the recentWindow 2 protected entries
    victims = sorted([*expected[1:], newest])
    result = judge_with(vector, answers, index, victims=victims)
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.PROTECTED_EVICTED)
    assert f"evicted [{newest}]" in result.message and "recentWindow 2" in result.message


@pytest.mark.parametrize("change", [-1, +1])
def test_wrong_count(vector, answers, change):
    index = first_multi_victim_evict(vector)
    expected = vector.calls[index].expected_victims
    kept = diagnosis.expected_state(vector, index).kept
    if change < 0:
        victims = expected[:-1]
    else:
        spare = next(p for p in kept[:-2] if p not in expected)
        victims = sorted([*expected, spare])
    result = judge_with(vector, answers, index, victims=victims)
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, verdicts.WRONG_COUNT)
    assert f"budget 4) = {len(expected)}" in result.message


def test_wrong_victims_when_every_invariant_holds(vector, answers):
    index = first_multi_victim_evict(vector)
    expected = vector.calls[index].expected_victims
    kept = diagnosis.expected_state(vector, index).kept
    other = next(p for p in kept[:-2] if p not in expected)
    victims = sorted([*expected[1:], other])
    result = judge_with(vector, answers, index, victims=victims)
    assert result.verdict == verdicts.WRONG_VICTIMS
    assert (result.expected, result.actual) == (expected, victims)
    assert f"[{other}] should have been kept" in result.message
    assert f"[{expected[0]}] should have been evicted" in result.message


# -- refusals ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def refusing() -> Vector:
    """A vector with refusals: a negative weight, a position going back, then good steps."""
    return reference_vector(
        "checker/refusals",
        [
            {"op": "new", "params": params(2, 0, 2, 1), "seed": 0},
            {"op": "step", "pos": 3, "attn": None},
            {"op": "step", "pos": 4, "attn": [-0.5]},
            {"op": "step", "pos": 2, "attn": [0.5]},
            {"op": "step", "pos": 4, "attn": [0.5]},
            {"op": "step", "pos": 6, "attn": [0.25, 0.5]},
            {"op": "evict"},
        ],
    )


def test_refusal_expectations_come_from_the_reference(refusing):
    assert [c.expected_error for c in refusing.calls] == [
        None,
        None,
        "invalid-attention",
        "invalid-position",
        None,
        None,
        None,
    ]
    assert checker.judge(refusing, answers_of(refusing)).verdict == verdicts.PASS


def refusal(kind: str, message: str = "no") -> dict[str, Any]:
    return {"ok": False, "error": {"kind": kind, "message": message}}


def test_wrong_error_kind(refusing):
    answers = answers_of(refusing)
    answers[2] = {"id": answers[2]["id"], **refusal("invalid-position", "pos bad")}
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index, result.op) == (verdicts.WRONG_ERROR_KIND, 2, "step")
    assert result.expected == {"error": "invalid-attention"}
    assert result.actual == {"error": "invalid-position", "message": "pos bad"}


def test_unexpected_success(refusing):
    answers = answers_of(refusing)
    answers[3] = {"id": answers[3]["id"], "ok": True}
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index) == (verdicts.UNEXPECTED_SUCCESS, 3)
    assert "must be refused with invalid-position" in result.message


def test_unexpected_refusal(refusing):
    answers = answers_of(refusing)
    answers[6] = {"id": answers[6]["id"], **refusal("no-policy", "lost it")}
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index) == (verdicts.UNEXPECTED_REFUSAL, 6)
    assert result.expected == {"victims": refusing.calls[6].expected_victims}
    assert "no-policy (lost it)" in result.message


def test_a_refused_step_is_not_tracked_as_kept(refusing):
    # Position 2 was refused; an adapter that evicts it evicts something it does not keep.
    answers = answers_of(refusing)
    victims = answers[6]["victims"]
    answers[6]["victims"] = sorted([2, *victims[1:]])
    assert checker.judge(refusing, answers).rule == verdicts.NOT_KEPT


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (refusal("invalid-weights"), '"invalid-weights" is not one of protocol v1\'s kinds'),
        ({"ok": False, "error": "bad"}, "must carry an error object"),
        ({"ok": False, "error": {"kind": "invalid-attention"}}, "no string message"),
        ({"ok": "yes"}, "no boolean ok"),
        ({}, "no boolean ok"),
    ],
)
def test_protocol_errors_in_answers(refusing, answer, words):
    answers = answers_of(refusing)
    answers[2] = {"id": answers[2]["id"], **answer}
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index) == (verdicts.PROTOCOL_ERROR, 2)
    assert words in result.message


def test_evict_answer_without_victims(refusing):
    answers = answers_of(refusing)
    del answers[6]["victims"]
    result = checker.judge(refusing, answers)
    assert (result.verdict, result.call_index) == (verdicts.PROTOCOL_ERROR, 6)
    assert "no victims" in result.message


def test_extra_fields_in_answers_are_allowed(refusing):
    answers = answers_of(refusing)
    for answer in answers:
        answer["elapsed_us"] = 3
    assert checker.judge(refusing, answers).passed


# -- adapter failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "verdict"),
    [
        ("crash", verdicts.CRASH),
        ("timeout", verdicts.TIMEOUT),
        ("protocol", verdicts.PROTOCOL_ERROR),
    ],
)
def test_a_failure_becomes_the_verdict_at_its_call(refusing, kind, verdict):
    answers = answers_of(refusing)
    failure = AdapterFailure(kind, 4, "went away", "last words", answers=answers[:4], exit_status=9)
    result = checker.judge(refusing, answers[:4], failure=failure)
    assert (result.verdict, result.call_index, result.op) == (verdict, 4, "step")
    assert result.message == "went away"
    assert not hasattr(result, "stderr_tail")  # the runner's to record, not the verdict's
    assert result.exit_status == 9


def test_a_wrong_answer_before_the_failure_is_reported_first(refusing):
    answers = answers_of(refusing)[:5]
    answers[3] = {"id": answers[3]["id"], "ok": True}
    failure = AdapterFailure("crash", 5, "the adapter exited", answers=answers)
    result = checker.judge(refusing, answers, failure=failure)
    assert (result.verdict, result.call_index) == (verdicts.UNEXPECTED_SUCCESS, 3)
    assert "then failed: the adapter exited" in result.message


def test_missing_answers_without_a_failure(refusing):
    result = checker.judge(refusing, answers_of(refusing)[:3])
    assert result.verdict == verdicts.PROTOCOL_ERROR
    assert "3 answers to 7 calls" in result.message


def test_describe_is_one_line_with_id_call_and_verdict(refusing):
    answers = answers_of(refusing)
    answers[3] = {"id": answers[3]["id"], "ok": True}
    line = VectorResult(checker.judge(refusing, answers)).describe()
    assert "\n" not in line
    assert line.startswith("checker/refusals: call 3 (step): unexpected-success: ")


# -- diagnosis -----------------------------------------------------------------------------------


#: Catalogued mutants: ties broken toward the higher position; ring sums in a float32 accumulator.
TIES_TO_HIGHER = mutants.lookup("ties-to-higher-position").policy
FLOAT32_SUMS = mutants.lookup("float32-accumulation").policy


def diagnosis_for(vector: Vector, factory: Any) -> tuple[verdicts.Verdict, str]:
    result = checker.judge(vector, answers_of(vector, factory))
    assert result.verdict == verdicts.WRONG_VICTIMS
    adapter = Client(InProcessAdapter(factory))
    adapter.start()
    requests = diagnosis.diagnosis_requests(vector, result.call_index)
    assert [r["op"] for r in requests[-2:]] == ["scores", "evict"]
    assert sum(r["op"] == "scores" for r in requests) == 1
    answers = adapter.exchange(requests)
    return result, diagnosis.diagnose(vector, result.call_index, answers, result.actual)


def test_diagnosis_of_a_wrong_selection():
    ties = reference_vector(
        "checker/ties",
        [
            {"op": "new", "params": params(2, 0, 4, 1), "seed": 0},
            *({"op": "step", "pos": p, "attn": None} for p in range(3)),
            {"op": "evict"},
        ],
    )
    result, text = diagnosis_for(ties, TIES_TO_HIGHER)
    assert result.expected == [0] and result.actual == [2]
    assert "Its selection is wrong" in text
    assert "the lowest candidate by (pooled, position) is [0], but it evicted [2]" in text
    assert "Its scores equal the reference's at every kept position." in text


def test_diagnosis_names_the_first_differing_sum_exactly():
    # Position 0 gets 1 + 2^-30 (1.0 in float32), position 1 gets 1.0; position 2 is protected.
    # In float64 position 1 is lower; in float32 they tie and position 0 goes.
    one, tiny = float32_literal(1.0), float32_literal(2.0**-30)
    config = params(2, 1, 4, 1)
    requests = [
        {"op": "new", "params": config, "seed": 0},
        {"op": "step", "pos": 0, "attn": None},
        {"op": "step", "pos": 1, "attn": [one]},
        {"op": "step", "pos": 2, "attn": [tiny, one]},
        {"op": "evict"},
    ]
    vector = reference_vector("checker/float32-sums", requests)
    ours, theirs = SnapKV(config), FLOAT32_SUMS(config)
    for policy in (ours, theirs):
        for request in requests[1:-1]:
            policy.step(request["pos"], request["attn"])
    reference, mutant = ours.scores(), theirs.scores()
    pairs = zip(mutant.sums, reference.sums, strict=True)
    first = next(i for i, (a, b) in enumerate(pairs) if a != b)
    _, text = diagnosis_for(vector, FLOAT32_SUMS)
    assert "so look at the scores" in text
    assert (
        f"the sum of position {reference.positions[first]} (kept index {first}): "
        f"adapter {diagnosis.exact(mutant.sums[first])}, "
        f"reference {diagnosis.exact(reference.sums[first])}"
    ) in text


def test_diagnosis_reports_a_refused_scores():
    vector = workload("checker/d", params(2, 0, 2, 1), range(4), seed=1)
    index = evict_indices(vector)[-1]
    answers = [{"ok": True}] * index + [refusal("unsupported", "no scores here"), {"ok": True}]
    text = diagnosis.diagnose(vector, index, answers)
    assert text.startswith("no diagnosis: the adapter announced scores but refused it")


@pytest.mark.parametrize("name", ["sums", "pooled"])
def test_diagnosis_of_a_score_beyond_float64_is_no_diagnosis_not_a_crash(name):
    # JSON allows an integer of any length; 10^400 has no float64, so it cannot be compared.
    ties = reference_vector(
        "checker/huge-score",
        [
            {"op": "new", "params": params(2, 0, 4, 1), "seed": 0},
            *({"op": "step", "pos": p, "attn": None} for p in range(3)),
            {"op": "evict"},
        ],
    )
    index = evict_indices(ties)[-1]
    answers = Client(InProcessAdapter(SnapKV))
    answers.start()
    replies = answers.exchange(diagnosis.diagnosis_requests(ties, index))
    replies[index] = {**replies[index], name: [10**400, *replies[index][name][1:]]}
    text = diagnosis.diagnose(ties, index, replies)
    assert text.startswith(f"no diagnosis: scores {name} must be a list of numbers")


def test_exact_writes_repr_and_hex():
    assert diagnosis.exact(0.1) == "0.1 (0x1.999999999999ap-4)"


def test_session_answers_match_the_in_process_adapter(vector):
    session = Session()
    direct = [session.handle({**c.request, "id": 0}) for c in vector.calls]
    assert [{**answer, "id": 0} for answer in answers_of(vector)] == direct


def test_a_failure_names_what_the_vector_catches(vector, answers):
    described = Vector(
        vector.id,
        "Pins one eviction. Catches: ties broken toward the higher position.",
        vector.tags,
        vector.params,
        vector.seed,
        vector.calls,
    )
    index = evict_indices(described)[-1]
    wrong = judge_with(described, answers, index, victims=[-1])
    catches, elsewhere = diagnosis.explained(described, wrong)
    assert not wrong.passed
    assert catches == "ties broken toward the higher position."
    shown = VectorResult(wrong, catches=catches, elsewhere=elsewhere).to_json()
    assert shown["catches"] == catches
    assert diagnosis.explained(described, checker.judge(described, answers))[0] == ""


def test_catches_is_empty_for_a_description_without_the_marker():
    assert catches_of("Pins something, names nothing.") == ""


# -- judging as the answers come ------------------------------------------------------------


@contextlib.contextmanager
def held_at_most(count: int) -> Iterator[None]:
    """Judging keeps at most ``count`` answers as they are, then their outcomes only."""
    original = checker.Judging.HOLD
    checker.Judging.HOLD = count
    try:
        yield
    finally:
        checker.Judging.HOLD = original


@settings(max_examples=80, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 48), max_size=6),
    wrong=st.one_of(st.none(), st.integers(1, 44)),
    cut_short=st.one_of(st.none(), st.integers(0, 44)),
    extra=st.integers(0, 2),
    failure=st.sampled_from([None, "crash", "protocol"]),
    hold=st.integers(1, 50),
)
def test_judging_in_batches_is_judging_at_once(cuts, wrong, cut_short, extra, failure, hold):
    """SPEC.md §4.2: a vector's verdict is its first wrong answer's, however the answers
    arrive. Fed in any batches, held whole or kept as outcomes past ``HOLD``, the verdict
    (its call, evidence and outcomes) is the one judging all the answers at once gives, and a
    failing verdict's outcomes are each answer's own (``answer_outcomes``)."""
    vector = workload("checker/batches", params(4, 2, 3, 3), range(0, 60, 2), seed=3, evict_every=2)
    answers = answers_of(vector)
    assert len(answers) == len(vector.calls) > 45
    if wrong is not None:  # a wrong answer to one call
        answers[wrong] = (
            {"id": wrong, "ok": True, "victims": [10**6]}
            if vector.calls[wrong].op == "evict"
            else {"id": wrong, "ok": False, "error": {"kind": "invalid-position", "message": ""}}
        )
    if cut_short is not None:
        answers = answers[:cut_short]
    answers += [{"id": 99, "ok": True}] * extra  # answered more often than asked
    cut = None
    if failure is not None and len(answers) < len(vector.calls):
        cut = AdapterFailure(failure, len(answers), "the adapter stopped", answers=[])
    with held_at_most(10**9):
        expected = checker.judge(vector, answers, failure=cut)
    with held_at_most(hold):
        judging = checker.Judging(vector)
        bounds = sorted({0, len(answers), *(min(c, len(answers)) for c in cuts)})
        for start, end in itertools.pairwise(bounds):
            judging.feed(answers[start:end])
        got = judging.verdict(cut)
    assert got == expected and got.answers == expected.answers
    if not expected.passed:
        kind = cut.kind if cut is not None else None
        assert expected.answers == outcomes.answer_outcomes(vector, answers, kind)


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


# -- the vector judge (SPEC.md §2-§4) ------------------------------------------------------------


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
    # a local name: hypothesis's given, imported above, is not used in this function
    for given, index in ((n - 1, n - 1), (n - 3, n - 3), (n + 1, n - 1)):  # noqa: F402
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


def test_an_ascending_cut_list_longer_than_the_cache_is_judged_not_kept() -> None:
    """A victims list held cut (longer than any answer could be right) that ascends, every
    item held being a kept position: the rest cannot all be kept, since the list is longer
    than the cache. Not kept, and the message says how many it had against how many are kept,
    and how many were held for the report."""
    count = KEEP_ITEMS + 5
    requests = [
        {"op": "new", "params": params(count, 0, 1, 1), "seed": 0},
        *({"op": "step", "pos": pos, "attn": None} for pos in range(count)),
        {"op": "evict"},
    ]
    vector = reference_vector("checker/cut-all-kept", requests)
    answers: list[dict[str, Any]] = [{"id": index, "ok": True} for index in range(count + 1)]
    cut = cut_victims(list(range(count + 10)))
    result = checker.judge(vector, [*answers, {"id": count + 1, "ok": True, "victims": cut}])
    assert (result.verdict, result.rule) == (verdicts.BROKEN_INVARIANT, checker.NOT_KEPT)  # type: ignore[union-attr]
    assert result.message.endswith(  # type: ignore[union-attr]
        f"evicted 1,015 positions, more than the 1,005 currently kept, so some are not kept (a "
        f"list that long is not held whole: its first {KEEP_ITEMS:,} are kept for this report)"
    )

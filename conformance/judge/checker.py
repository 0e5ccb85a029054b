"""Judging an adapter's answers to one vector (SPEC.md §2-§4).

:func:`judge` walks a vector's calls beside the adapter's answers and returns the first thing
wrong as a :class:`~conformance.judge.verdicts.Verdict`, or, when the exchange broke first, an
:class:`~conformance.judge.verdicts.Errored` (the runner keeps it as it is, its own facts
beside it). Every evict answer is judged on the adapter's own terms before it is compared with the
expectation: the checker tracks which positions the adapter keeps (from the calls it accepted
and the victims it returned) and checks that the victims are a list of integers, strictly
ascending, currently kept, not among the protected recent entries, and exactly as many as the
budget requires. A port that breaks one of those has a bug of its own kind, and saying which
rule it broke is more useful than "wrong victims". What a failure means for the porter (the
scores diagnosis, what the vector pins) is :mod:`conformance.explain.diagnosis`'s to say.

Invariant: pure: a vector and answers in, a frozen result out; the first fault decides.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.judge.answers import CutVictims
from conformance.judge.outcomes import Outcome, answer_outcome, answer_outcomes, cut_short
from conformance.judge.verdicts import (
    BROKEN_INVARIANT,
    CRASH,
    NOT_ASCENDING,
    NOT_INTEGERS,
    NOT_KEPT,
    PASS,
    PROTECTED_EVICTED,
    PROTOCOL_ERROR,
    TIMEOUT,
    UNEXPECTED_REFUSAL,
    UNEXPECTED_SUCCESS,
    WRONG_COUNT,
    WRONG_ERROR_KIND,
    WRONG_VICTIMS,
    Errored,
    Judged,
    Verdict,
    kept,
)
from conformance.spec.protocol import answer_problem, is_integer
from conformance.spec.text import KEEP_TEXT, capped, json_text
from conformance.suite.vectors import Call, Vector

_FAILURE_VERDICTS = {"crash": CRASH, "timeout": TIMEOUT, "protocol": PROTOCOL_ERROR}


class _Failed(Exception):
    """Internal: stop judging with this result."""

    def __init__(self, result: Verdict) -> None:
        super().__init__(result.message)
        self.result = result


class Tracker:
    """The adapter's state as its accepted calls imply it: budget, recent window, kept."""

    def __init__(self) -> None:
        self.budget: int | None = None
        self.recent = 0
        self.kept: list[int] = []

    def new(self, params: Mapping[str, Any]) -> None:
        self.budget = params["budget"]
        self.recent = params["recentWindow"]
        self.kept = []

    def step(self, pos: int) -> None:
        self.kept.append(pos)

    def evict(self, victims: Sequence[int]) -> None:
        gone = set(victims)
        self.kept = [pos for pos in self.kept if pos not in gone]

    @property
    def excess(self) -> int:
        return max(0, len(self.kept) - (self.budget or 0))

    @property
    def protected(self) -> list[int]:
        return self.kept[len(self.kept) - self.recent :] if self.recent else []

    @property
    def candidates(self) -> list[int]:
        return self.kept[: max(0, len(self.kept) - self.recent)]


def judge(
    vector: Vector,
    responses: Sequence[Mapping[str, Any]],
    *,
    failure: Any = None,
) -> Judged:
    """Judge ``responses`` (one per call, in order) to ``vector``'s calls: :class:`Judging`
    given them all at once."""
    judging = Judging(vector)
    judging.feed(responses)
    return judging.verdict(failure)


class Judging:
    """One vector's answers judged as they come, a batch at a time (:meth:`feed`, answers in
    call order), then its :meth:`verdict`: what :func:`judge` finds given them all at once, for
    a long vector whose answers are never all held at once.

    The rules: every answer is judged against its call in order (:func:`_judge_call`, with an
    accepted step, the common case, in a few operations), and the first thing wrong is the
    verdict. A failure also carries the answers' outcomes
    (:func:`conformance.judge.outcomes.answer_outcomes`), the evidence triage compares: the
    answers are kept for them while there are at most :data:`HOLD`, and past that each answer
    is kept as its outcome only. What a failure means for the porter is
    :func:`conformance.explain.diagnosis.explained`'s to say.
    """

    #: How many answers are kept as they are; past this, a vector's answers are kept as
    #: their outcomes (a tuple or a shared constant each), a fraction of their size.
    HOLD = 4096

    def __init__(self, vector: Vector) -> None:
        self.vector = vector
        self._tracker = Tracker()
        self._count = 0  # answers fed
        self._failed: Verdict | None = None
        self._answers: list[Mapping[str, Any]] = []  # while there are at most HOLD
        self._outcomes: list[Outcome] | None = None  # instead of them, past HOLD

    def feed(self, answers: Sequence[Mapping[str, Any]]) -> None:
        """Judge the next ``answers`` (the answers to the calls after those fed so far)."""
        start = self._count
        self._count += len(answers)
        # A long vector's calls are read from its lines here, a batch at a time.
        calls = self.vector.calls[start : start + len(answers)]
        if self._failed is None:
            tracker = self._tracker
            try:
                for index, (call, answer) in enumerate(zip(calls, answers, strict=False), start):
                    if call.expect is None and answer.get("ok") is True:
                        request = call.request
                        if request["op"] == "step":
                            tracker.step(request["pos"])
                            continue
                    _judge_call(self.vector.id, index, call, answer, tracker)
            except _Failed as failed:
                self._failed = failed.result
        if self._outcomes is None:
            self._answers.extend(answers)
            if len(self._answers) <= self.HOLD:
                return
            answers, self._answers = self._answers, []
            calls = self.vector.calls[: len(answers)]
            self._outcomes = []
        self._outcomes.extend(
            answer_outcome(answer, call.op) for call, answer in zip(calls, answers, strict=False)
        )

    def verdict(self, failure: Any = None) -> Judged:
        """The result on the answers fed. ``failure`` is the
        :class:`conformance.transport.failures.AdapterFailure` that cut the exchange short, if
        any (the answers fed are then those that arrived before it): an
        :class:`~conformance.judge.verdicts.Errored` at the first unanswered call, unless a
        wrong answer came before it, which is reported instead (its verdict says the adapter
        then failed). Stderr and timing are the runner's to keep beside it."""
        result = self._result(failure)
        if result.passed:
            return result
        kind = failure and failure.kind
        if self._outcomes is None:
            outcomes = answer_outcomes(self.vector, self._answers, kind)
        else:
            outcomes = cut_short(self._outcomes, len(self.vector.calls), kind)
        return replace(result, answers=outcomes)

    def _result(self, failure: Any) -> Judged:
        vector = self.vector
        if self._failed is not None:
            if failure is not None:
                message = f"{self._failed.message} (the adapter then failed: {failure.detail})"
                return replace(self._failed, message=message)
            return self._failed
        if failure is not None:
            index = failure.call_index
            return Errored(
                vector.id,
                _FAILURE_VERDICTS[failure.kind],
                call_index=index,
                op=vector.calls[index].op if 0 <= index < len(vector.calls) else None,
                message=failure.detail,
                exit_status=failure.exit_status,
            )
        if self._count != len(vector.calls):
            index = min(self._count, len(vector.calls) - 1)
            return Verdict(
                vector.id,
                PROTOCOL_ERROR,
                call_index=index,
                op=vector.calls[index].op,
                message=f"{self._count} answers to {len(vector.calls)} calls",
            )
        return Verdict(vector.id, PASS)


def _judge_call(
    vector_id: str, index: int, call: Call, answer: Mapping[str, Any], tracker: Tracker
) -> None:
    def fail(verdict: str, message: str, *, actual: Any = None, **extra: Any) -> _Failed:
        return _Failed(
            Verdict(
                vector_id,
                verdict,
                call_index=index,
                op=call.op,
                message=message,
                actual=kept(actual),
                **extra,
            )
        )

    problem = answer_problem(answer, call.op)
    if problem is not None:
        raise fail(PROTOCOL_ERROR, problem, actual=_strip_id(answer))
    expected_error = call.expected_error
    if answer["ok"] is not True:
        error = answer["error"]
        said = capped(error["message"], KEEP_TEXT)  # the adapter's words, kept bounded
        refused = {"error": error["kind"], "message": said}
        if expected_error is None:
            raise fail(
                UNEXPECTED_REFUSAL,
                f"refused with {error['kind']} ({said}), but the call must succeed"
                + _victims_note(call),
                expected=dict(call.expect) if call.expect else {"ok": True},
                actual=refused,
            )
        if error["kind"] != expected_error:
            raise fail(
                WRONG_ERROR_KIND,
                f"refused with {error['kind']} ({said}), expected {expected_error}",
                expected={"error": expected_error},
                actual=refused,
            )
        return  # a refused call changes nothing, on the adapter's terms too
    if expected_error is not None:
        raise fail(
            UNEXPECTED_SUCCESS,
            f"succeeded, but the call must be refused with {expected_error}",
            expected={"error": expected_error},
            actual=_strip_id(answer),
        )
    if call.op == "new":
        tracker.new(call.request["params"])
    elif call.op == "step":
        tracker.step(call.request["pos"])
    elif call.op == "evict":
        _judge_victims(answer["victims"], call.expected_victims, tracker, fail)
        tracker.evict(answer["victims"])


def _judge_victims(victims: Any, expected: list[int] | None, tracker: Tracker, fail: Any) -> None:
    def broken(rule: str, message: str) -> _Failed:
        return fail(BROKEN_INVARIANT, message, rule=rule, expected=expected, actual=victims)

    if not isinstance(victims, list) or not all(is_integer(v) for v in victims):
        raise broken(NOT_INTEGERS, f"victims must be a list of integers, got {json_text(victims)}")
    cut = victims if isinstance(victims, CutVictims) else None  # too long to hold whole
    disorder = next(
        ((before, after) for before, after in itertools.pairwise(victims) if after <= before),
        cut.disorder if cut is not None else None,
    )
    if disorder is not None:
        before, after = disorder
        what = f"repeat position {after}" if after == before else f"put {after} after {before}"
        raise broken(NOT_ASCENDING, f"victims must be strictly ascending, but they {what}")
    kept = set(tracker.kept)
    for victim in victims:
        if victim not in kept:
            raise broken(
                NOT_KEPT,
                f"evicted position {victim}, which is not currently kept "
                f"(kept: {show_positions(tracker.kept)})",
            )
    if cut is not None:  # ascending, and more than are kept: some of the rest are not kept
        raise broken(
            NOT_KEPT,
            f"evicted {cut.total:,} positions, more than the {len(kept):,} currently kept, "
            f"so some are not kept (a list that long is not held whole: its first "
            f"{len(cut):,} are kept for this report)",
        )
    protected = tracker.protected
    hit = sorted(set(victims) & set(protected))
    if hit:
        raise broken(
            PROTECTED_EVICTED,
            f"evicted {show_positions(hit)}, among the recentWindow {tracker.recent} "
            f"protected entries {show_positions(protected)}",
        )
    if len(victims) != tracker.excess:
        raise broken(
            WRONG_COUNT,
            f"evicted {len(victims)} position(s), but must evict exactly "
            f"max(0, kept {len(tracker.kept)} - budget {tracker.budget}) = {tracker.excess}",
        )
    if expected is not None and victims != expected:
        given, wanted = set(victims), set(expected)
        missing = [v for v in expected if v not in given]
        extra = [v for v in victims if v not in wanted]
        raise fail(
            WRONG_VICTIMS,
            f"evicted {show_positions(victims)}, expected {show_positions(expected)}: "
            f"{show_positions(extra)} should have been kept, "
            f"{show_positions(missing)} should have been evicted",
            expected=expected,
            actual=victims,
        )


# -- small helpers -----------------------------------------------------------------------------


def _victims_note(call: Call) -> str:
    expected = call.expected_victims
    return "" if expected is None else f" (expected victims {show_positions(expected)})"


def _strip_id(answer: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "id"}


def show_positions(positions: Sequence[int], limit: int = 16) -> str:
    if len(positions) <= limit:
        return "[" + ", ".join(str(p) for p in positions) + "]"
    head = ", ".join(str(p) for p in positions[: limit // 2])
    tail = ", ".join(str(p) for p in positions[-limit // 2 :])
    return f"[{head}, ... {len(positions) - limit} more ..., {tail}]"

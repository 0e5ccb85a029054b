"""Judging an adapter's answers to one vector (SPEC.md §2-§4).

:func:`judge` walks a vector's calls beside the adapter's answers and returns the first thing
wrong as a :class:`Verdict` (the runner adds its record to make a :class:`VectorResult`).
Every evict answer is judged on the adapter's own terms before it is compared with the
expectation: the checker tracks which positions the adapter keeps (from the calls it accepted
and the victims it returned) and checks that the victims are a list of integers, strictly
ascending, currently kept, not among the protected recent entries, and exactly as many as the
budget requires. A port that breaks one of those has a bug of its own kind, and saying which
rule it broke is more useful than "wrong victims".

:func:`diagnosis_requests` and :func:`diagnose` go further for an adapter with the ``scores``
capability: replay the vector up to the failing evict, ask for its scores, and tell whether its
selection disagrees with its own scores or its scores disagree with the reference's, naming
the first position whose sum or pooled score differs, with both values written exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from conformance.judge.answers import CutVictims
from conformance.judge.outcomes import Outcome, answer_outcome, answer_outcomes, cut_short
from conformance.spec.protocol import answer_problem, is_integer
from conformance.spec.text import KEEP_ITEMS, KEEP_TEXT, capped, capped_list, json_text
from conformance.suite.vectors import Call, Vector

#: What a result keeps of an adapter's text and of its lists (see :func:`kept`).

PASS = "pass"
WRONG_VICTIMS = "wrong-victims"
BROKEN_INVARIANT = "broken-invariant"
WRONG_ERROR_KIND = "wrong-error-kind"
UNEXPECTED_SUCCESS = "unexpected-success"
UNEXPECTED_REFUSAL = "unexpected-refusal"
CRASH = "crash"
TIMEOUT = "timeout"
PROTOCOL_ERROR = "protocol-error"
#: Every verdict, in the order reports list them.
VERDICTS = (
    PASS,
    WRONG_VICTIMS,
    BROKEN_INVARIANT,
    WRONG_ERROR_KIND,
    UNEXPECTED_SUCCESS,
    UNEXPECTED_REFUSAL,
    CRASH,
    TIMEOUT,
    PROTOCOL_ERROR,
)
#: The verdicts that mean the adapter process misbehaved (JUnit reports them as errors).
PROCESS_VERDICTS = (CRASH, TIMEOUT, PROTOCOL_ERROR)

#: The invariant rules an evict answer can break (the ``rule`` of a broken-invariant result).
NOT_INTEGERS = "not-integers"
NOT_ASCENDING = "not-ascending"
NOT_KEPT = "not-kept"
PROTECTED_EVICTED = "protected-evicted"
WRONG_COUNT = "wrong-count"
INVARIANT_RULES = (NOT_INTEGERS, NOT_ASCENDING, NOT_KEPT, PROTECTED_EVICTED, WRONG_COUNT)

_FAILURE_VERDICTS = {"crash": CRASH, "timeout": TIMEOUT, "protocol": PROTOCOL_ERROR}


@dataclass(frozen=True)
class Verdict:
    """What judging found in one vector's answers, and nothing else; never changed once made.

    ``call_index`` and ``op`` name the call the verdict is about (None for a pass);
    ``message`` is one line saying what went wrong; ``expected`` and ``actual`` are JSON values
    (victim lists for victim verdicts, ``{"error": kind}``-style objects for refusals);
    ``rule`` names the broken invariant; ``catches`` is, for a failure, the porting mistakes
    the vector's description says it catches; ``exit_status`` is the adapter's after a crash.
    """

    vector_id: str
    verdict: str
    call_index: int | None = None
    op: str | None = None
    message: str = ""
    expected: Any = None
    actual: Any = None
    rule: str | None = None
    catches: str = ""
    exit_status: int | None = None
    #: For a failure away from what the vector pins: what it pins and where the port failed.
    elsewhere: str = ""
    #: What the adapter answered to each call, for triage (failures only; not in reports).
    answers: tuple[tuple[Any, ...], ...] = field(default=(), repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


@dataclass(frozen=True)
class VectorResult(Verdict):
    """The outcome of one vector in a run: its :class:`Verdict`, and what the runner adds
    (the adapter's stderr tail, the scores diagnosis, the time, whether the vector is listed
    as a known failure). Made once, by the runner, when the vector is settled."""

    stderr_tail: str = ""
    diagnosis: str | None = None
    duration: float = 0.0
    known_failure: bool = False
    #: Where the scores diagnosis found the port first diverged (``sums``, ``pooled``,
    #: ``ties``, ``selection``), for triage's groups.
    divergence: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        judged: Verdict,
        *,
        stderr_tail: str = "",
        diagnosis: str | None = None,
        divergence: str | None = None,
        duration: float = 0.0,
        known_failure: bool = False,
    ) -> VectorResult:
        """The result of ``judged`` with the runner's record."""
        return cls(
            **{f.name: getattr(judged, f.name) for f in fields(Verdict)},
            stderr_tail=stderr_tail,
            diagnosis=diagnosis,
            divergence=divergence,
            duration=duration,
            known_failure=known_failure,
        )

    @property
    def fails_run(self) -> bool:
        """A failure not listed as known, or a listed one that passed (the list went stale)."""
        return self.passed == self.known_failure

    def describe(self) -> str:
        """One line: ``<id>: call <i> (<op>): <verdict>: <message>``."""
        if self.passed:
            text = f"{self.vector_id}: pass"
        elif self.call_index is None:
            text = f"{self.vector_id}: {self.verdict}: {self.message}"
        else:
            text = (
                f"{self.vector_id}: call {self.call_index} ({self.op}): "
                f"{self.verdict}: {self.message}"
            )
        if self.known_failure and self.passed:
            text += " (listed as a known failure, but it passes: remove it from the list)"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.vector_id,
            "verdict": self.verdict,
            "passed": self.passed,
            "known_failure": self.known_failure,
            "fails_run": self.fails_run,
            "call_index": self.call_index,
            "op": self.op,
            "message": self.message,
            "rule": self.rule,
            "expected": self.expected,
            "actual": self.actual,
            "diagnosis": self.diagnosis,
            "catches": self.catches,
            "elsewhere": self.elsewhere,
            "exit_status": self.exit_status,
            "stderr_tail": self.stderr_tail,
            "duration": round(self.duration, 6),
        }


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
) -> Verdict:
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

    def verdict(self, failure: Any = None) -> Verdict:
        """The verdict on the answers fed. ``failure`` is the
        :class:`conformance.transport.failures.AdapterFailure` that cut the exchange short, if
        any (the answers fed are then those that arrived before it). A wrong answer before the
        failure is reported rather than the failure, since it came first; the failure's call
        is the first unanswered one. Stderr and timing are the runner's to fill in."""
        result = self._result(failure)
        if result.passed:
            return result
        kind = failure and failure.kind
        if self._outcomes is None:
            outcomes = answer_outcomes(self.vector, self._answers, kind)
        else:
            outcomes = cut_short(self._outcomes, len(self.vector.calls), kind)
        return replace(result, answers=outcomes)

    def _result(self, failure: Any) -> Verdict:
        vector = self.vector
        if self._failed is not None:
            if failure is not None:
                message = f"{self._failed.message} (the adapter then failed: {failure.detail})"
                return replace(self._failed, message=message)
            return self._failed
        if failure is not None:
            index = failure.call_index
            return Verdict(
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


def kept(value: Any, depth: int = 0) -> Any:
    """``value`` (an adapter's JSON value) bounded for keeping in a result: strings cut at
    :data:`KEEP_TEXT` characters, lists and objects at :data:`KEEP_ITEMS` members, each with a
    note of what was cut. So what a failing adapter sends cannot grow the runner's memory or
    any report beyond a bound per vector, whatever its size."""
    if isinstance(value, str):
        return capped(value, KEEP_TEXT)
    if isinstance(value, list):
        return [kept(item, depth + 1) for item in capped_list(value, KEEP_ITEMS)]
    if isinstance(value, dict):
        items = list(value.items())
        bounded = {key: kept(item, depth + 1) for key, item in items[:KEEP_ITEMS]}
        if len(items) > KEEP_ITEMS:
            bounded["..."] = f"({len(items) - KEEP_ITEMS:,} more members)"
        return bounded
    return value


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

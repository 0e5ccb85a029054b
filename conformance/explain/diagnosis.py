"""Explaining a failure: the scores diagnosis of a wrong eviction, ties, and what a vector pins.

:func:`diagnosis_requests` and :func:`diagnose` serve an adapter with the ``scores``
capability: replay the vector up to the failing evict, ask for its scores, and tell whether its
selection disagrees with its own scores or its scores disagree with the reference's, naming the
first position whose sum or pooled score differs, with both values written exactly.

:func:`tied_selection` needs nothing from the adapter: it replays the vector on the reference up
to the failing evict and tells whether the adapter's victims differ from the expected ones only
among candidates with equal pooled scores, that is, whether the port broke a tie the wrong way
(the signature of an unstable sort, ``topk`` or ``argpartition``).

:func:`pinned_behaviour` decides whether a failure is at the behaviour its vector pins: only
then is the vector's "Catches:" text the likely mistake; otherwise the report says what the
vector pins and where the port failed instead.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.judge import verdicts
from conformance.judge.checker import Tracker, show_positions
from conformance.spec.protocol import scores_problem
from conformance.spec.text import catches_of, json_text, split_description
from conformance.suite.vectors import Vector

_show_positions = show_positions


class Diagnosis(str):
    """A diagnosis text that also says where the port first diverged (``kind``: ``sums``,
    ``pooled``, ``ties``, ``selection``, or None when nothing could be compared)."""

    kind: str | None

    def __new__(cls, text: str, kind: str | None = None) -> Diagnosis:
        made = super().__new__(cls, text)
        made.kind = kind
        return made


#: The most calls a scores diagnosis replays (on the adapter, then on the reference), so that
#: a failure deep in a recorded trace of millions of calls costs bounded time and memory.
MAX_REPLAY = 100_000


def beyond_replay(call_index: int) -> str | None:
    """Why a wrong evict at ``call_index`` gets no scores diagnosis, if it is too far in."""
    if call_index < MAX_REPLAY:
        return None
    return (
        f"no scores diagnosis: the failing evict is call {call_index:,}, and a diagnosis "
        f"replays at most {MAX_REPLAY:,} calls; to compare the scores, replay the vector up to "
        "that call with a scores request before it (SPEC.md §3.3)"
    )


def wants_diagnosis(result: verdicts.Judged) -> bool:
    """True for a failure that a scores replay can explain: wrong victims, or victims that
    break an invariant while being a list of integers. A malformed answer is the finding
    itself; scores would only distract from it."""
    if result.verdict == verdicts.WRONG_VICTIMS:
        return True
    return result.verdict == verdicts.BROKEN_INVARIANT and result.rule != verdicts.NOT_INTEGERS


def without_scores(vector: Vector, result: verdicts.Judged) -> Diagnosis:
    """What can be said of a wrong evict without the adapter's scores: a tie it broke the
    wrong way, if that is all that differs."""
    text = "no scores diagnosis: the adapter does not announce the scores capability"
    if result.verdict == verdicts.WRONG_VICTIMS and result.call_index is not None:
        tie = tied_selection(vector, result.call_index, result.actual)
        if tie is not None:
            return Diagnosis(f"{tie.describe()} ({text})", "ties")
    return Diagnosis(text)


def diagnosis_requests(vector: Vector, call_index: int) -> list[dict[str, Any]]:
    """The replay for a failing evict: the vector up to it, then ``scores``, then the evict."""
    calls = vector.calls[: call_index + 1]
    requests = [call.written_request() for call in calls]  # weights sent as written again
    return [*requests[:-1], {"op": "scores"}, requests[-1]]


def diagnose(
    vector: Vector,
    call_index: int,
    answers: Sequence[Mapping[str, Any]],
    first_victims: Any = None,
) -> Diagnosis:
    """Explain a wrong evict at ``call_index`` from the answers to :func:`diagnosis_requests`.

    Says (1) whether the adapter's victims are the k lowest candidates by (pooled, position) in
    its own scores, (2) where its scores first differ from the reference's, with both values
    written exactly (repr and float.hex), and (3) when the scores are equal, which tie the
    selection broke the wrong way. The result's ``kind`` is the first divergence: ``sums``,
    ``pooled``, ``ties`` or ``selection`` (None when the replay gave nothing to judge).
    """
    if len(answers) != call_index + 2:
        return Diagnosis(
            f"no diagnosis: the replay got {len(answers)} answers to {call_index + 2} calls"
        )
    scores_answer, evict_answer = answers[call_index], answers[call_index + 1]
    if scores_answer.get("ok") is not True:
        error = scores_answer.get("error")
        return Diagnosis(
            f"no diagnosis: the adapter announced scores but refused it: {json_text(error)}"
        )
    problem = scores_problem(scores_answer)
    if problem is not None:
        return Diagnosis(f"no diagnosis: {problem}")
    positions = scores_answer["positions"]
    sums = [float(v) for v in scores_answer["sums"]]
    pooled = [float(v) for v in scores_answer["pooled"]]
    victims = evict_answer.get("victims") if evict_answer.get("ok") is True else None
    parts = []
    if first_victims is not None and victims != first_victims:
        parts.append(
            f"replaying the vector gave different victims ({json_text(victims)}, first run "
            f"{json_text(first_victims)}): the adapter is not deterministic"
        )
    parts.append(_own_selection(vector, call_index, positions, pooled, victims))
    text, kind = _against_reference(vector, call_index, positions, sums, pooled)
    parts.append(text)
    if kind == "equal":
        tie = tied_selection(vector, call_index, victims)
        kind = "selection" if tie is None else "ties"
        if tie is not None:
            parts.append(tie.describe())
    return Diagnosis(" ".join(parts), kind)


def _own_selection(
    vector: Vector, call_index: int, positions: list[int], pooled: list[float], victims: Any
) -> str:
    state = expected_state(vector, call_index)
    if positions != state.kept:
        return (
            f"Its scores list the kept positions {_show_positions(positions)}, "
            f"but it should keep {_show_positions(state.kept)}."
        )
    count = max(0, len(positions) - state.recent)
    ranked = sorted(zip(pooled[:count], positions[:count], strict=True))
    own = sorted(position for _, position in ranked[: state.excess])
    lowest = f"the {_lowest(state.excess)} by (pooled, position)"
    if victims == own:
        return (
            f"Its victims are {lowest} in its own scores: its selection agrees with its "
            "scores, so look at the scores."
        )
    if isinstance(victims, list) and sorted(victims, key=str) == sorted(own, key=str):
        return (
            f"Its victims are {lowest} in its own scores, but not in ascending order: "
            f"{json_text(victims)}."
        )
    return (
        f"Its selection is wrong: by its own scores {lowest} "
        f"{'is' if state.excess == 1 else 'are'} {_show_positions(own)}, "
        f"but it evicted {json_text(victims)}."
    )


def _lowest(count: int) -> str:
    return "lowest candidate" if count == 1 else f"{count} lowest candidates"


def _against_reference(
    vector: Vector, call_index: int, positions: list[int], sums: list[float], pooled: list[float]
) -> tuple[str, str | None]:
    """The comparison with the reference's scores, and the divergence it shows: ``sums`` (a
    sum differs), ``pooled`` (every sum is the reference's, a pooled score is not), ``equal``
    or None (nothing compared). Scores are compared bit for bit: ``-0.0`` is not ``0.0``."""
    reference = reference_scores(vector, call_index)
    if reference is None:
        text = "The reference has no policy at this call, so there are no scores to compare."
        return text, None
    if positions != reference.positions:
        return "Its kept positions differ from the reference's, so scores are not compared.", None
    for name, kind, ours_all, theirs_all in (
        ("sum", "sums", sums, reference.sums),
        ("pooled score", "pooled", pooled, reference.pooled),
    ):
        differ = [i for i in range(len(positions)) if not same_bits(ours_all[i], theirs_all[i])]
        if not differ:
            continue
        index = differ[0]
        lead = (
            "The first score that differs from the reference's is"
            if kind == "sums"
            else "Its sums are the reference's, bit for bit; the first score that differs is"
        )
        more = f" ({len(differ)} of {len(positions)} {name}s differ)" if len(differ) > 1 else ""
        text = (
            f"{lead} the {name} of position {positions[index]} (kept index {index}): adapter "
            f"{exact(ours_all[index])}, reference {exact(theirs_all[index])}{more}."
        )
        return text, kind
    return "Its scores equal the reference's at every kept position.", "equal"


def same_bits(a: float, b: float) -> bool:
    """True when two scores are the same float64: ``-0.0`` and ``0.0`` differ, NaN is NaN."""
    if a != a or b != b:
        return a != a and b != b
    return struct.pack("<d", a) == struct.pack("<d", b)


def reference_scores(vector: Vector, call_index: int) -> Any:
    """The reference's :class:`conformance.policy.reference.Scores` just before ``call_index``."""
    policy = reference_policy(vector, call_index)
    return None if policy is None else policy.scores()


def expected_state(vector: Vector, call_index: int) -> Tracker:
    """The state the vector's expectations imply just before ``call_index``."""
    tracker = Tracker()
    for call in vector.calls[:call_index]:
        if call.expected_error is not None:
            continue
        if call.op == "new":
            tracker.new(call.request["params"])
        elif call.op == "step":
            tracker.step(call.request["pos"])
        elif call.op == "evict":
            tracker.evict(call.expected_victims or [])
    return tracker


def exact(value: float) -> str:
    """A float written so that nothing is lost: shortest repr and the hex form (infinity and
    NaN in words: JSON has no literal for them, an adapter sends ``1e999``)."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "-infinity" if value < 0 else "infinity"
    return f"{value!r} ({value.hex()})"


# -- ties --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tie:
    """Positions with equal pooled scores that the port and the reference split differently.

    ``positions`` are the candidates holding the tied ``value`` (ascending); the reference
    evicts ``expected`` of them (the lowest), the port evicted ``actual``.
    """

    value: float
    positions: tuple[int, ...]
    expected: tuple[int, ...]
    actual: tuple[int, ...]

    @property
    def went_higher(self) -> bool:
        """True when the port spared lower tied positions and evicted higher ones instead."""
        spared = set(self.expected) - set(self.actual)
        taken = set(self.actual) - set(self.expected)
        return bool(taken) and min(taken) > max(spared)

    def describe(self) -> str:
        """A few sentences for a FAIL line."""
        which = (
            "the port's tie went to the higher position"
            if self.went_higher
            else "the port broke the tie in no fixed order"
        )
        return (
            f"Positions {show_positions(self.positions)} are tied at pooled score "
            f"{exact(self.value)}; the lower positions go first "
            f"({show_positions(self.expected)}), but {which} "
            f"({show_positions(self.actual)}). The usual causes: an unstable sort (numpy's "
            "default argsort), topk or argpartition, or a comparison that sends ties to the "
            "higher position."
        )


def reference_policy(vector: Vector, call_index: int) -> Any:
    """The reference policy just before ``call_index`` (None when no policy is in place)."""
    # Here, not at the top: the run path imports this module, and loads the reference adapter
    # (and orjson) only when a failure is replayed.
    from conformance.adapter.replay import replay
    from conformance.adapter.server import Session

    session = Session()
    replay([call.request for call in vector.calls[:call_index]], session=session)
    return session.policy


def tied_selection(vector: Vector, call_index: int, actual: Any) -> Tie | None:
    """The tie the port broke differently at the evict ``call_index``, or None when its
    victims ``actual`` do not differ from the expected ones only among equal pooled scores."""
    if not 0 <= call_index < len(vector.calls):
        return None
    expected = vector.calls[call_index].expected_victims
    if (
        expected is None
        or not isinstance(actual, list)
        or not all(type(v) is int for v in actual)
        or len(actual) != len(expected)
        or sorted(actual) == sorted(expected)
    ):
        return None
    policy = reference_policy(vector, call_index)
    if policy is None:
        return None
    scores = policy.scores()
    candidates = max(0, len(scores.positions) - policy.params.recentWindow)
    pooled = dict(zip(scores.positions[:candidates], scores.pooled[:candidates], strict=True))
    # An expectation the reference itself would not give (a vector run without validating
    # it) names positions that are not candidates: no tie to speak of.
    if not all(v in pooled for v in actual) or not all(v in pooled for v in expected):
        return None
    if Counter(pooled[v] for v in actual) != Counter(pooled[v] for v in expected):
        return None
    differ = sorted(set(actual) ^ set(expected))
    value = pooled[differ[0]]
    return Tie(
        value,
        tuple(p for p, score in pooled.items() if score == value),
        tuple(sorted(v for v in expected if pooled[v] == value)),
        tuple(sorted(v for v in actual if pooled[v] == value)),
    )


# -- what a vector pins --------------------------------------------------------------------------

_REFUSAL_VERDICTS = (
    verdicts.WRONG_ERROR_KIND,
    verdicts.UNEXPECTED_SUCCESS,
    verdicts.UNEXPECTED_REFUSAL,
)
_EVICTION_VERDICTS = (verdicts.WRONG_VICTIMS, verdicts.BROKEN_INVARIANT)
#: Words of a "Catches:" text about a port dying rather than answering wrongly.
_CRASH_WORDS = ("crash", "memory", "allocat", "budget + 1", "budget+1")

_FAILED_HOW = {
    verdicts.WRONG_VICTIMS: "it evicted other positions",
    verdicts.BROKEN_INVARIANT: "its victims broke an invariant",
    verdicts.WRONG_ERROR_KIND: "it refused with the wrong kind",
    verdicts.UNEXPECTED_SUCCESS: "it accepted a call that must be refused",
    verdicts.UNEXPECTED_REFUSAL: "it refused a call that must succeed",
    verdicts.CRASH: "the adapter crashed",
    verdicts.TIMEOUT: "the adapter timed out",
    verdicts.PROTOCOL_ERROR: "its answer broke the protocol",
}


def pinned_calls(vector: Vector) -> tuple[str, frozenset[int]]:
    """What ``vector`` pins: ``("refusal", calls)`` when it expects refusals (its point is to
    refuse those calls), else ``("eviction", its evicts)``."""
    refusals = frozenset(i for i, call in enumerate(vector.calls) if call.expected_error)
    if refusals:
        return "refusal", refusals
    evicts = frozenset(i for i, call in enumerate(vector.calls) if call.op == "evict")
    return "eviction", evicts


def pinned_behaviour(vector: Vector, result: verdicts.Judged) -> bool:
    """True when ``result`` failed at the behaviour ``vector`` pins, in the way it pins it."""
    kind, calls = pinned_calls(vector)
    catches = catches_of(vector.description).lower()
    if result.verdict in verdicts.PROCESS_VERDICTS:
        # Storage sized by the parameters or by budget + 1 gives way when a construction or an
        # admission allocates; a crash anywhere else is some other bug.
        return result.op in ("new", "step") and any(word in catches for word in _CRASH_WORDS)
    if result.call_index not in calls:
        return False
    wanted = _REFUSAL_VERDICTS if kind == "refusal" else _EVICTION_VERDICTS
    return result.verdict in wanted


def elsewhere(vector: Vector, result: verdicts.Judged) -> str:
    """For a failure away from what ``vector`` pins: what it pins, and where the port failed."""
    kind, calls = pinned_calls(vector)
    pins = split_description(vector.description)[0].rstrip(".")
    where = "" if result.call_index is None else f" at call {result.call_index} ({result.op})"
    how = _FAILED_HOW.get(result.verdict, result.verdict)
    passed = ""
    if kind == "refusal" and result.call_index is not None:
        before = [i for i in calls if i < result.call_index]
        if before and result.call_index not in calls:
            passed = (
                "; its refusals were right"
                if len(before) == len(calls)
                else "; the refusals before it were right"
            )
    return f"this vector pins: {pins}. The port failed elsewhere{passed}: {how}{where}."


def explained(vector: Vector, result: verdicts.Judged) -> tuple[str, str]:
    """What ``result`` means for the porter, as ``(catches, elsewhere)``: for a failure, the
    vector's "Catches:" text when the port failed at the behaviour it pins, else the sentence
    saying what it pins and where the port failed instead; nothing for a pass. The one place a
    result is explained; the runner keeps both beside the judge's result."""
    if result.passed:
        return "", ""
    if pinned_behaviour(vector, result):
        return catches_of(vector.description), ""
    return "", elsewhere(vector, result)

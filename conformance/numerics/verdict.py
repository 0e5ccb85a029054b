"""A vector's answers judged under a numerics profile: ``pass`` (exactly the reference's),
``within P`` (every difference is rounding that profile admits), ``n/a`` for P (a difference
where P's formats overflow) or ``fail``.

:func:`judge_numerics` walks the vector's calls beside what the port answered (its outcomes,
:mod:`conformance.judge.outcomes`) on a fresh reference, in process. Every answer but an evict
must be the reference's outcome exactly: refusals and their kinds do not depend on rounding.
An evict that answers as the reference does is a match. One that differs is accepted under the
profile only when

1. it is well formed as the reference's is: a list of exactly ``k = max(0, kept - budget)``
   positions, strictly ascending, each kept and a candidate (below the protected window); and
2. some sums within the profile's bounds make those positions exactly the ``k`` smallest by
   ``(pooled, position)``, rows with identical rings sharing one value and an all-zero ring
   exactly 0 (:func:`conformance.numerics.decision.admits`, decided exactly).

The reference then continues from the port's choice (it evicts the port's victims), so one
rounding difference does not make every later answer differ. The first difference that is not
accepted ends the walk: ``n/a`` when the state is outside the profile's range (a weight or a
sum its formats cannot hold; a malformed answer still fails), ``fail`` otherwise.

Expectations come from the reference, replayed here; until the first accepted difference they
are the vector's own, and a vector whose expectations the reference does not reproduce fails
with a message saying so (``snapkv-conformance validate`` finds such a file).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from conformance.adapter.server import Session
from conformance.judge.outcomes import DIES, MALFORMED, OK, Outcome, answer_outcome
from conformance.numerics.decision import Scene, admits, out_of_reach, widest_gap
from conformance.numerics.profiles import Profile
from conformance.policy.reference import SnapKV
from conformance.spec.protocol import decoded
from conformance.suite.vectors import Call, Vector

PASS = "pass"
WITHIN = "within"
NOT_APPLICABLE = "n/a"
FAIL = "fail"
#: Every status, from best to worst.
STATUSES = (PASS, WITHIN, NOT_APPLICABLE, FAIL)

#: Every float32 is an integer multiple of 2^-149: exact sums are kept as integers in that unit.
_UNIT = 2**149


@dataclass(frozen=True)
class NumericsVerdict:
    """One vector judged under one profile.

    ``status`` is one of :data:`STATUSES`; ``accepted`` counts the evicts whose answer differs
    from the reference's and was accepted as rounding; ``gap`` is the widest relative gap
    between exact pooled scores that an accepted answer inverted
    (:func:`~conformance.numerics.decision.widest_gap`); ``call_index``, ``op`` and
    ``message`` say where and why a vector failed or is not applicable (empty otherwise).
    """

    vector_id: str
    profile: str
    status: str
    accepted: int = 0
    gap: Fraction = Fraction(0)
    call_index: int | None = None
    op: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        """True when nothing fails: the answers are the reference's or rounding the profile
        admits (``n/a`` is not ok: nothing was judged there)."""
        return self.status in (PASS, WITHIN)

    def label(self) -> str:
        """How a report names the outcome: ``pass``, ``within float32``, ``n/a for float32``
        or ``FAIL``."""
        if self.status == WITHIN:
            return f"within {self.profile}"
        if self.status == NOT_APPLICABLE:
            return f"n/a for {self.profile}"
        return "FAIL" if self.status == FAIL else PASS

    def describe(self) -> str:
        """One line: the label, with the widest gap an accepted answer needed, or where and
        why it failed."""
        if self.status == WITHIN:
            return (
                f"{self.vector_id}: {self.label()} ({self.accepted} evict(s) differ; widest "
                f"relative gap {float(self.gap):.3g})"
            )
        if self.status == PASS:
            return f"{self.vector_id}: pass"
        return (
            f"{self.vector_id}: call {self.call_index} ({self.op}): {self.label()}: {self.message}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "status": self.status,
            "accepted": self.accepted,
            "gap": float(self.gap),
            "call_index": self.call_index,
            "message": self.message,
        }


class _Stop(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def judge_numerics(
    vector: Vector, outcomes: Sequence[Outcome], profile: Profile
) -> NumericsVerdict:
    """Judge the port's ``outcomes`` (one per call, as
    :func:`conformance.judge.outcomes.answer_outcomes` gives them) to ``vector`` under
    ``profile`` (see the module docstring)."""
    session = Session(SnapKV)
    accepted = 0
    widest = Fraction(0)
    index, op = 0, None
    try:
        for index, call in enumerate(vector.calls):
            op = call.op
            got = _answer(outcomes, index, len(vector.calls))
            policy = session.policy
            if op == "evict" and isinstance(policy, SnapKV):
                gap = _judge_evict(policy, got, profile, call if not accepted else None)
                if gap is not None:
                    accepted += 1
                    widest = max(widest, gap)
                continue
            answer = session.handle({**decoded(call.request), "id": index})
            want = answer_outcome(answer, op)
            if not accepted:
                _check_expectation(call, want)
            if got != want:
                raise _Stop(FAIL, f"answered {_show(got)}, the reference {_show(want)}")
    except _Stop as stop:
        return NumericsVerdict(
            vector.id,
            profile.name,
            stop.status,
            accepted,
            widest,
            call_index=index,
            op=op,
            message=stop.message,
        )
    return NumericsVerdict(vector.id, profile.name, WITHIN if accepted else PASS, accepted, widest)


def _answer(outcomes: Sequence[Outcome], index: int, calls: int) -> Outcome:
    if index >= len(outcomes):
        raise _Stop(FAIL, f"the adapter answered {len(outcomes)} of {calls} calls")
    got = outcomes[index]
    if got == DIES:
        raise _Stop(FAIL, "the adapter crashed or hung here")
    if got == MALFORMED:
        raise _Stop(FAIL, "the answer breaks the protocol's shape")
    return got


def _check_expectation(call: Call, want: Outcome) -> None:
    """Raise when the reference's outcome is not what the vector expects (an edited file)."""
    if call.expected_error is not None:
        expected: Outcome = ("error", call.expected_error)
    elif call.op == "evict":
        expected = ("victims", tuple(call.expected_victims or ()))
    else:
        expected = OK
    if expected != want:
        raise _Stop(
            FAIL,
            f"the vector expects {_show(expected)} but the reference answers {_show(want)}: "
            "the file is not a valid vector (run snapkv-conformance validate on it)",
        )


def _judge_evict(
    policy: SnapKV, got: Outcome, profile: Profile, call: Call | None
) -> Fraction | None:
    """Judge one evict answer and evict what was accepted from ``policy``. None for the
    reference's own answer, the widest gap for an accepted different one; raise otherwise.
    ``call`` is the vector's call while the walk still follows the vector's expectations."""
    count = policy.excess()
    ranked = policy.select(policy.pool(policy.window_sums()), count) if count > 0 else []
    want: Outcome = ("victims", tuple(policy.order_victims(ranked)))
    if call is not None:
        _check_expectation(call, want)
    if got == want:
        policy.remove(ranked)
        return None
    if got[0] != "victims":
        raise _Stop(FAIL, f"answered {_show(got)}, the reference {_show(want)}")
    victims: tuple[int, ...] = got[1]
    shown = f"evicted {_positions(victims)}, the reference {_positions(want[1])}"
    problem = _shape_problem(policy, victims, count)
    if problem is not None or profile.exact:
        raise _Stop(FAIL, f"{shown}: {problem or 'exact arithmetic admits no other answer'}")
    where = {position: index for index, position in enumerate(policy.kept)}
    chosen = [where[victim] for victim in victims]
    scene, exact, problem = _scene(policy, profile)
    if scene is None:
        raise _Stop(
            NOT_APPLICABLE,
            f"{shown}, where {problem}: {profile.name}'s bound does not hold there",
        )
    if not admits(scene, chosen):
        raise _Stop(FAIL, f"{shown}: {_why_not(scene, chosen, policy.kept, profile)}")
    policy.remove(chosen)
    return widest_gap(exact, scene.radius, scene.candidates, chosen)


def _shape_problem(policy: SnapKV, victims: Sequence[int], count: int) -> str | None:
    """What makes ``victims`` something no arithmetic explains, or None."""
    if len(victims) != count:
        return f"{len(victims)} victim(s), but exactly {count} must go whatever the arithmetic"
    if any(b <= a for a, b in itertools.pairwise(victims)):
        return "victims must be strictly ascending whatever the arithmetic"
    kept = policy.kept
    candidates = set(kept[: policy.candidate_count()])
    for victim in victims:
        if victim not in candidates:
            what = "protected (among the recentWindow highest)" if victim in kept else "not kept"
            return f"position {victim} is {what}, whatever the arithmetic"
    return None


def _scene(policy: SnapKV, profile: Profile) -> tuple[Scene | None, list[int], str]:
    """The evict as :func:`admits` sees it under ``profile``, and each kept entry's exact sum
    in units of 2^-149; outside the profile's range no scene, and why (naming the position)."""
    keys: dict[tuple[float, ...], int] = {}
    classes: list[int] = []
    exact: list[int] = []
    rings: list[tuple[int, int, float, int]] = []  # per class: sum, nonzero, largest, first
    for index, ring in enumerate(policy.rings):
        values = ring.values
        end = len(values)
        while end and not values[end - 1]:
            end -= 1
        key = tuple(values[:end])  # -0.0 == 0.0: a slot holding either is the same slot
        if key not in keys:
            keys[key] = len(rings)
            total = sum(_scaled(value) for value in key)
            nonzero = sum(1 for value in key if value)
            rings.append((total, nonzero, max(key, default=0.0), index))
        classes.append(keys[key])
        exact.append(rings[keys[key]][0])
    low: list[Fraction] = []
    high: list[Fraction] = []
    for total, nonzero, largest, first in rings:
        bounds = profile.interval(nonzero, Fraction(total, _UNIT), Fraction(largest))
        if bounds is None:
            problem = profile.range_problem(nonzero, Fraction(total, _UNIT), Fraction(largest))
            return None, exact, f"position {policy.kept[first]}'s ring holds {problem}"
        low.append(bounds[0])
        high.append(bounds[1])
    radius = (policy.params.poolKernel - 1) // 2
    scene = Scene(tuple(classes), tuple(low), tuple(high), radius, policy.candidate_count())
    return scene, exact, ""


def _scaled(value: float) -> int:
    """A float32 value (held as a float) as an integer number of 2^-149."""
    numerator, denominator = value.as_integer_ratio()
    return numerator * (_UNIT // denominator)


def _why_not(scene: Scene, chosen: Sequence[int], kept: Sequence[int], profile: Profile) -> str:
    """Why no admitted evaluation picks ``chosen``, for the porter."""
    pair = out_of_reach(scene, chosen)
    arithmetic = profile.arithmetic
    if pair is None:
        return (
            f"no {arithmetic} ranks them lowest together: each pair could swap on its own, but "
            "not all at once (they share pooling neighbours)"
        )
    victim, other, shared = pair
    if shared:
        return (
            f"position {kept[victim]} always pools at least as high as position {kept[other]} "
            f"(every ring in position {kept[other]}'s pooling window is in position "
            f"{kept[victim]}'s too, and identical rings sum alike under every evaluation), and "
            "a tie evicts the lower position"
        )
    bottom, roof = scene.lowest_pooled(victim), scene.highest_pooled(other)
    gap = f" ({float(bottom - roof):.3g} apart)" if bottom != roof else ""
    return (
        f"no {arithmetic} ranks position {kept[victim]} below position {kept[other]}: its "
        f"pooled score is at least {float(bottom)!r} and the other's at most {float(roof)!r}"
        f"{gap} under that arithmetic"
        + (" (equal at best, and a tie evicts the lower position)" if bottom == roof else "")
    )


def _show(outcome: Outcome) -> str:
    if outcome[0] == "victims":
        return f"victims {_positions(outcome[1])}"
    if outcome[0] == "error":
        return f"a refusal with {outcome[1]}"
    return "success" if outcome == OK else str(outcome[0])


def _positions(positions: Sequence[int]) -> str:
    shown = ", ".join(str(p) for p in positions[:16])
    return f"[{shown}{', ...' if len(positions) > 16 else ''}]"


__all__ = [
    "FAIL",
    "NOT_APPLICABLE",
    "PASS",
    "STATUSES",
    "WITHIN",
    "NumericsVerdict",
    "judge_numerics",
]

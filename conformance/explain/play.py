"""Replaying a vector on a catalogued policy, in process, and what its answers decide.

This is what the triage and the shipped outcomes (:mod:`conformance.explain.known_kills`) replay
with: no protocol, no process, no JSON, just the policy's calls, answered as
:class:`conformance.adapter.server.Session` answers them (a refused ``new`` keeps the earlier
policy, or what a :class:`~conformance.mutants.model.Refused` leaves; ``step`` and ``evict`` before
any accepted ``new`` are ``no-policy``). An exception other than a refusal is a crash: the replay
stops there, as a port's process would.

An *outcome* is what one answer decides: ``("ok",)``, ``("victims", (...))``,
``("error", kind)``, or ``("dies",)`` for a crash.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.judge.verdicts import Judged
from conformance.mutants._base import Mutant
from conformance.mutants.model import Model
from conformance.policy.reference import PolicyError
from conformance.suite.vectors import DOUBLE_ROUNDING, Vector

Outcome = tuple[Any, ...]
OK: Outcome = ("ok",)
DIES: Outcome = ("dies",)


@dataclass
class Played:
    """A replay: the outcomes up to where it stopped, where it first left ``target`` (None
    when it never did), and with ``trace`` the sums and pooled scores of every evict."""

    outcomes: tuple[Outcome, ...]
    diverged: int | None = None
    trace: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


def play(
    policy: type[Model],
    vector: Vector,
    target: Sequence[Outcome] | None = None,
    *,
    trace: bool = False,
) -> Played:
    """Replay ``vector`` on ``policy``. With ``target``, stop at the first outcome that differs
    from it (or once the replay goes past its end, or ends before it)."""
    with np.errstate(all="ignore"):  # a float16 ring overflows on purpose; say nothing
        return _play(policy, vector, target, trace)


def _play(
    policy: type[Model], vector: Vector, target: Sequence[Outcome] | None, trace: bool
) -> Played:
    current: Model | None = None
    outcomes: list[Outcome] = []
    traced: list[tuple[np.ndarray, np.ndarray]] = []
    diverged: int | None = None
    # Weights chosen for how their decimal rounds are read from the text the line sends, so a
    # choice that parses the decimal itself sees what a port would.
    as_sent = DOUBLE_ROUNDING in vector.tags
    for index, call in enumerate(vector.calls):
        request = call.written_request() if as_sent and call.op == "step" else call.request
        op = call.op
        got: Outcome
        try:
            if op == "new":
                made = policy.construct(request.get("params"), request.get("seed"), current)
                if trace:
                    made.__dict__["tracing"] = True  # this instance records its evicts
                    made.trace = traced
                current = made
                got = OK
            elif current is None:
                got = ("error", "no-policy")
            elif op == "step":
                current.step(request.get("pos"), request.get("attn"))
                got = OK
            else:
                got = ("victims", tuple(current.evict()))
        except PolicyError as error:
            if hasattr(error, "remaining"):
                current = error.remaining
            got = ("error", error.kind)
        except Exception:  # a mistake that crashes: a port's process would die here
            got = DIES
        outcomes.append(got)
        if target is not None and (index >= len(target) or target[index] != got):
            diverged = index
            break
        if got == DIES:
            break
    if target is not None and diverged is None and len(outcomes) != len(target):
        diverged = len(outcomes)
    return Played(tuple(outcomes), diverged, traced)


def digest(outcomes: Sequence[Outcome]) -> str:
    """A short fingerprint of outcomes (victims, error kinds, a crash), to compare answers
    without storing them."""
    text = json.dumps([list(outcome) for outcome in outcomes], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def compose(parts: Sequence[Mutant]) -> type[Model] | None:
    """A policy class making every choice of ``parts`` at once, or None when two of them change
    the same step (the composition would silently drop one)."""
    seen: set[str] = set()
    for part in parts:
        if seen & set(part.steps):
            return None
        seen |= set(part.steps)
    if len(parts) == 1:
        return parts[0].policy
    try:
        return type("+".join(part.name for part in parts), tuple(p.policy for p in parts), {})
    except TypeError:  # no consistent method resolution order
        return None


# -- protocol checks ---------------------------------------------------------------------------

#: The line-level hooks of the model (steps ``line-text``, ``blank-lines``, ``repeated-names``
#: and ``id-reading``): a policy that keeps them all is answered by the reference session.
_LINE_HOOKS = ("line_text", "member_pairs", "read_id", "answers_blank_lines")


def reads_lines_otherwise(policy: type[Model]) -> bool:
    """Whether ``policy`` makes a line-level choice (reads a line otherwise than the
    reference adapter does)."""
    return any(getattr(policy, hook) is not getattr(Model, hook) for hook in _LINE_HOOKS)


def answer_lines(
    policy: type[Model],
    lines: Iterable[bytes],
    implementation: Mapping[str, str] | None = None,
    capabilities: Sequence[str] | None = None,
) -> Iterator[bytes | None]:
    """The answer lines (without LF) an adapter serving ``policy`` writes for ``lines``, one
    as each line is read, until ``bye``: the reference adapter's session
    (:class:`conformance.adapter.server.Session`) with the policy's line-level choices (how a
    line's text is decoded, whether a blank line is answered, which of repeated names counts,
    how an id is read), each answer encoded as the reference adapter encodes it.

    A policy that raises (a mistake that crashes, as in :func:`play`) ends the answers with
    None, where a port's process dies (the reference adapter would answer ``unsupported`` and
    go on).

    ``capabilities`` limits the optional ops the session announces and answers to those named
    (None: every one the policy implements)."""
    # Here, not at the top: the vectors' replay needs no adapter session.
    from conformance.adapter.server import Session, capabilities_of, encode_or_refuse

    session = Session(
        policy,
        implementation or {"name": "triage", "language": "python", "version": "0"},
        None
        if capabilities is None
        else [op for op in capabilities_of(policy) if op in capabilities],
    )
    for line in lines:
        blank = line[:1] != b"{" and not line.strip(b" \t\r\n")
        if blank and not policy.answers_blank_lines:
            continue
        with np.errstate(all="ignore"):
            answer = _line_answer(session, policy, line)
        if answer is None:
            yield None
            return
        yield encode_or_refuse(answer).rstrip(b"\n")
        if session.finished:
            return


def play_check(
    policy: type[Model], check: Any, capabilities: Sequence[str] | None = None
) -> Judged:
    """Replay the protocol check ``check`` on ``policy`` in process (:func:`answer_lines`) and
    judge it, as :func:`conformance.judge.check_answers.judge_check` judges a port's answer
    lines: the session ends with status 0, or 1 where the policy crashed.

    ``capabilities``: the optional ops the policy announces, as :func:`answer_lines` takes
    them; the triage passes the port's own, so that a check whose answers hang on a capability
    compares like with like."""
    from conformance.judge.check_answers import judge_check

    lines = io.BytesIO(check.payload).readlines()
    answers = list(answer_lines(policy, lines, capabilities=capabilities))
    crashed = bool(answers) and answers[-1] is None
    written = [answer for answer in answers if answer is not None]
    return judge_check(check, written, exit_status=1 if crashed else 0)


def _line_answer(session: Any, policy: type[Model], line: bytes) -> dict[str, Any] | None:
    """The answer to ``line`` read with ``policy``'s line-level choices (the reference
    adapter's reading where it makes none); None when the policy raises (it crashed)."""
    from conformance.adapter.server import decode_request
    from conformance.spec.protocol import refusal, refuse_constant

    try:
        if reads_lines_otherwise(policy):
            text = policy.line_text(line)
            decoder = json.JSONDecoder(
                parse_constant=refuse_constant, object_pairs_hook=policy.member_pairs
            )
            request = decoder.decode(text)
            if isinstance(request, dict) and "id" in request:
                request["id"] = policy.read_id(request["id"])
        else:
            request = decode_request(line, weights_checked=True)
            if session.reads_weight_text:
                request = session.as_written(request, line)
    except (ValueError, RecursionError) as error:  # a DecodeError is a ValueError
        return refusal(None, "bad-request", f"request is not a JSON object line: {error}")
    try:
        return session.answer(request)
    except Exception:  # a mistake that crashes: a port's process would die here
        return None


def _as_values(value: Any) -> Any:
    """``value`` with every integral float written as the integer it equals (``-0.0`` as 0),
    at any depth: SPEC §2.6 lets a port write the score 1.0 as ``1``, and only the value read
    back counts, so a port printing ``%.17g`` answers as a catalogued mistake printing
    ``1.0`` does. Integers are left as they are (exact at any size); other floats too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_as_values(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_values(item) for key, item in value.items()}
    return value


def check_outcome(judged: Any) -> Outcome:
    """What a check's judgement decides, as triage compares it with a port's: ``("pass",)``,
    or the verdict, the line it is about and the answer there (expected and actual, as the
    judge kept them, numbers as values: :func:`_as_values`), without the message's words."""
    if judged.passed:
        return ("pass",)
    actual = json.dumps(_as_values(judged.actual), sort_keys=True, default=str)
    expected = json.dumps(_as_values(judged.expected), sort_keys=True, default=str)
    return ("check", judged.verdict, judged.call_index, expected, actual)

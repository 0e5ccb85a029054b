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
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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

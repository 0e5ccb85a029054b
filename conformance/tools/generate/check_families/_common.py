"""What every family of protocol checks writes with: request lines, the usual opening lines, and
:func:`draft`, a check as written (its expectations come from the reference: see
:func:`conformance.suite.validation.realize`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.suite.validation import CheckDraft


def line(request: Any) -> str:
    """``request`` as one compact JSON line, LF-terminated."""
    return json.dumps(request, separators=(",", ":")) + "\n"


def compact(value: Any) -> str:
    """``value`` as compact JSON text (no line end)."""
    return json.dumps(value, separators=(",", ":"))


HELLO = line({"id": 1, "op": "hello", "protocol": 1})
PARAMS = {"budget": 1, "recentWindow": 0, "obsWindow": 2, "poolKernel": 1}
NEW = line({"id": 2, "op": "new", "params": PARAMS, "seed": 0})


def draft(
    name: str,
    rule: str,
    pins: str,
    catches: str,
    send: Sequence[Any],
    outcomes: Sequence[str],
    *,
    spec: Sequence[str],
    latitude: Mapping[int, tuple[Mapping[str, Any], ...]] | None = None,
) -> CheckDraft:
    """A check as written: ``send`` (text chunks, ``{"hex": ...}`` for raw bytes), each
    answered line's intended outcome (``"ok"`` or an error kind), the ids of the SPEC.md
    sentences it pins, and ``latitude``: other answers SPEC.md allows at an answer's index."""
    return CheckDraft(
        name, rule, pins, catches, tuple(send), tuple(outcomes), dict(latitude or {}), tuple(spec)
    )

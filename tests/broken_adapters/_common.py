"""Shared loop of the deliberately broken adapters beside this file.

Each script is the reference adapter with one protocol-level fault, run as
``python3 tests/broken_adapters/<name>.py``. The fault fires once the adapter has admitted
position :data:`TRIGGER` (and, for faults in answers, at the next ``evict``), so the tests can
put it into one vector and check that the vectors around it still pass.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter.server import Session, encode

#: Admitting this position arms the fault.
TRIGGER = 5

#: ``fault(request, answer_line, armed) -> bytes | None``: what to write instead of the answer
#: (None: the answer unchanged). ``armed`` is true from the step admitting TRIGGER to the
#: next ``new``.
Fault = Callable[[dict[str, Any], bytes, bool], bytes | None]


def out(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def serve(fault: Fault, *, name: str = "broken") -> int:
    """The reference adapter loop with ``fault`` applied to each answer line."""
    implementation = {"name": f"broken adapter: {name}", "language": "python", "version": "0"}
    session = Session(implementation=implementation)
    armed = False
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = json.loads(line)
        answer = session.handle(request)
        if request.get("op") == "new":
            armed = False
        elif request.get("op") == "step" and request.get("pos") == TRIGGER and answer["ok"]:
            armed = True
        replaced = fault(request, encode(answer), armed)
        out(encode(answer) if replaced is None else replaced)
        if session.finished:
            break
    return 0


def at_evict(action: Callable[[dict[str, Any], bytes], bytes | None]) -> Fault:
    """A fault that fires at each evict while armed."""

    def fault(request: dict[str, Any], line: bytes, armed: bool) -> bytes | None:
        if armed and request.get("op") == "evict":
            return action(request, line)
        return None

    return fault

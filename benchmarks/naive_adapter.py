#!/usr/bin/env python3
"""A naive protocol v1 adapter: SnapKV written the straightforward way, standard library only.

The yardstick of ``bench_adapter.py``: what a porter's first pure-Python port costs, written
from SPEC.md §2 alone, importing nothing from the kit or its tests. Each kept position owns a
list of ``obsWindow`` float32 weights; an evict sums every list slot by slot (a float64 loop
from ``+0.0``: the builtin ``sum`` is compensated from Python 3.12 on, which is not the pinned
sum), pools with ``max`` over each window, sorts the candidates by ``(pooled, position)``
and returns the first ones ascending. Weights are narrowed one at a time with ``struct``.
Nothing is cached between calls and nothing is vectorised; nothing is made slow on purpose.

Like any port it checks what it is given (SPEC.md §2.1, §2.3): the parameters, each position,
each weight (a number, not a boolean, whose float32 is finite and not negative), and refuses
a bad call before changing anything. It answers ``hello``, ``new``, ``step``, ``evict`` and
``bye``; it is not hardened against hostile lines (``json`` reads ``NaN``, for one).
"""

from __future__ import annotations

import json
import struct
import sys
from typing import Any

NAMES = ("budget", "recentWindow", "obsWindow", "poolKernel")
LIMIT = 2**31 - 1


class Refused(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32, as a Python float."""
    return struct.unpack("f", struct.pack("f", value))[0]


def weight(value: Any) -> float:
    """One attention weight as a float32; refuse what SPEC.md §2.3 refuses."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused("invalid-attention", f"not a number: {value!r}")
    try:
        narrowed = float32(float(value))
    except OverflowError:
        raise Refused("invalid-attention", f"beyond float32: {value!r}") from None
    if narrowed != narrowed or narrowed < 0 or narrowed == float("inf"):
        raise Refused("invalid-attention", f"not finite or negative: {value!r}")
    return narrowed


class SnapKV:
    def __init__(self, params: Any) -> None:
        if not isinstance(params, dict) or sorted(params) != sorted(NAMES):
            raise Refused("invalid-params", "params must have exactly the four names")
        if not all(is_int(params[name]) and 0 <= params[name] <= LIMIT for name in NAMES):
            raise Refused("invalid-params", "each parameter must be an integer in range")
        self.budget = params["budget"]
        self.recent = params["recentWindow"]
        self.obs = params["obsWindow"]
        self.kernel = params["poolKernel"]
        if self.budget < 1 or self.recent >= self.budget or self.obs < 1:
            raise Refused("invalid-params", "budget, recentWindow or obsWindow out of range")
        if self.kernel < 1 or self.kernel % 2 == 0:
            raise Refused("invalid-params", "poolKernel must be odd and at least 1")
        self.positions: list[int] = []
        self.history: list[list[float]] = []  # history[i][slot] for positions[i]
        self.slot = 0
        self.last: int | None = None

    def step(self, pos: Any, attn: Any) -> None:
        if not is_int(pos) or not 0 <= pos <= LIMIT or (self.last is not None and pos <= self.last):
            raise Refused("invalid-position", f"bad position {pos!r}")
        if attn is not None:
            if not isinstance(attn, list) or len(attn) != len(self.positions):
                raise Refused("invalid-attention", "attn must be null or one weight per kept")
            weights = [weight(value) for value in attn]  # all checked before any is written
            for i in range(len(weights)):
                self.history[i][self.slot] = weights[i]
            self.slot = (self.slot + 1) % self.obs
        self.positions.append(pos)
        self.history.append([0.0] * self.obs)
        self.last = pos

    def evict(self) -> list[int]:
        excess = len(self.positions) - self.budget
        if excess <= 0:
            return []
        sums = []
        for ring in self.history:
            total = 0.0
            for slot in range(self.obs):
                total += ring[slot]
            sums.append(total)
        radius = (self.kernel - 1) // 2
        pooled = []
        for i in range(len(sums)):
            pooled.append(max(sums[max(0, i - radius) : i + radius + 1]))
        candidates = list(range(len(self.positions) - self.recent))
        candidates.sort(key=lambda i: (pooled[i], self.positions[i]))
        gone = sorted(candidates[:excess])
        victims = [self.positions[i] for i in gone]
        for i in reversed(gone):
            del self.positions[i]
            del self.history[i]
        return victims


def answer(state: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    try:
        return respond(state, request)
    except Refused as error:
        return {"ok": False, "error": {"kind": error.kind, "message": str(error)}}


def respond(state: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op in ("step", "evict") and "policy" not in state:
        raise Refused("no-policy", "send new first")
    if op == "hello":
        implementation = {"name": "naive", "language": "python", "version": "0"}
        return {"ok": True, "protocol": 1, "implementation": implementation, "capabilities": []}
    if op == "new":
        state["policy"] = SnapKV(request["params"])
        return {"ok": True}
    if op == "step":
        state["policy"].step(request["pos"], request["attn"])
        return {"ok": True}
    if op == "evict":
        return {"ok": True, "victims": state["policy"].evict()}
    if op == "bye":
        return {"ok": True}
    return {"ok": False, "error": {"kind": "unsupported", "message": f"unknown op {op}"}}


def main() -> int:
    state: dict[str, Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        sys.stdout.write(json.dumps({"id": request["id"], **answer(state, request)}) + "\n")
        sys.stdout.flush()
        if request["op"] == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

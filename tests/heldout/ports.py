"""SnapKV written from SPEC.md in plain Python, and planted bugs as real ports make them.

``python tests/heldout/ports.py NAME`` serves the port ``NAME`` over adapter protocol v1.
:data:`PORTS` maps each name to the catalogued mistakes a triage may name first for it: the
planted bug in the catalogue's words (several names when the catalogue holds the same mistake
under two names, or the planted bug is a combination of catalogued ones).

Nothing here imports the kit: a held-out port is the kit's test subject, not its code.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Callable
from typing import Any

INT31_MAX = 2**31 - 1
NAMES = ("budget", "recentWindow", "obsWindow", "poolKernel")


class Refused(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def is_int(value: Any) -> bool:
    return type(value) is int


def to_float32(value: Any) -> float:
    """Nearest float64, then nearest float32; OverflowError past the float32 range."""
    return struct.unpack("<f", struct.pack("<f", float(value)))[0]


class Port:
    """SPEC.md §2, one method per rule, so a planted bug is one override."""

    def __init__(self, params: Any, seed: Any) -> None:
        if not self.is_integer(seed):
            raise Refused("invalid-params", "seed must be an integer")
        if not isinstance(params, dict) or sorted(params) != sorted(NAMES):
            raise Refused("invalid-params", "params must have exactly the four names")
        for name in NAMES:
            value = params[name]
            if not self.is_integer(value) or not 0 <= value <= INT31_MAX:
                raise Refused("invalid-params", f"{name} is not an integer in range")
        self.budget = int(params["budget"])
        self.recent = int(params["recentWindow"])
        self.obs = int(params["obsWindow"])
        self.kernel = int(params["poolKernel"])
        if self.budget < 1 or self.recent >= self.budget or self.obs < 1:
            raise Refused("invalid-params", "budget, recentWindow or obsWindow out of range")
        if self.kernel < 1 or self.kernel % 2 == 0:
            raise Refused("invalid-params", "poolKernel must be odd")
        self.kept: list[int] = []
        self.rings: list[dict[int, float]] = []  # slot -> weight; absent slots are zero
        self.slot = 0
        self.last: int | None = None

    def is_integer(self, value: Any) -> bool:
        return is_int(value)

    # -- step ------------------------------------------------------------------------------

    def step(self, pos: Any, attn: Any) -> None:
        if not self.is_integer(pos) or not 0 <= pos <= INT31_MAX:
            raise Refused("invalid-position", "pos must be an integer in range")
        if self.last is not None and pos <= self.last:
            raise Refused("invalid-position", "pos must increase")
        weights = self.read_attention(attn)
        if weights is not None:
            self.record(weights)
        self.admit(int(pos))

    def read_attention(self, attn: Any) -> list[float] | None:
        if attn is None:
            return None
        if not isinstance(attn, list) or len(attn) != len(self.kept):
            raise Refused("invalid-attention", "attn must be null or one weight per kept position")
        weights = []
        for weight in attn:
            if type(weight) not in (int, float):
                raise Refused("invalid-attention", "a weight is not a number")
            try:
                narrowed = to_float32(weight)
            except OverflowError:
                raise Refused("invalid-attention", "a weight is beyond float32") from None
            if narrowed == float("inf"):  # 1e400: infinite as a float64 already
                raise Refused("invalid-attention", "a weight is beyond float32")
            if not narrowed >= 0:
                raise Refused("invalid-attention", "a weight is negative")
            weights.append(narrowed)
        return weights

    def record(self, weights: list[float]) -> None:
        for ring, weight in zip(self.rings, weights, strict=True):
            ring[self.slot] = weight
        self.slot = (self.slot + 1) % self.obs

    def admit(self, pos: int) -> None:
        self.kept.append(pos)
        self.rings.append({})
        self.last = pos

    # -- evict -----------------------------------------------------------------------------

    def evict(self) -> list[int]:
        k = len(self.kept) - self.budget
        if k <= 0:
            return []
        pooled = self.pool(self.sums())
        victims = self.select(pooled, k)
        chosen = set(victims)
        evicted = self.order([self.kept[i] for i in victims])
        self.kept = [p for i, p in enumerate(self.kept) if i not in chosen]
        self.rings = [r for i, r in enumerate(self.rings) if i not in chosen]
        return evicted

    def sums(self) -> list[float]:
        out = []
        for ring in self.rings:
            total = 0.0
            for slot in sorted(ring):
                total += ring[slot]
            out.append(total)
        return out

    def pool(self, sums: list[float]) -> list[float]:
        r = (self.kernel - 1) // 2
        n = len(sums)
        return [max(sums[max(0, i - r) : min(n, i + r + 1)]) for i in range(n)]

    def select(self, pooled: list[float], k: int) -> list[int]:
        candidates = range(len(self.kept) - self.recent)
        return sorted(candidates, key=lambda i: (pooled[i], i))[:k]

    def order(self, victims: list[int]) -> list[int]:
        return sorted(victims)


# -- planted bugs ----------------------------------------------------------------------------


class NumpyPrealloc(Port):
    """A numpy port: rows preallocated for budget + 1 entries, as if every step were
    followed by an evict."""

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        import numpy as np

        self.np = np
        self.store = np.zeros((self.budget + 1, min(self.obs, 64)), dtype=np.float32)

    def admit(self, pos: int) -> None:
        self.store[len(self.kept)] = 0.0  # IndexError once budget + 1 rows are kept
        super().admit(pos)


class NumpyArgsort(Port):
    """A numpy port ranking with the default argsort."""

    def select(self, pooled: list[float], k: int) -> list[int]:
        import numpy as np

        scores = np.array(pooled[: len(self.kept) - self.recent], dtype=np.float64)
        return [int(i) for i in np.argsort(scores)[:k]]


class OpenVinoTranscription(Port):
    """OpenVINO GenAI's SUM aggregation, transcribed: each step's row is max-pooled over
    idx .. idx + window - 1 and added to a score kept for as long as the position lives."""

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.scores: list[float] = []

    def record(self, weights: list[float]) -> None:
        n = len(weights)
        for idx in range(n):
            best = weights[idx]
            for j in range(idx, min(n, idx + self.kernel)):
                best = max(best, weights[j])
            self.scores[idx] += best
        super().record(weights)

    def admit(self, pos: int) -> None:
        super().admit(pos)
        self.scores.append(0.0)

    def evict(self) -> list[int]:
        k = len(self.kept) - self.budget
        if k <= 0:
            return []
        victims = self.select(list(self.scores), k)
        chosen = set(victims)
        evicted = sorted(self.kept[i] for i in victims)
        self.kept = [p for i, p in enumerate(self.kept) if i not in chosen]
        self.rings = [r for i, r in enumerate(self.rings) if i not in chosen]
        self.scores = [s for i, s in enumerate(self.scores) if i not in chosen]
        return evicted


class GoFloat32(Port):
    """The Go port's planted bug: `var sum float32` for the window sums."""

    def sums(self) -> list[float]:
        out = []
        for ring in self.rings:
            total = 0.0
            for slot in sorted(ring):
                try:
                    total = to_float32(total + ring[slot])
                except OverflowError:  # Go's float32 addition overflows to +Inf
                    total = float("inf")
            out.append(total)
        return out


class ScanFromEnd(Port):
    """A selection that scans for the minimum from the newest candidate down, keeping the
    first minimum it meets (`<`): among equal scores the highest position goes."""

    def select(self, pooled: list[float], k: int) -> list[int]:
        left = list(range(len(self.kept) - self.recent))
        victims = []
        for _ in range(k):
            best = left[-1]
            for i in reversed(left):
                if pooled[i] < pooled[best]:
                    best = i
            victims.append(best)
            left.remove(best)
        return victims


class NullMovesCursor(Port):
    """A null step still advances the ring cursor."""

    def step(self, pos: Any, attn: Any) -> None:
        super().step(pos, attn)
        if attn is None:
            self.slot = (self.slot + 1) % self.obs


class OldestFirstSum(Port):
    """Window sums taken oldest first, starting at the cursor."""

    def sums(self) -> list[float]:
        order = [*range(self.slot, self.obs), *range(self.slot)] if self.obs < 4096 else None
        out = []
        for ring in self.rings:
            total = 0.0
            slots = order if order is not None else sorted(ring)
            for slot in slots:
                total += ring.get(slot, 0.0)
            out.append(total)
        return out


class IsInstanceInt(Port):
    """Python's isinstance(x, int) for every integer and number check."""

    def is_integer(self, value: Any) -> bool:
        return isinstance(value, int)

    def read_attention(self, attn: Any) -> list[float] | None:
        if isinstance(attn, list):
            attn = [float(w) if isinstance(w, bool) else w for w in attn]
        return super().read_attention(attn)


#: name -> (class, catalogue names a triage may give first for it)
PORTS: dict[str, tuple[Callable[..., Port], tuple[str, ...]]] = {
    "spec": (Port, ()),
    "numpy-prealloc": (NumpyPrealloc, ("budget-plus-one-storage",)),
    "numpy-argsort": (NumpyArgsort, ("unstable-argsort",)),
    "openvino-sum": (OpenVinoTranscription, ("openvino-sum",)),
    "go-float32": (GoFloat32, ("float32-accumulation",)),
    "scan-from-end": (ScanFromEnd, ("ties-to-higher-position",)),
    "null-moves-cursor": (NullMovesCursor, ("null-advances-ring",)),
    "oldest-first-sum": (OldestFirstSum, ("chronological-order",)),
    "isinstance-int": (IsInstanceInt, ("bool-as-integer",)),
}


# -- adapter protocol v1 ---------------------------------------------------------------------


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def answer(session: dict[str, Any], factory: Callable[..., Port], line: bytes) -> dict[str, Any]:
    try:
        request = json.loads(line.decode("utf-8"), parse_constant=_constant)
    except (ValueError, RecursionError):
        return {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "bad line"}}
    if not isinstance(request, dict) or not is_int(request.get("id")):
        return {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "no id"}}
    rid = request["id"]
    try:
        return {"id": rid, "ok": True, **handle(session, factory, request)}
    except Refused as refusal:
        return {"id": rid, "ok": False, "error": {"kind": refusal.kind, "message": str(refusal)}}


def handle(session: dict[str, Any], factory: Callable[..., Port], request: dict) -> dict:
    op = request.get("op")
    needs = {"hello": ("protocol",), "new": ("params", "seed"), "step": ("pos", "attn")}
    if op not in ("hello", "new", "step", "evict", "bye", "scores"):
        raise Refused("bad-request", "unknown op")
    if op == "scores":
        raise Refused("unsupported", "no scores")
    for name in needs.get(op, ()):
        if name not in request:
            raise Refused("bad-request", f"missing {name}")
    if op == "hello":
        if not (is_int(request["protocol"]) and request["protocol"] == 1):
            raise Refused("unsupported", "protocol 1 only")
        implementation = {
            "name": f"heldout:{session['name']}",
            "language": "python",
            "version": "1",
        }
        return {"protocol": 1, "implementation": implementation, "capabilities": []}
    if op == "bye":
        session["done"] = True
        return {}
    if op == "new":
        session["policy"] = factory(request["params"], request["seed"])
        return {}
    policy = session.get("policy")
    if policy is None:
        raise Refused("no-policy", "no policy")
    if op == "step":
        policy.step(request["pos"], request["attn"])
        return {}
    return {"victims": policy.evict()}


def main(
    name: str, ports: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] | None = None
) -> int:
    factory = (PORTS if ports is None else ports)[name][0]
    session: dict[str, Any] = {"name": name, "done": False}
    for line in sys.stdin.buffer:
        if not line.strip(b" \t\r\n"):
            continue
        sys.stdout.write(json.dumps(answer(session, factory, line)) + "\n")
        sys.stdout.flush()
        if session["done"]:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

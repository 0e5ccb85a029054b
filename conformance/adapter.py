"""The reference adapter: serves a policy over protocol v1 (SPEC.md §3) on stdin/stdout.

One JSON object per line in, one per line out, in order, flushed per line. The loop reads a
line, answers it and moves on, so a caller may pipeline any number of requests before reading
an answer. Nothing a caller sends can crash it: every malformed request gets ``bad-request``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any, ClassVar

from conformance import __version__
from conformance.policy import (
    PolicyError,
    SnapKV,
    fast_policy,
    is_json_integer,
    json_repr,
    new_policy,
)

PROTOCOL_VERSION = 1
CAPABILITIES = ("scores",)

PolicyFactory = Callable[[Mapping[str, Any], int], SnapKV]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


#: What ``json.loads(line, parse_constant=...)`` would build afresh for every line.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def decode_request(line: bytes | str) -> Any:
    """Parse one request line as strict UTF-8 JSON (no ``NaN``/``Infinity``); raise ValueError.

    Bytes are decoded as UTF-8 here because ``json.loads`` would otherwise guess UTF-16 or
    UTF-32 from the first bytes. Nesting too deep for the parser is a ValueError too, not a
    crash.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8")
    try:
        return _DECODER.decode(line)
    except RecursionError:
        raise ValueError("the request nests too deeply") from None


#: What ``json.dumps(message, separators=(",", ":"), allow_nan=False)`` would build per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode(message: Mapping[str, Any]) -> bytes:
    """One response line: compact JSON, shortest round-trip floats, a trailing newline."""
    return _ENCODER.encode(message).encode() + b"\n"


class Session:
    """The state of one adapter connection: the current policy, if any, and its factory."""

    def __init__(
        self,
        factory: PolicyFactory = new_policy,
        implementation: Mapping[str, str] | None = None,
    ) -> None:
        self.factory = factory
        self.implementation = dict(
            implementation
            or {
                "name": "snapkv-conformance reference",
                "language": "python",
                "version": __version__,
            }
        )
        self.policy: SnapKV | None = None
        self.finished = False

    def handle_line(self, line: bytes | str) -> dict[str, Any]:
        """Answer one request line; never raises."""
        try:
            request = decode_request(line)
        except (ValueError, UnicodeDecodeError) as error:
            return refusal(None, "bad-request", f"request is not a JSON object line: {error}")
        if not isinstance(request, dict):
            return refusal(
                None, "bad-request", f"request must be an object, got {json_repr(request)}"
            )
        return self.handle(request)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one decoded request; never raises."""
        request_id = request.get("id")
        if not is_json_integer(request_id):
            return refusal(
                None,
                "bad-request",
                f"id must be an integer, got {json_repr(request_id)}",
            )
        op = request.get("op")
        handler = self.HANDLERS.get(op) if isinstance(op, str) else None
        if handler is None:
            return refusal(request_id, "bad-request", f"unknown op {json_repr(op)}")
        try:
            result = handler(self, request)
        except PolicyError as error:
            return refusal(request_id, error.kind, error.message)
        return {"id": request_id, "ok": True, **result}

    # -- ops ---------------------------------------------------------------------------------

    def op_hello(self, request: dict[str, Any]) -> dict[str, Any]:
        protocol = _required(request, "protocol")
        if protocol != PROTOCOL_VERSION or not is_json_integer(protocol):
            raise PolicyError(
                "unsupported",
                f"this adapter speaks protocol {PROTOCOL_VERSION}, not {json_repr(protocol)}",
            )
        return {
            "protocol": PROTOCOL_VERSION,
            "implementation": self.implementation,
            "capabilities": list(CAPABILITIES),
        }

    def op_new(self, request: dict[str, Any]) -> dict[str, Any]:
        params = _required(request, "params")
        seed = _required(request, "seed")
        if not is_json_integer(seed):
            raise PolicyError("invalid-params", f"seed must be an integer, got {json_repr(seed)}")
        self.policy = self.factory(params, seed)
        return {}

    def op_step(self, request: dict[str, Any]) -> dict[str, Any]:
        pos = _required(request, "pos")
        attn = _required(request, "attn")
        self._policy().step(pos, attn)
        return {}

    def op_evict(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"victims": self._policy().evict()}

    def op_scores(self, request: dict[str, Any]) -> dict[str, Any]:
        scores = self._policy().scores()
        return {"positions": scores.positions, "sums": scores.sums, "pooled": scores.pooled}

    def op_bye(self, request: dict[str, Any]) -> dict[str, Any]:
        self.finished = True
        return {}

    HANDLERS: ClassVar[dict[str, Callable[[Session, dict[str, Any]], dict[str, Any]]]] = {
        "hello": op_hello,
        "new": op_new,
        "step": op_step,
        "evict": op_evict,
        "scores": op_scores,
        "bye": op_bye,
    }

    def _policy(self) -> SnapKV:
        if self.policy is None:
            raise PolicyError("no-policy", "no policy: send an accepted new first")
        return self.policy


def refusal(request_id: Any, kind: str, message: str) -> dict[str, Any]:
    """A protocol v1 refusal response."""
    return {"id": request_id, "ok": False, "error": {"kind": kind, "message": message}}


def _required(request: dict[str, Any], field: str) -> Any:
    if field not in request:
        raise PolicyError("bad-request", f"{request['op']} request is missing {field!r}")
    return request[field]


def serve(
    instream: IO[bytes],
    outstream: IO[bytes],
    factory: PolicyFactory = new_policy,
    implementation: Mapping[str, str] | None = None,
) -> int:
    """Answer requests from ``instream`` until ``bye`` or end of input; return the exit status."""
    session = Session(factory, implementation)
    for line in instream:
        if not line.strip(b" \t\r\n"):
            continue
        outstream.write(encode(session.handle_line(line)))
        outstream.flush()
        if session.finished:
            break
    return 0


def main(
    factory: PolicyFactory = fast_policy, implementation: Mapping[str, str] | None = None
) -> int:
    """Serve on the process's stdin/stdout (by default the reference's numpy fast path, which
    answers as the reference does, bit for bit, and is quicker on long traces).

    stdin is re-opened with a 1 MiB buffer: a step line carries thousands of weights, and the
    default 8 KiB buffer would cost several read calls per line. (A buffered read returns
    what the pipe holds; it never waits for the buffer to fill.)
    """
    with open(sys.stdin.fileno(), "rb", buffering=1 << 20, closefd=False) as instream:
        return serve(instream, sys.stdout.buffer, factory, implementation)

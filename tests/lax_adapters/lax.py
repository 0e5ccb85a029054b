"""Lax adapters: the reference policy behind a protocol layer lax in one everyday way.

``python tests/lax_adapters/lax.py MODE`` serves the reference, except for one habit of real
protocol layers that SPEC.md §3 rules out. The policy is right, so every vector passes; only
the protocol checks (``vectors/protocol/``) can tell. The modes:

- ``params-any-case``: params names matched case-insensitively, as Go's encoding/json does
  when it decodes into a struct.
- ``hello-loose``: hello accepts any protocol equal to 1 by ``==`` (``true``, ``1.0``).
- ``nan-parsed``: ``NaN``, ``Infinity`` and ``-Infinity`` parsed as numbers (json.loads).
- ``any-id``: whatever the id is, it is echoed and the request handled.
- ``unknown-op-ok``: an op it does not know is answered ``ok``.
- ``step-attn-default``: a step without ``attn`` is taken as a null step.
- ``blank-line-answered``: a blank line is answered with bad-request.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter.server import Session, encode, refusal
from conformance.policy.reference import PARAM_NAMES

MODES = (
    "params-any-case",
    "hello-loose",
    "nan-parsed",
    "any-id",
    "unknown-op-ok",
    "step-attn-default",
    "blank-line-answered",
)


def answer(session: Session, mode: str, line: bytes) -> dict[str, Any] | None:
    if not line.strip(b" \t\r\n"):
        return refusal(None, "bad-request", "empty line") if mode == "blank-line-answered" else None
    if mode != "nan-parsed":
        try:
            request = json.loads(line.decode("utf-8"), parse_constant=_refuse)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return session.handle_line(line)  # the reference's refusal
    else:
        try:
            request = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            return session.handle_line(line)
    if not isinstance(request, dict):
        return session.handle(request) if isinstance(request, dict) else session.handle_line(line)
    op = request.get("op")
    if mode == "params-any-case" and op == "new" and isinstance(request.get("params"), dict):
        canonical = {name.lower(): name for name in PARAM_NAMES}
        request["params"] = {canonical.get(k.lower(), k): v for k, v in request["params"].items()}
    if mode == "hello-loose" and op == "hello" and request.get("protocol") == 1:
        request["protocol"] = 1
    if mode == "unknown-op-ok" and op not in Session.HANDLERS:
        return {"id": request.get("id"), "ok": True}
    if mode == "step-attn-default" and op == "step":
        request.setdefault("attn", None)
    if mode == "any-id" and "id" in request and type(request["id"]) is not int:
        given = request["id"]
        response = session.handle({**request, "id": 0})
        response["id"] = given
        return response
    return session.handle(request)


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def main(mode: str) -> int:
    if mode not in MODES:
        print(f"unknown mode {mode!r}; one of {', '.join(MODES)}", file=sys.stderr)
        return 2
    session = Session(implementation={"name": f"lax {mode}", "language": "python", "version": "0"})
    for line in sys.stdin.buffer:
        response = answer(session, mode, line)
        if response is None:
            continue
        sys.stdout.buffer.write(encode(response))
        sys.stdout.buffer.flush()
        if session.finished:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env python3
"""A naive protocol v1 adapter: plain ``json`` and the plain-Python oracle policy.

The yardstick of ``bench_adapter.py``: what a straightforward Python port costs, with no fast
JSON reader and no numpy. The policy is :class:`OracleSnapKV` from ``tests/support/oracles.py``
(imported by path: it imports nothing from the kit). It answers what a well-formed benchmark
stream needs (hello, new, step, evict, bye) and refuses as the oracle does; it is not a
conforming adapter for hostile input.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_ORACLES = Path(__file__).resolve().parents[1] / "tests" / "support" / "oracles.py"
_spec = importlib.util.spec_from_file_location("naive_oracles", _ORACLES)
assert _spec is not None and _spec.loader is not None
oracles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracles)


def answer(policy: list, request: dict) -> dict:
    op = request.get("op")
    try:
        if op == "hello":
            implementation = {"name": "naive", "language": "python", "version": "0"}
            return {"ok": True, "protocol": 1, "implementation": implementation, "capabilities": []}
        if op == "new":
            policy[:] = [oracles.OracleSnapKV(request["params"], request["seed"])]
            return {"ok": True}
        if op == "step":
            policy[0].step(request["pos"], request["attn"])
            return {"ok": True}
        if op == "evict":
            return {"ok": True, "victims": policy[0].evict()}
        if op == "bye":
            return {"ok": True}
    except oracles.OracleError as error:
        return {"ok": False, "error": {"kind": error.kind, "message": str(error)}}
    return {"ok": False, "error": {"kind": "bad-request", "message": f"unknown op {op!r}"}}


def main() -> int:
    policy: list = []
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        sys.stdout.write(json.dumps({"id": request["id"], **answer(policy, request)}) + "\n")
        sys.stdout.flush()
        if request.get("op") == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

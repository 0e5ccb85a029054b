"""Refuses every evict with a 1 MiB message."""

import json
import sys

from _common import serve

MESSAGE = "x" * (1 << 20)


def fault(request, line, armed):
    if request.get("op") == "evict":
        error = {"kind": "invalid-attention", "message": MESSAGE}
        return json.dumps({"id": request["id"], "ok": False, "error": error}).encode() + b"\n"
    return None


if __name__ == "__main__":
    sys.exit(serve(fault, name="huge refusals"))

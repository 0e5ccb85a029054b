"""Writes its answer to hello (guessing id 1) before reading anything, then serves normally,
so the real hello gets a second answer."""

import json
import sys

from _common import out, serve

if __name__ == "__main__":
    implementation = {"name": "hello before asked", "language": "python", "version": "0"}
    early = {
        "id": 1,
        "ok": True,
        "protocol": 1,
        "implementation": implementation,
        "capabilities": [],
    }
    out(json.dumps(early).encode() + b"\n")
    sys.exit(serve(lambda request, line, armed: None, name="hello before asked"))

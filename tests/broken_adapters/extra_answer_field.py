"""Adds a field the protocol does not define to every evict answer: the checker accepts it
(unknown fields are no shape rule of its own), the closed response schema does not."""

import json
import sys

from _common import serve


def extra_field(request, line, armed):
    answer = json.loads(line)
    if request.get("op") == "evict" and answer.get("ok"):
        answer["note"] = "extra"
        return json.dumps(answer).encode() + b"\n"
    return None


if __name__ == "__main__":
    sys.exit(serve(extra_field, name="extra answer field"))

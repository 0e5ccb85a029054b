"""Refuses bad attention with the made-up kind invalid-weights instead of invalid-attention."""

import json
import sys

from _common import serve


def rename(request, line, armed):
    answer = json.loads(line)
    if not answer["ok"] and answer["error"]["kind"] == "invalid-attention":
        answer["error"]["kind"] = "invalid-weights"
        return json.dumps(answer).encode() + b"\n"
    return None


if __name__ == "__main__":
    sys.exit(serve(rename, name="unknown error kind"))

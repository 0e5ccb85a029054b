"""Answers an armed evict with an id one too high."""

import json
import sys

from _common import at_evict, serve


def wrong(request, line):
    answer = json.loads(line)
    answer["id"] += 1
    return json.dumps(answer).encode() + b"\n"


if __name__ == "__main__":
    sys.exit(serve(at_evict(wrong), name="wrong id"))

"""Returns the victims of every evict in descending order (right positions, wrong order)."""

import json
import sys

from _common import serve


def descending(request, line, armed):
    answer = json.loads(line)
    if request.get("op") == "evict" and answer.get("ok"):
        answer["victims"].sort(reverse=True)
        return json.dumps(answer).encode() + b"\n"
    return None


if __name__ == "__main__":
    sys.exit(serve(descending, name="victims descending"))

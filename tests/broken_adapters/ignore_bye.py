"""Answers bye but never exits, even at the end of its input."""

import sys
import time

from _common import serve


def fault(request, line, armed):
    if request.get("op") == "bye":
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        while True:
            time.sleep(3600)
    return None


if __name__ == "__main__":
    sys.exit(serve(fault, name="ignores bye"))

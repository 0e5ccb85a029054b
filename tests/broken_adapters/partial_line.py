"""Writes half of the answer to an armed evict, without a newline, and exits with status 0."""

import os
import sys

from _common import TRIGGER, at_evict, out, serve


def partial(request, line):
    out(line[: len(line) // 2])
    sys.stderr.write(f"giving up after admitting {TRIGGER}\n")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(serve(at_evict(partial), name="partial line"))

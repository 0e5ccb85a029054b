"""Killed by SIGSEGV while admitting the trigger position, after a line on stderr."""

import os
import signal
import sys

from _common import TRIGGER, serve


def fault(request, line, armed):
    if request.get("op") == "step" and request.get("pos") == TRIGGER:
        sys.stderr.write(f"about to dereference a dangling pointer at pos {TRIGGER}\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    return None


if __name__ == "__main__":
    sys.exit(serve(fault, name="crash mid-vector"))

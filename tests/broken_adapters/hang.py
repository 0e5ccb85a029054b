"""Stops answering (sleeps) at the step admitting the trigger position."""

import sys
import time

from _common import TRIGGER, serve


def fault(request, line, armed):
    if request.get("op") == "step" and request.get("pos") == TRIGGER:
        time.sleep(3600)
    return None


if __name__ == "__main__":
    sys.exit(serve(fault, name="hang"))

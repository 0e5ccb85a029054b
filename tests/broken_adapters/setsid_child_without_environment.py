"""Starts a child in a session of its own (``setsid``: it leaves the adapter's process group)
and with an empty environment (no trace of where it came from) that inherits stdout and
sleeps for an hour (its pid written to the file named by the first argument), then exits with
status 3 while admitting the trigger position: a crash while a descendant that neither killing
the group nor its environment can find still holds the pipe the answers come on."""

import os
import subprocess
import sys
from pathlib import Path

from _common import TRIGGER, serve


def fault(request, line, armed):
    if request.get("op") == "step" and request.get("pos") == TRIGGER:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True, env={}
        )
        Path(sys.argv[1]).write_text(str(child.pid))
        os._exit(3)
    return None


if __name__ == "__main__":
    sys.exit(serve(fault, name="setsid child without environment holds stdout"))

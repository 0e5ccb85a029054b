"""Daemonises: forks a child that would serve the protocol, and exits at once with status 0.
The child's pid is written to the file named by the first argument."""

import os
import sys
import time
from pathlib import Path

from _common import serve

if __name__ == "__main__":
    pid = os.fork()
    if pid:
        Path(sys.argv[1]).write_text(str(pid))
        os._exit(0)
    time.sleep(0.5)  # a daemon's start-up; its parent has exited by then
    sys.exit(serve(lambda request, line, armed: None, name="forks and exits"))

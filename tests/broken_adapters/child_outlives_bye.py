"""Starts a child process (in its process group) that would run for an hour, writes the child's
pid to the file named by its first argument, then serves normally and exits after bye."""

import subprocess
import sys
from pathlib import Path

from _common import serve

if __name__ == "__main__":
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    Path(sys.argv[1]).write_text(str(child.pid))
    sys.exit(serve(lambda request, line, armed: None, name="child outlives bye"))

"""Answers bye, then dies of SIGSEGV (a crash in a destructor, say)."""

import os
import signal

from _common import serve

if __name__ == "__main__":
    serve(lambda request, line, armed: None, name="bad exit after bye")
    os.kill(os.getpid(), signal.SIGSEGV)

"""A correct adapter that writes 64 KiB to stderr before every answer (it must pass)."""

import sys

from _common import serve

NOISE = b"debug: " + b"." * 65528 + b"\n"


def chatter(request, line, armed):
    sys.stderr.buffer.write(NOISE)
    sys.stderr.buffer.flush()
    return None


if __name__ == "__main__":
    sys.exit(serve(chatter, name="stderr flood"))

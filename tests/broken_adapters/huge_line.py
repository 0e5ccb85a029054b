"""Answers an armed evict with a 20 MiB line (past the runner's 16 MiB cap)."""

import sys

from _common import at_evict, serve


def huge(request, line):
    return line[:-2] + b',"padding":"' + b"x" * (20 * 1024 * 1024) + b'"}\n'


if __name__ == "__main__":
    sys.exit(serve(at_evict(huge), name="huge line"))

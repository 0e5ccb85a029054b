"""Answers an armed evict with a line that is not JSON."""

import sys

from _common import at_evict, serve

if __name__ == "__main__":
    sys.exit(serve(at_evict(lambda request, line: b"victims: 1 2 3\n"), name="non-JSON line"))

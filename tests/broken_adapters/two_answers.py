"""Answers an armed evict twice."""

import sys

from _common import at_evict, serve

if __name__ == "__main__":
    sys.exit(serve(at_evict(lambda request, line: line + line), name="two answers"))

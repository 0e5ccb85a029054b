"""Answers an armed evict with bytes that are not UTF-8 inside an otherwise valid answer."""

import sys

from _common import at_evict, serve


def latin1(request, line):
    return line[:-2] + b',"note":"caf\xe9"}\n'


if __name__ == "__main__":
    sys.exit(serve(at_evict(latin1), name="non-UTF-8 bytes"))

"""Answers an armed evict with victims nested 1,000 arrays deep (a 2 KB line)."""

import sys

from _common import at_evict, serve


def nested(request, line):
    depth = 1000
    return b'{"id":%d,"ok":true,"victims":%s%s}\n' % (request["id"], b"[" * depth, b"]" * depth)


if __name__ == "__main__":
    sys.exit(serve(at_evict(nested), name="deeply nested"))

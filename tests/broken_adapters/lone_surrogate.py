"""Refuses an armed evict with a message holding a lone surrogate escape (legal JSON) and ESC."""

import sys

from _common import at_evict, serve


def refuse(request, line):
    error = b'{"kind":"invalid-attention","message":"bad \\ud800 \\u001b[31m red"}'
    return b'{"id":%d,"ok":false,"error":%s}\n' % (request["id"], error)


if __name__ == "__main__":
    sys.exit(serve(at_evict(refuse), name="lone surrogate"))

"""Once armed, answers an evict with the victim ``1e400``: valid JSON, beyond any float64."""

import sys

from _common import at_evict, serve


def overflow(request, line):
    return b'{"id":%d,"ok":true,"victims":[1e400]}\n' % request["id"]


if __name__ == "__main__":
    sys.exit(serve(at_evict(overflow), name="overflowing victims"))

"""Puts terminal escapes, NUL and lone surrogates (legal JSON escapes) in every string it can.

Its hello name, its stderr and, once armed, a refusal of the next evict carry ESC sequences
(clear screen, set the window title), NUL and the escape ``\\ud800``, which JSON allows but
UTF-8 cannot encode. The kit must print and write all of it escaped.
"""

import sys

from _common import at_evict, serve

HOSTILE = r"\u001b[2J\u001b]0;pwned\u0007\u0000\ud800"


def hostile(request, line, armed):
    if request.get("op") == "hello":
        return (
            b'{"id":%d,"ok":true,"protocol":1,"implementation":{"name":"hostile %s",'
            b'"language":"python","version":"0"},"capabilities":[]}\n'
            % (request["id"], HOSTILE.encode())
        )
    return None


def refuse(request, line):
    sys.stderr.write("stderr \x1b[31mred\x00\n")
    sys.stderr.flush()
    return b'{"id":%d,"ok":false,"error":{"kind":"bad-request","message":"%s"}}\n' % (
        request["id"],
        HOSTILE.encode(),
    )


armed_refusal = at_evict(refuse)


def fault(request, line, armed):
    return hostile(request, line, armed) or armed_refusal(request, line, armed)


if __name__ == "__main__":
    sys.exit(serve(fault, name="hostile text"))

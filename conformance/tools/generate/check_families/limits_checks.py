"""Protocol checks of the implementation limits (SPEC.md §3.1): what every port must read, and
an answer, never a crash, beyond its own limits."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, NEW, draft, line

#: SPEC.md §3.1's minimum limits: a line's bytes before its LF, and nesting levels (the
#: request object is level 1).
MIN_LINE = 1 << 20
MIN_DEPTH = 64


def nested(levels: int) -> str:
    """A value nesting ``levels`` arrays and objects, alternately, around 0."""
    opening = "".join('{"a":' if level % 2 else "[" for level in range(levels))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(levels)))
    return opening + "0" + closing


def padded(request_id: int, size: int) -> str:
    """An evict of exactly ``size`` bytes before its LF, made long by a field it ignores."""
    head, tail = '{"id":' + str(request_id) + ',"op":"evict","pad":"', '"}'
    return head + "x" * (size - len(head) - len(tail)) + tail + "\n"


def drafts() -> Iterator[CheckDraft]:
    deep = "[" * 100_000 + "]" * 100_000
    yield draft(
        "deep-nesting",
        "SPEC.md §3.1: an adapter may refuse nesting beyond its limits with bad-request, and "
        "must answer",
        "A request nested 100,000 levels deep gets an answer (bad-request, or ok from a "
        "parser without a depth limit), and the session goes on.",
        "a recursive parser that overflows its stack and kills the adapter",
        (HELLO, NEW, '{"id":3,"op":"evict","x":' + deep + "}\n", line({"id": 4, "op": "evict"})),
        ("ok", "ok", "bad-request", "ok"),
        latitude={2: ({"id": 3, "ok": False, "error": "bad-request"}, {"id": 3, "ok": True})},
        spec=("S3.1-limits",),
    )
    forty = "1234567890" * 4
    yield draft(
        "minimum-limits",
        "SPEC.md §3.1: every adapter reads lines of up to 1 MiB, nesting up to 64 levels and "
        "integer literals of up to 40 digits",
        "A request line of exactly 1 MiB (1,048,576 bytes before its LF), a request nested "
        "64 levels deep (the request itself level 1) and integer literals of 40 digits in a "
        "field the adapter ignores are each answered as usual; a request nested 65 levels deep "
        "may be refused with bad-request, and the session goes on.",
        "a line buffer of fixed size (4 KiB, 16 KiB, 64 KiB: the line cut short, refused or "
        "read as two), a parser whose depth limit is below 64, or an integer reader that "
        "refuses literals beyond 64 bits in fields it ignores",
        (
            HELLO,
            NEW,
            padded(3, MIN_LINE),
            '{"id":4,"op":"evict","x":' + nested(MIN_DEPTH - 1) + "}\n",
            '{"id":5,"op":"evict","x":' + nested(MIN_DEPTH) + "}\n",
            '{"id":6,"op":"evict","x":[' + forty + ",-" + forty + "]}\n",
            '{"id":' + forty + ',"op":"evict"}\n',
            line({"id": 8, "op": "evict"}),
        ),
        ("ok", "ok", "ok", "ok", "bad-request", "ok", "ok", "ok"),
        latitude={4: ({"id": 5, "ok": False, "error": "bad-request"}, {"id": 5, "ok": True})},
        spec=("S3.1-limits",),
    )

"""The canonical layout of a suite file, in one place: how a vector or a protocol check is
written (:func:`text`, what the generator writes byte for byte), and what the readers that rely
on it read (``run``'s fast reader, the loader's line-by-line parse, the kill matrix's digest).

::

    {
      "format": "snapkv-vector/1",
      "id": "ties/lower-position-first",
      ...
      "calls": [
        {"op":"new","params":{...},"seed":0},
        {"op":"evict","expect":{"victims":[0]}}
      ]
    }

Each top-level field on a line of its own, two spaces in, its value compact; then the arrays
(a vector's ``calls``, last; a check's ``send`` and ``expect``), each member on a line of its
own, four spaces in, compact, a comma after every member but the last. A JSON string cannot
hold a raw newline, so each member line holds exactly one member, and a call's ``expect``, when
it has one, is its last member (:func:`without_expect`).

Invariant: what :func:`text` writes is what :data:`ID_LINE`, :func:`calls_region`,
:func:`call_spans`, :func:`count_calls` and :func:`without_expect` read; a file in any other
layout is read by the loader whole, never misread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from conformance.spec.protocol import dumps

#: How far in a top-level field, and an array's member, are written.
FIELD_INDENT = "  "
MEMBER_INDENT = "    "
#: The calls array's opening, as a field of a vector (without its indent).
CALLS_KEY = b'"calls": ['
#: The line that opens the calls, and what ends a file whose last array is its calls.
CALLS_OPEN = FIELD_INDENT.encode() + CALLS_KEY
CALLS_CLOSE = b"\n" + FIELD_INDENT.encode() + b"]\n}\n"
#: A file's head up to its id: the fields before it, each on its line, then ``"id"``.
ID_LINE = re.compile(rb'\A\{\n(?:  "[a-z]+": [^\n]*,\n)*?  "id": ("(?:[^"\\\n]|\\.)*"),\n')


def compact(value: object) -> str:
    """A value as the layout writes it: JSON without spaces, non-ASCII kept as it is."""
    return dumps(value, ensure_ascii=False)


def text(fields: Iterable[tuple[str, str]], arrays: Iterable[tuple[str, Iterable[str]]]) -> str:
    """The file: each top-level field (its name, its value already :func:`compact`) on a line,
    then each array (its name, its members already written) with a member per line."""
    head = "".join(f"{FIELD_INDENT}{json.dumps(name)}: {value},\n" for name, value in fields)
    blocks = (
        f"{FIELD_INDENT}{json.dumps(name)}: [\n"
        + ",\n".join(MEMBER_INDENT + member for member in members)
        + f"\n{FIELD_INDENT}]"
        for name, members in arrays
    )
    return "{\n" + head + ",\n".join(blocks) + "\n}\n"


def calls_region(data: bytes) -> tuple[bytes, int, int, int] | None:
    """For a vector file in the layout (its calls the last array): the text before the calls
    as an object of its own (still to be decoded), where the call lines begin and end, and how
    many there are; None for a file in any other layout."""
    start = data.find(b"\n" + CALLS_OPEN + b"\n")
    if not data.startswith(b"{\n") or start < 0 or not data.endswith(CALLS_CLOSE):
        return None
    head = b"{" + data[2:start].rstrip(b",") + b"}"
    begin, end = start + len(CALLS_OPEN) + 2, len(data) - len(CALLS_CLOSE)
    count = data.count(b"\n", begin, end) + 1 if begin < end else 0
    return head, begin, end, count


def call_spans(data: bytes, begin: int, end: int, count: int) -> Iterator[tuple[int, int]]:
    """Where each of the ``count`` call lines between ``begin`` and ``end`` holds its JSON
    object (the line less its indent and comma); ``(-1, -1)`` for a line out of the layout,
    after which nothing more is read."""
    indent = len(MEMBER_INDENT)
    opening = MEMBER_INDENT.encode() + b"{"
    pos = begin
    for number in range(count):
        stop = data.find(b"\n", pos, end)
        if stop < 0:
            stop = end
        last = stop
        if number < count - 1:
            if data[stop - 1 : stop] != b",":
                yield -1, -1
                return
            last = stop - 1
        if data[pos : pos + indent + 1] != opening:
            yield -1, -1
            return
        yield pos + indent, last
        pos = stop + 1


def count_calls(data: bytes) -> int:
    """How many calls a vector file in the layout holds, counted without parsing it: each
    call's line opens with the member indent and a brace, and every other line otherwise. A
    file of another layout counts as holding none."""
    return data.count(b"\n" + MEMBER_INDENT.encode() + b"{")


def without_expect(line: bytes) -> bytes | None:
    """A call line's request as sent (``"op":...}\\n``): the line less its ``expect`` member,
    when that member is the line's last, written as the layout writes it; else None.

    ``,"expect":{`` cannot occur inside a JSON string (a quote there is escaped), so the last
    occurrence is a member name; it is the call's own when the text after it is exactly one
    object and the brace that closes the call.
    """
    start = line.rfind(b',"expect":{')
    if start < 0 or not line.endswith(b"}}"):
        return None
    member = line[start + 10 : -1]
    try:
        expect = json.loads(member)
    except ValueError:
        return None
    if not isinstance(expect, dict) or compact(expect).encode() != member:
        return None
    return line[1:start] + b"}\n"

"""The bytes of a vector's requests, taken from its file's text where that is exact.

Encoding attention weights costs the runner about as much as decoding them costs the adapter,
and a vector file in the canonical layout (:func:`conformance.vectors.dumps_vector`) already
holds each call as one compact JSON line. :func:`prepare_vector` reuses those lines from the
text the vector was loaded from (``Vector.source``, so exactly what was parsed), checking that
each line is its call, and encodes the parsed requests wherever it cannot be sure.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.driver import Prepared, encode_body
from conformance.vectors import Vector

# The bytes a list of JSON numbers is made of (a step's attn as a vector file writes it).
_NUMBER_LIST_BYTES = b"0123456789.eE+-,"
_CALLS_OPEN = '\n  "calls": [\n'
_EVICT_BODY = b'"op":"evict"}\n'


def prepare_vector(vector: Vector) -> Prepared:
    """The vector's requests, with their bodies taken from its source text where possible."""
    requests = [call.request for call in vector.calls]
    lines = _call_lines(vector)
    if lines is not None:
        bodies = [_verbatim(call, line) for call, line in zip(vector.calls, lines, strict=True)]
        if all(body is not None for body in bodies):
            return Prepared(requests, bodies)  # type: ignore[arg-type]
    return Prepared(requests)


def _call_lines(vector: Vector) -> list[bytes] | None:
    """The source's call lines, one per call, if its layout is the canonical one.

    That is: the calls array opens on a line of its own, holds one call per line, and closes
    the document (``]`` then ``}``), so it is the top-level ``calls`` the vector was read from.
    """
    text = vector.source
    if text is None or not vector.calls:
        return None
    start = text.rfind(_CALLS_OPEN)
    if start < 0:
        return None
    count = len(vector.calls)
    lines = text[start + len(_CALLS_OPEN) :].encode().split(b"\n", count)
    if len(lines) <= count or lines[count].split() != [b"]", b"}"]:
        return None
    calls = [line.strip() for line in lines[:count]]
    if not all(line.endswith(b",") for line in calls[:-1]):
        return None
    return [line[:-1] for line in calls[:-1]] + calls[-1:]


def _verbatim(call: Any, line: bytes) -> bytes | None:
    """The request body from ``line`` if ``line`` is exactly ``call``, else None.

    A step line is checked by its text: it must start with the compact JSON of the call's other
    fields, and the rest up to the closing brace must be ``null`` or a list of numbers (so it
    is one object and that text is the attention). Other lines are small: they are parsed and
    compared, and their bodies encoded.
    """
    request = call.request
    if call.op == "evict" and len(request) == 1:
        # The common shapes, checked without a JSON round trip: evict lines are most others.
        expected = b'{"op":"evict"}'
        if call.expect is not None and call.expected_victims is not None:
            victims = b",".join(b"%d" % v for v in call.expected_victims)
            expected = b'{"op":"evict","expect":{"victims":[' + victims + b"]}}"
        if line == expected:
            return _EVICT_BODY
    if call.op == "step" and call.expect is None and list(request)[-1] == "attn":
        if list(request) == ["op", "pos", "attn"] and type(request["pos"]) is int:
            prefix = b'{"op":"step","pos":%d,"attn":' % request["pos"]
        else:
            head = {key: value for key, value in request.items() if key != "attn"}
            prefix = _compact(head)[:-1] + b',"attn":'
        if line.startswith(prefix) and line.endswith(b"}"):
            attn = line[len(prefix) : -1]
            if attn == b"null" or (
                attn.startswith(b"[")
                and attn.endswith(b"]")
                and not attn[1:-1].translate(None, _NUMBER_LIST_BYTES)
            ):
                return line[1:] + b"\n"
    try:
        same = json.loads(line) == call.to_json()
    except ValueError:
        return None
    return encode_body(request) if same else None


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()

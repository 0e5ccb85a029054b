"""run's reader: an evict line read without the codec is read as the codec reads it."""

from __future__ import annotations

import pytest

from conformance.spec.protocol import decode
from conformance.suite.stream import _EVICT_EXPECTING, _read_call


@pytest.mark.parametrize(
    "line",
    [
        b'{"op":"evict","expect":{"victims":[]}}',
        b'{"op":"evict","expect":{"victims":[0]}}',
        b'{"op":"evict","expect":{"victims":[3,7,2147483647]}}',
        b'{"op":"evict","expect":{"victims":[2147483648,9999999999999999999]}}',
        b'{"op":"evict","expect":{"victims":[1,1]}}',
    ],
)
def test_an_evict_expecting_victims_is_read_as_the_codec_reads_it(line):
    assert _EVICT_EXPECTING.fullmatch(line)
    call, body, shown = _read_call(line)
    raw = decode(line, duplicates="refuse")
    assert repr(shown) == repr(raw)
    assert (call.request, call.expect) == ({"op": "evict"}, raw["expect"])
    assert body == b'"op":"evict"}\n'


@pytest.mark.parametrize(
    "line",
    [
        b'{"op":"evict","expect":{"victims":[01]}}',
        b'{"op":"evict","expect":{"victims":[1.0]}}',
        b'{"op":"evict","expect":{"victims":[-1]}}',
        b'{"op":"evict","expect":{"victims":[1], "x":0}}',
        b'{"op":"evict","expect":{"victims":[1]},"expect":{"victims":[2]}}',
        b'{"op":"evict","expect":{"error":"no-policy"}}',
    ],
)
def test_any_other_evict_line_is_left_to_the_codec(line):
    assert _EVICT_EXPECTING.fullmatch(line) is None

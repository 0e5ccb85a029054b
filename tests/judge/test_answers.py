"""An answer line read without the decoder is held exactly as the decoder would give it."""

from __future__ import annotations

import pytest

from conformance.judge.answers import decode_answer, held, read_answer


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":7,"ok":true}\n',
        b'{"id":7,"ok":true,"victims":[]}\n',
        b'{"id":7,"ok":true,"victims":[0]}\n',
        b'{"id":7,"ok":true,"victims":[3,1,2147483647,9999999999999999999]}\n',
        b'{"id":7,"ok":true,"victims":[1,1]}\n',  # judged later: kept as written
    ],
)
def test_a_compact_answer_is_read_as_the_decoder_reads_it(line):
    got = read_answer(line, 2, 5, 1)
    assert got == held(decode_answer(line))
    assert repr(got) == repr(decode_answer(line))


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":8,"ok":true,"victims":[1]}\n',  # another id
        b'{"id":7,"ok":true,"victims":[01]}\n',
        b'{"id":7,"ok":true,"victims":[1.0]}\n',
        b'{"id":7,"ok":true,"victims":[-1]}\n',
        b'{"id":7,"ok":true,"victims":[12345678901234567890]}\n',
        b'{"id":7,"ok":true,"victims":[1]}\r\n',
        b'{"id":7,"ok":true,"victims":[1],"victims":[2]}\n',
        b'{"id":7,"ok":true,"victims":[1]} \n',
    ],
)
def test_any_other_answer_is_read_by_the_decoder(line):
    got = read_answer(line, 2, 5, 1)
    decoded = decode_answer(line)
    if isinstance(decoded, dict) and decoded.get("id") == 7:
        assert got == held(decoded) and repr(got) == repr(held(decoded))
    else:
        assert not isinstance(got, dict) or got != {"id": 7, "ok": True, "victims": [1]}

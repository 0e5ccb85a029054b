"""Request lines as they go on the wire: each prepared body with its id spliced in, a batch
written whole or, when long, a piece at a time.

Invariant: bytes only: a body is the request line :func:`conformance.spec.protocol.encode_body`
made, without its opening brace; the line written is ``{"id":N,`` and that body, ids numbered
from a batch's first one, nothing else added, nothing re-encoded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: A batch of more requests than :data:`conformance.transport.session.HAND_OVER` (a long
#: vector) is written a piece of about this many bytes at a time.
PIECE = 1 << 20

#: A request line: its id spliced into a body prepared without its opening brace.
REQUEST_LINE = b'{"id":%d,%s'


@dataclass(frozen=True)
class Ticket:
    """A batch of requests sent and not yet received: its first id and its size."""

    first: int
    count: int


def with_ids(first: int, bodies: Sequence[bytes]) -> bytes:
    """The request lines of ``bodies``, ids from ``first`` spliced in (bodies lack the brace)."""
    return b"".join(REQUEST_LINE % (first + index, body) for index, body in enumerate(bodies))


def pieces(first: int, bodies: Sequence[bytes]) -> Iterator[bytes]:
    """The request lines of ``bodies`` (see :func:`with_ids`), about :data:`PIECE` bytes at a
    time, each made when the writer asks for it."""
    piece: list[bytes] = []
    size = 0
    for index in range(len(bodies)):
        line = REQUEST_LINE % (first + index, bodies[index])
        piece.append(line)
        size += len(line)
        if size >= PIECE:
            yield b"".join(piece)
            piece, size = [], 0
    if piece:
        yield b"".join(piece)

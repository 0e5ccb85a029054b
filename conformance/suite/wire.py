"""The bytes of a vector's requests, taken from its file where they are exact.

Encoding attention weights costs the runner about as much as decoding them costs the adapter,
and a vector file in the canonical layout (:func:`conformance.suite.vectors.dumps_vector`) already
holds each call as one compact JSON line. The loader keeps each call's line
(:attr:`conformance.suite.vectors.Call.line`), the very text the call was parsed from, and
:meth:`~conformance.suite.vectors.Call.body` sends it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.spec.protocol import decode, encode_body
from conformance.suite.vectors import Vector


class Prepared:
    """Requests (without ids) made ready for an exchange, each encoded or decoded at most once.

    A process adapter sends :attr:`bodies` (each request as compact JSON without its opening
    brace, so an id is spliced in without re-encoding the attention arrays); an in-process
    adapter uses :attr:`requests`. Either may be given; the other is made from it when needed.
    """

    __slots__ = ("_bodies", "_requests")
    _bodies: Sequence[bytes] | None

    def __init__(
        self,
        requests: Sequence[Mapping[str, Any]] | None,
        bodies: Sequence[bytes] | None = None,
    ) -> None:
        """``bodies``, when given with ``requests``, must be what :func:`encode_body` makes of
        them (or JSON text of the same values): the runner takes them from vector files."""
        if requests is None and bodies is None:
            raise ValueError("give requests or bodies")
        self._requests = tuple(requests) if requests is not None else None
        # A list is the caller's to change, so it is copied; any other sequence (a long
        # vector's bodies, made from its lines when asked for) is kept as it is.
        self._bodies = tuple(bodies) if isinstance(bodies, list) else bodies
        both = self._requests is not None and self._bodies is not None
        if both and len(self._bodies or ()) != len(self._requests or ()):
            raise ValueError("one body per request")

    def __len__(self) -> int:
        return len(self._bodies if self._bodies is not None else self._requests or ())

    @property
    def requests(self) -> tuple[Mapping[str, Any], ...]:
        if self._requests is None:
            assert self._bodies is not None
            self._requests = tuple(decode(b"{" + body) for body in self._bodies)
        return self._requests

    def ops(self) -> tuple[str, ...]:
        """Each request's ``op`` (as text), without keeping the decoded requests."""
        if self._requests is not None:
            return tuple(str(request.get("op")) for request in self._requests)
        assert self._bodies is not None
        return tuple(str(decode(b"{" + body).get("op")) for body in self._bodies)

    @property
    def bodies(self) -> Sequence[bytes]:
        if self._bodies is None:
            self._bodies = tuple(encode_body(request) for request in self.requests)
        return self._bodies


def prepare(requests: Sequence[Mapping[str, Any]] | Prepared) -> Prepared:
    """Wrap ``requests`` for a transport's ``send`` (a no-op on a Prepared)."""
    return requests if isinstance(requests, Prepared) else Prepared(requests)


def prepare_vector(vector: Vector) -> Prepared:
    """The vector's requests, with their bodies taken from its file's lines where possible."""
    requests = [call.request for call in vector.calls]
    if all(call.line is None for call in vector.calls):
        return Prepared(requests)  # built in memory: encoded only if a process needs it
    return Prepared(requests, [call.body() for call in vector.calls])

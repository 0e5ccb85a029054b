"""The bytes of a vector's requests, taken from its file where they are exact.

Encoding attention weights costs the runner about as much as decoding them costs the adapter,
and a vector file in the canonical layout (:func:`conformance.suite.vectors.dumps_vector`) already
holds each call as one compact JSON line. The loader keeps each call's line
(:attr:`conformance.suite.vectors.Call.line`), the very text the call was parsed from, and
:meth:`~conformance.suite.vectors.Call.body` sends it as it is.
"""

from __future__ import annotations

from conformance.suite.vectors import Vector
from conformance.transport.session import Prepared


def prepare_vector(vector: Vector) -> Prepared:
    """The vector's requests, with their bodies taken from its file's lines where possible."""
    requests = [call.request for call in vector.calls]
    if all(call.line is None for call in vector.calls):
        return Prepared(requests)  # built in memory: encoded only if a process needs it
    return Prepared(requests, [call.body() for call in vector.calls])

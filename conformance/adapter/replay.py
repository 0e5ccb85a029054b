"""Replaying requests on a fresh reference: the one helper the kit uses to get the reference's
answers to a call sequence (generating expectations, validating vectors, building witnesses and
fuzzing scenarios, diagnosing a failure, judging mutants in process).

Requests are protocol v1 requests without ``id`` (as a vector holds them); each is given its
index as ``id`` and answered by :class:`conformance.adapter.server.Session`, exactly as the
reference adapter answers it, so refusals come back as refusal responses and nothing is raised. A
weight kept as its text (:class:`conformance.spec.protocol.NumberText`) is read as an adapter reads
it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from conformance.policy.reference import PolicyFactory, new_policy
from conformance.spec.protocol import decoded

if TYPE_CHECKING:
    # Here: the server imports this module (the one replay helper it answers with).
    from conformance.adapter.server import Session


def replay(
    requests: Iterable[Mapping[str, Any]],
    factory: PolicyFactory = new_policy,
    *,
    session: Session | None = None,
) -> list[dict[str, Any]]:
    """The responses to ``requests``, answered in order by ``session`` (by default a fresh
    session whose policies ``factory`` makes). Pass a session to look at its policy after."""
    if session is None:
        # Here: the server imports this module (the one replay helper it answers with).
        from conformance.adapter.server import Session

        session = Session(factory)
    return [
        session.handle({**decoded(request), "id": index}) for index, request in enumerate(requests)
    ]

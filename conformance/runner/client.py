"""The kit's side of protocol v1 with one adapter: :class:`Client`.

A client drives a transport (:class:`conformance.transport.session.AdapterProcess`, or
:class:`conformance.transport.in_process.InProcessAdapter`): it shakes hands (``hello``, its
answer parsed into a :class:`Handshake`), sends batches of requests, reads each answer line by
the judge's rules as it arrives (:func:`conformance.judge.answers.read_answer`) and says
``bye``. A line those rules refuse makes the stream untrustworthy: it is a ``protocol``
:class:`~conformance.transport.failures.AdapterFailure`, blamed on the request it answers
when that can be told (an extra answer to the exchange before is ``earlier``); ``hello``
answered twice is an :class:`~conformance.transport.failures.AdapterStartError`.

Invariant: the transport moves the bytes and the judge's rules read them; a client keeps only
what reading needs (the first ids of the exchange being read and of the one before it, and
with ``validate_protocol`` the ops of the batches in flight) and the handshake.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from conformance.judge.answers import HELLO_ID, LineFault, held_victims, read_answer
from conformance.spec.protocol import PROTOCOL_VERSION, decode, parse_hello_answer
from conformance.suite.wire import Prepared, prepare
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.framing import Ticket
from conformance.transport.session import (
    ANSWER_TIMEOUT,
    STDERR_TAIL_LINES,
    AdapterProcess,
    Read,
    Take,
    Transport,
)


@dataclass(frozen=True)
class Handshake:
    """What the adapter said about itself in its answer to ``hello``."""

    name: str
    language: str
    version: str
    protocol: int
    capabilities: tuple[str, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def describe(self) -> str:
        """``name (language) version``, as reports print it."""
        return f"{self.name} ({self.language}) {self.version}"

    def to_json(self) -> dict[str, Any]:
        return {
            "implementation": {
                "name": self.name,
                "language": self.language,
                "version": self.version,
            },
            "protocol": self.protocol,
            "capabilities": list(self.capabilities),
        }


def parse_handshake(answer: Any) -> Handshake:
    """Check an answer to ``hello`` against protocol v1; raise :class:`AdapterStartError`."""
    try:
        hello = parse_hello_answer(answer)
    except ValueError as error:
        raise AdapterStartError(str(error)) from None
    return Handshake(
        name=hello.implementation["name"],
        language=hello.implementation["language"],
        version=hello.implementation["version"],
        protocol=hello.protocol,
        capabilities=hello.capabilities,
        raw=answer,
    )


class Client:
    """One adapter spoken to over protocol v1, through ``transport``.

    With ``validate_protocol`` every answer, the handshake's too, is also held to the shipped
    response schema (:func:`conformance.judge.answers.schema_problem`).
    """

    def __init__(self, transport: Transport, *, validate_protocol: bool = False) -> None:
        self.transport = transport
        self.validate_protocol = validate_protocol
        self.handshake: Handshake | None = None
        #: An extra answer to the last exchange, found while waiting for the answer to ``bye``.
        self.bye_failure: AdapterFailure | None = None
        self._bye_problems: list[str] = []
        # The first ids of the exchange being received and of the one before it (where an
        # extra answer belongs), and with validate_protocol the ops of the batches in flight.
        self._current_first = self._previous_first = HELLO_ID
        self._ops: dict[int, tuple[str, ...]] = {}
        #: The batches in flight that open with ``new`` (by first id): their victims bounded.
        self._fresh: set[int] = set()

    @classmethod
    def process(
        cls,
        argv: Sequence[str],
        timeout: float = ANSWER_TIMEOUT,
        *,
        validate_protocol: bool = False,
        **options: Any,
    ) -> Client:
        """A client of program ``argv`` (``options`` are
        :class:`~conformance.transport.session.AdapterProcess`'s)."""
        return cls(AdapterProcess(argv, timeout, **options), validate_protocol=validate_protocol)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Handshake:
        """Start the adapter and shake hands; raise :class:`AdapterStartError` on any fault."""
        transport = self.transport
        transport.start()
        self._current_first = self._previous_first = HELLO_ID
        self._ops = {}
        self._fresh = set()
        try:
            ticket = self.send([{"op": "hello", "protocol": PROTOCOL_VERSION}])
            assert ticket.first == HELLO_ID
            (answer,) = self.receive(ticket, timeout=transport.start_timeout)
        except AdapterFailure as failure:
            tail = transport.stderr_tail()
            transport.kill()
            raise AdapterStartError(
                f"the adapter {transport.command} did not complete the handshake: {failure.detail}",
                tail,
            ) from None
        try:
            self.handshake = parse_handshake(answer)
        except AdapterStartError as error:
            error.stderr_tail = transport.stderr_tail()
            transport.kill()
            raise
        return self.handshake

    def restart(self) -> Handshake:
        """Kill the adapter (no ``bye``: it may be hung) and start it again."""
        self.transport.kill()
        return self.start()

    def close(self) -> None:
        """Say ``bye``, then close the transport (a short grace period for the exit, then a
        kill). Idempotent."""
        transport = self.transport
        if not transport.running or not transport.says_bye:
            transport.kill()
            return
        try:
            self.exchange([{"op": "bye"}])  # answered within the per-call timeout
        except AdapterFailure as failure:
            if failure.earlier:
                self.bye_failure = failure  # the runner blames the vector it belongs to
            else:
                self._bye_problems.append(f"the answer to bye was wrong: {failure.detail}")
        except AdapterStartError as error:
            self._bye_problems.append(error.message)
        transport.close()

    @property
    def close_problems(self) -> list[str]:
        """Problems seen while closing (a wrong answer to ``bye``, an adapter that ignored it,
        ...), for reports."""
        return [*self._bye_problems, *self.transport.close_problems]

    def kill(self) -> None:
        """Kill the adapter at once, without ``bye``."""
        self.transport.kill()

    def cancel(self) -> None:
        """Kill the adapter and refuse to start it again (an interrupted run)."""
        self.transport.cancel()

    @property
    def running(self) -> bool:
        return self.transport.running

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        return self.transport.stderr_tail(lines)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the exchange ----------------------------------------------------------------------

    def send(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> Ticket:
        """Queue ``requests`` for writing and return at once (see
        :meth:`conformance.transport.session.AdapterProcess.send`)."""
        prepared = prepare(requests)
        ticket = self.transport.send(prepared)
        if self.validate_protocol:
            self._ops[ticket.first] = prepared.ops()
        if ticket.count and _opens_with_new(prepared):
            self._fresh.add(ticket.first)
        return ticket

    def receive(
        self, ticket: Ticket, into: Take | None = None, *, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """The answers to a batch sent with :meth:`send`, in order, each read by the judge's
        rules (see :meth:`conformance.transport.session.Transport.receive` for ``into``)."""
        self._previous_first, self._current_first = self._current_first, ticket.first
        ops = self._ops.pop(ticket.first, ())
        fresh = ticket.first in self._fresh
        self._fresh.discard(ticket.first)
        read = self._reader(
            ticket.first, self._previous_first, ops, ticket.count if fresh else None
        )
        return self.transport.receive(ticket, into, read, timeout=timeout)

    def exchange(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> list[dict[str, Any]]:
        """Send every request (pipelined), then read one answer per request, in order.

        Ids are assigned by the transport; any ``id`` in a request is replaced. Raises
        :class:`AdapterFailure` when the stream cannot be trusted; the adapter should then be
        restarted before it is used again.
        """
        return self.receive(self.send(requests))

    def _reader(
        self, first: int, previous_first: int, ops: tuple[str, ...], room: int | None
    ) -> Read:
        """How each answer line of a batch whose first id is ``first`` is read. ``room``: the
        most victims its answers can hold in all when it opens with ``new`` (its size), held
        to that bound once the ``new`` is accepted (:func:`~conformance.judge.answers.held_victims`:
        a 2 MiB victims list on every evict is not held whole)."""
        bound: int | None = None

        def read(line: bytes, index: int) -> dict[str, Any]:
            nonlocal bound
            got = read_answer(line, index, first, previous_first, ops[index] if ops else None)
            if type(got) is not dict:
                assert isinstance(got, LineFault)
                raise self._fault(got, index)
            if index == 0 and room is not None and got.get("ok") is True:
                bound = room  # an accepted new: every position kept from here is this batch's
            got, bound = held_victims(got, bound)
            return got

        return read

    def _fault(self, fault: LineFault, index: int) -> Exception:
        tail = self.transport.stderr_tail()
        if fault.hello_twice:
            return AdapterStartError(fault.detail, tail)
        blamed = index if fault.index is None else fault.index
        return AdapterFailure("protocol", blamed, fault.detail, tail, earlier=fault.earlier)


def _opens_with_new(prepared: Prepared) -> bool:
    """Whether a batch's first request is ``new`` (read from its first body alone)."""
    body = prepared.bodies[0]
    head = body[:64]
    if head.startswith(b'"op":'):  # the usual layout: the op first
        return head.startswith(b'"op":"new"')
    try:
        return bool(decode(b"{" + body).get("op") == "new")
    except ValueError:
        return False

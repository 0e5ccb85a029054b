"""The protocol driver: talks to one adapter over protocol v1 (SPEC.md §3).

:class:`AdapterProcess` runs an adapter program (an argv list, never a shell) and exchanges
JSON Lines with it; :class:`InProcessAdapter` offers the same interface over
:class:`conformance.adapter.server.Session` without a process (for mutants' fast path and for
tests).

Why threads: the runner pipelines a whole vector's requests before reading any answer. If one
thread did both, a large vector could fill the adapter's stdin pipe while the adapter blocks
on a full stdout pipe, and neither side would ever move. So a writer thread feeds stdin and a
second thread drains stderr into a bounded tail, while the calling thread reads the answers
(:mod:`conformance.transport.pipes`), always with a deadline: every wait is bounded by the per-call
timeout no matter what the adapter does.

Every request gets an id from one counter per process, so an answer that arrives late (an
adapter that answered a request twice) carries an id from an earlier exchange and is told apart
from an answer with a wrong id.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from conformance.spec.errors import KitError
from conformance.spec.protocol import (
    PROTOCOL_VERSION,
    decode,
    decoded,
    parse_hello_answer,
    same_integer,
    validate_message,
)
from conformance.spec.text import KEEP_TEXT, capped, json_text
from conformance.suite.wire import Prepared, prepare
from conformance.transport import pipes, process

#: Answers longer than this are a protocol error; the driver stops reading rather than buffer.
MAX_LINE = 16 * 1024 * 1024
#: How many stderr lines a failure shows.
STDERR_TAIL_LINES = 20
#: The time allowed for each answer by default (the runner's ``--timeout``).
ANSWER_TIMEOUT = 10.0
#: The least time allowed for the answer to ``hello`` (a JVM, say, takes a while to start).
START_TIMEOUT = 10.0
#: How long ``close`` waits for an answer to ``bye`` and then for the exit, before killing.
GRACE = 1.0
#: The id of ``hello``: the first request to every process.
HELLO_ID = 1
#: A batch of more requests than this (a long vector) is written a piece of about
#: :data:`PIECE` bytes at a time, and with ``into`` its answers are handed over this many at a
#: time.
HAND_OVER = 4096
PIECE = 1 << 20
#: Where :meth:`_Adapter.receive` hands answers over, in order, a list at a time.
Take = Callable[[list[dict[str, Any]]], None]
#: Failure kinds of :class:`AdapterFailure`.
FAILURE_KINDS = ("crash", "timeout", "protocol")


class AdapterStartError(KitError):
    """The adapter could not be started or did not complete the protocol v1 handshake."""

    def __init__(self, message: str, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.stderr_tail = stderr_tail

    def __str__(self) -> str:
        if not self.stderr_tail:
            return self.message
        return f"{self.message}\nadapter stderr (last lines):\n{self.stderr_tail}"


class AdapterFailure(Exception):
    """An exchange that went wrong below the level of answers: the stream cannot be trusted.

    ``kind`` is ``crash`` (the adapter exited or closed its stdout), ``timeout`` (no answer
    within the per-call timeout) or ``protocol`` (an answer line that is not a JSON object with
    the expected id, or is too long, or is not UTF-8). ``call_index`` is the index, within the
    exchange, of the request whose answer was being awaited. ``answers`` holds the answers
    received before the failure. ``earlier`` is true when the offending line was an extra
    answer to a request of the *previous* exchange (the adapter answered something twice);
    ``call_index`` is then that request's index within the previous exchange (-1 if older).
    ``exit_status`` is the exit status after a crash, when the process has exited.
    """

    def __init__(
        self,
        kind: str,
        call_index: int,
        detail: str,
        stderr_tail: str = "",
        *,
        answers: Sequence[dict[str, Any]] = (),
        exit_status: int | None = None,
        earlier: bool = False,
    ) -> None:
        if kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}")
        super().__init__(detail)
        self.kind = kind
        self.call_index = call_index
        self.detail = detail
        self.stderr_tail = stderr_tail
        self.answers = list(answers)
        self.exit_status = exit_status
        self.earlier = earlier

    def __repr__(self) -> str:
        return f"AdapterFailure({self.kind!r}, {self.call_index}, {self.detail!r})"


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


@dataclass(frozen=True)
class Ticket:
    """A batch of requests sent and not yet received: its first id and its size."""

    first: int
    count: int


#: The answer fields judging reads (SPEC.md §3.2, §3.3); an extension's extra fields are
#: allowed and not kept.
_JUDGED = frozenset(
    {"id", "ok", "error", "victims", "positions", "sums", "pooled", "protocol"}
    | {"implementation", "capabilities"}
)


def _bounded(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` as it is held until its vector is judged: a refusal's message capped at
    :data:`~conformance.spec.text.KEEP_TEXT` characters and fields no rule reads dropped, so
    that what a vector holds in flight is bounded by its calls, not by what the adapter
    writes (a 1 MiB message on every evict). Lists judged whole (victims) are kept whole."""
    if answer.keys() <= _JUDGED and _small_error(answer.get("error")):
        return answer  # nearly every answer: nothing to cut
    bounded = {key: value for key, value in answer.items() if key in _JUDGED}
    error = bounded.get("error")
    if isinstance(error, str):  # not an object: judged as such, and shown capped
        bounded["error"] = capped(error, KEEP_TEXT)
    elif isinstance(error, dict):
        message = error.get("message")
        bounded["error"] = {
            **({"kind": error["kind"]} if "kind" in error else {}),
            **({"message": capped(message, KEEP_TEXT)} if isinstance(message, str) else {}),
        }
    return bounded


def _small_error(error: Any) -> bool:
    """Whether a refusal's ``error`` (or its absence) is already within bounds."""
    if isinstance(error, str):
        return len(error) <= KEEP_TEXT
    if not isinstance(error, dict):
        return True
    message = error.get("message")
    short = not isinstance(message, str) or len(message) <= KEEP_TEXT
    return short and error.keys() <= {"kind", "message"}


#: A request line: its id spliced into a body prepared without its opening brace.
_REQUEST_LINE = b'{"id":%d,%s'


def _pieces(first: int, bodies: Sequence[bytes]) -> Iterator[bytes]:
    """The request lines of ``bodies`` (see :func:`_with_ids`), about :data:`PIECE` bytes at a
    time, each made when the writer asks for it."""
    piece: list[bytes] = []
    size = 0
    for index in range(len(bodies)):
        line = _REQUEST_LINE % (first + index, bodies[index])
        piece.append(line)
        size += len(line)
        if size >= PIECE:
            yield b"".join(piece)
            piece, size = [], 0
    if piece:
        yield b"".join(piece)


def _with_ids(first: int, bodies: Sequence[bytes]) -> bytes:
    """The request lines of ``bodies``, ids from ``first`` spliced in (bodies lack the brace)."""
    return b"".join(_REQUEST_LINE % (first + index, body) for index, body in enumerate(bodies))


def _status_text(status: int | None) -> str:
    if status is None:
        return "still running"
    if status < 0:
        try:
            return f"killed by signal {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


class _Adapter:
    """What both adapters share: ``exchange`` is ``send`` then ``receive``; context manager."""

    def start(self) -> Handshake:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def send(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> Ticket:
        raise NotImplementedError

    def receive(self, ticket: Ticket, into: Take | None = None) -> list[dict[str, Any]]:
        """The answers to a batch sent with :meth:`send`, in order.

        With ``into``, the answers are handed to it instead, in order, at most
        :data:`HAND_OVER` at a time, and none is kept here (a long vector's answers are judged
        as they come, never all held): the list returned is then empty, and an
        :class:`AdapterFailure`'s ``answers`` are those not yet handed over.
        """
        raise NotImplementedError

    def exchange(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> list[dict[str, Any]]:
        """Send every request (pipelined), then read one answer per request, in order.

        Ids are assigned here; any ``id`` in a request is replaced. Raises
        :class:`AdapterFailure` when the stream cannot be trusted; the adapter should then be
        restarted before it is used again.
        """
        return self.receive(self.send(requests))

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AdapterProcess(_Adapter):
    """One adapter program speaking protocol v1 over its stdin/stdout.

    ``argv`` is run without a shell in its own process group (so a wrapper script's children
    die with it). ``timeout`` bounds the wait for each answer; ``start_timeout`` the wait for
    the answer to ``hello`` (by default the larger of ``timeout`` and :data:`START_TIMEOUT`:
    starting a program can take longer than answering); ``max_line`` caps an answer's
    length; ``grace`` is how long :meth:`close` waits after ``bye`` before killing.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = ANSWER_TIMEOUT,
        *,
        start_timeout: float | None = None,
        max_line: int = MAX_LINE,
        grace: float = GRACE,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        validate_protocol: bool = False,
    ) -> None:
        if not argv:
            raise ValueError("the adapter command is empty")
        #: Check every answer, the handshake's too, against the shipped response schema.
        self.validate_protocol = validate_protocol
        self.argv = [str(arg) for arg in argv]
        self.timeout = timeout
        self.start_timeout = max(timeout, START_TIMEOUT) if start_timeout is None else start_timeout
        self.max_line = max_line
        self.grace = grace
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.handshake: Handshake | None = None
        #: Problems seen while closing (an adapter that ignored ``bye``, ...), for reports.
        self.close_problems: list[str] = []
        #: An extra answer to the last exchange, found while waiting for the answer to ``bye``.
        self.bye_failure: AdapterFailure | None = None
        self._group: process.Process | None = None
        #: The last process started, kept after it is killed for its stderr tail.
        self._last: process.Process | None = None
        #: Set by :meth:`cancel`: no process may start any more (an interrupted run).
        self._cancelled = False
        self._lifecycle = threading.Lock()
        self._reader: pipes.LineReader | None = None
        self._sent: deque[Ticket] = deque()  # batches sent and not yet received
        # Set for each process by _spawn (and the first ids by receive): the next request's id,
        # the first ids of the exchange being received and of the one before it (where an extra
        # answer belongs), the ops of the batches in flight.
        self._next_id: int
        self._current_first: int
        self._previous_first: int
        self._ops: dict[int, tuple[str, ...]]  # with validate_protocol: by a batch's first id

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Handshake:
        """Start the program and shake hands; raise :class:`AdapterStartError` on any fault."""
        if self._group is not None:
            raise RuntimeError("the adapter is already running; use restart()")
        self._spawn()
        try:
            with self._waiting(self.start_timeout):
                (answer,) = self.exchange([{"op": "hello", "protocol": PROTOCOL_VERSION}])
            assert self._next_id == HELLO_ID + 1
        except AdapterFailure as failure:
            tail = self.stderr_tail()
            self._kill()
            raise AdapterStartError(
                f"the adapter {shlex.join(self.argv)} did not complete the handshake: "
                f"{failure.detail}",
                tail,
            ) from None
        try:
            self.handshake = parse_handshake(answer)
        except AdapterStartError as error:
            error.stderr_tail = self.stderr_tail()
            self._kill()
            raise
        return self.handshake

    def restart(self) -> Handshake:
        """Kill the program (no ``bye``: it may be hung) and start it again."""
        self._kill()
        return self.start()

    def close(self) -> None:
        """Say ``bye``, wait a short grace period for the exit, then kill. Idempotent."""
        group = self._group
        if group is None:
            return
        if group.running:
            try:
                self.exchange([{"op": "bye"}])  # answered within the per-call timeout
            except AdapterFailure as failure:
                if failure.earlier:
                    self.bye_failure = failure  # the runner blames the vector it belongs to
                else:
                    self.close_problems.append(f"the answer to bye was wrong: {failure.detail}")
            except AdapterStartError as error:
                self.close_problems.append(error.message)
            group.close_input()  # an adapter that ignored bye may stop at EOF
            status = group.wait(self.grace)
            if status is None:
                self.close_problems.append(
                    f"the adapter did not exit within {self.grace:g} s after bye; killed it"
                )
            elif status != 0:
                self.close_problems.append(
                    f"the adapter {_status_text(status)} after bye, where protocol v1 says it "
                    "exits with status 0 (a crash while shutting down?)"
                )
        self._kill()

    @contextlib.contextmanager
    def _waiting(self, seconds: float) -> Iterator[None]:
        """Use ``seconds`` as the per-answer timeout for a while."""
        saved, self.timeout = self.timeout, seconds
        try:
            yield
        finally:
            self.timeout = saved

    def kill(self) -> None:
        """Kill the program (and its process group) at once, without ``bye``."""
        self._kill()

    def cancel(self) -> None:
        """Kill the program and refuse to start it again (an interrupted run). A start in
        progress in another thread kills what it started and fails."""
        with self._lifecycle:
            self._cancelled = True
        self._kill()

    @property
    def running(self) -> bool:
        return self._group is not None and self._group.running

    @property
    def pid(self) -> int | None:
        return None if self._group is None else self._group.pid

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last ``lines`` lines the adapter wrote to stderr (undecodable bytes replaced)."""
        return "" if self._last is None else self._last.stderr_tail(lines)

    # -- the exchange ----------------------------------------------------------------------

    def send(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> Ticket:
        """Queue ``requests`` for writing and return at once; :meth:`receive` gets the answers.

        Several batches may be in flight, so the adapter never waits for the caller between
        them; receive them in the order they were sent.
        """
        if self._group is None:
            raise RuntimeError("the adapter is not running; call start() first")
        prepared = prepare(requests)
        ticket = Ticket(self._next_id, len(prepared))
        self._next_id += len(prepared)
        if self.validate_protocol:
            self._ops[ticket.first] = prepared.ops()
        assert self._group is not None
        bodies = prepared.bodies
        if len(bodies) <= HAND_OVER:
            self._group.write(_with_ids(ticket.first, bodies))
        else:  # a long vector: written a piece at a time as the adapter reads it
            self._group.write(_pieces(ticket.first, bodies))
        self._sent.append(ticket)
        return ticket

    def receive(self, ticket: Ticket, into: Take | None = None) -> list[dict[str, Any]]:
        """The answers to a batch sent with :meth:`send` (see :meth:`exchange`); with
        ``into``, see :meth:`_Adapter.receive`."""
        if not self._sent or self._sent[0] != ticket:
            raise RuntimeError("receive batches in the order they were sent")
        self._sent.popleft()
        self._previous_first, self._current_first = self._current_first, ticket.first
        answers: list[dict[str, Any]] = []
        ops = self._ops.pop(ticket.first, ())
        for index in range(ticket.count):
            if into is not None and len(answers) == HAND_OVER:
                into(answers)
                answers = []
            line = self._next_line(index, answers)
            if not ops and line == b'{"id":%d,"ok":true}\n' % (ticket.first + index):
                answers.append({"id": ticket.first + index, "ok": True})  # most answers:
                continue  # no JSON decoder, nothing to bound
            answer = self._decode(line, index, ticket.first, answers)
            if ops:
                self._check_schema(answer, ops[index], index, answers)
            answers.append(_bounded(answer))
        if into is not None:
            into(answers)
            return []
        return answers

    def _check_schema(
        self, answer: dict[str, Any], op: str, index: int, answers: list[dict[str, Any]]
    ) -> None:
        """With ``validate_protocol``: an answer that breaks the shipped schema for its op is a
        protocol failure, even where the checker would accept it (an extra field, say)."""
        problems = validate_message("response", answer, op)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise self._failure(
                "protocol",
                index,
                f"the answer to {op} does not validate against schema/protocol/"
                f"response.schema.json: {problems[0]}{more}: {json_text(answer)}",
                answers,
            )

    def _next_line(self, index: int, answers: list[dict[str, Any]]) -> bytes:
        assert self._reader is not None
        deadline = time.monotonic() + self.timeout
        while True:
            got = self._reader.next(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise self._failure(
                    "timeout", index, f"no answer within {self.timeout:g} s", answers
                )
            tag, data = got
            if tag != pipes.LINE:
                break
            if data.strip():  # blank lines are ignored (SPEC.md §3.1)
                return data
        if tag == pipes.OVERLONG:
            raise self._failure(
                "protocol",
                index,
                f"the answer line is longer than {self.max_line} bytes (not read further); "
                f"it starts {json_text(data[:80])}",
                answers,
            )
        status = self._wait_exit()
        if tag == pipes.PARTIAL:
            detail = (
                f"the adapter stopped in the middle of its answer and exited "
                f"({_status_text(status)}); the unfinished line: {json_text(data[:200])}"
            )
        elif status is None:
            detail = "the adapter closed its stdout without answering"
        else:
            detail = f"the adapter exited ({_status_text(status)}) without answering"
        raise self._failure("crash", index, detail, answers, exit_status=status)

    def _decode(
        self, line: bytes, index: int, first: int, answers: list[dict[str, Any]]
    ) -> dict[str, Any]:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._failure(
                "protocol",
                index,
                f"the answer is not UTF-8 ({error.reason} at byte {error.start}): "
                f"{json_text(line[:120])}",
                answers,
            ) from None
        try:
            answer = decode(text)
        except ValueError as error:
            raise self._failure(
                "protocol",
                index,
                f"the answer is not JSON ({error}): {json_text(text[:120])}",
                answers,
            ) from None
        if not isinstance(answer, dict):
            raise self._failure(
                "protocol",
                index,
                f"the answer is not a JSON object: {json_text(answer)}",
                answers,
            )
        expected = first + index
        got = answer.get("id")
        if not same_integer(got, expected):
            raise self._wrong_id(got, expected, index, first, answers, answer)
        return answer

    def _wrong_id(
        self,
        got: Any,
        expected: int,
        index: int,
        first: int,
        answers: list[dict[str, Any]],
        answer: dict[str, Any],
    ) -> AdapterFailure:
        if got == HELLO_ID and type(got) is int and first > HELLO_ID:
            raise AdapterStartError(
                f"the adapter answered hello twice (a second answer with id {HELLO_ID} came "
                "after the handshake): did it answer before it was asked?",
                self.stderr_tail(),
            )
        if type(got) is int and 1 <= got < first:
            # Placed within the previous exchange when it belongs there (the usual case).
            earlier_index = got - self._previous_first if got >= self._previous_first else -1
            return self._failure(
                "protocol",
                earlier_index,
                f"an extra answer with id {got} arrived after all answers to its exchange: "
                "the adapter answered that request twice",
                answers,
                earlier=True,
            )
        if type(got) is int and first <= got < expected:
            return self._failure(
                "protocol",
                got - first,  # blame the request answered twice, not the one after it
                f"request {got - first} of this exchange was answered twice (a second answer "
                f"with id {got} came where the answer with id {expected} was due)",
                answers,
            )
        if got is None and answer.get("ok") is False:
            error = answer.get("error")
            return self._failure(
                "protocol",
                index,
                f"the adapter could not read the request (it answered with id null: "
                f"{json_text(error)})",
                answers,
            )
        return self._failure(
            "protocol",
            index,
            f"the answer has id {json_text(got)}, expected {expected}",
            answers,
        )

    def _failure(
        self,
        kind: str,
        index: int,
        detail: str,
        answers: list[dict[str, Any]],
        *,
        exit_status: int | None = None,
        earlier: bool = False,
    ) -> AdapterFailure:
        return AdapterFailure(
            kind,
            index,
            detail,
            self.stderr_tail(),
            answers=answers,
            exit_status=exit_status,
            earlier=earlier,
        )

    # -- process plumbing ------------------------------------------------------------------

    def _spawn(self) -> None:
        try:
            group = process.spawn(self.argv, env=self.env, cwd=self.cwd)
        except process.StartError as error:
            raise AdapterStartError(str(error)) from None
        # A fresh reader per process: a killed process's cannot leak into the next one.
        reader = pipes.LineReader(group.stdout, self.max_line)
        with self._lifecycle:
            if self._cancelled:  # the run was interrupted while this process started
                group.kill()
                reader.close()
                raise AdapterStartError("the run was interrupted")
            # Both at once: a kill from another thread (an interrupted run) closes this reader.
            self._group, self._last, self._reader = group, group, reader
        # Each process numbers its requests from hello on and has nothing in flight.
        self._next_id = self._current_first = HELLO_ID
        self._sent = deque()
        self._ops = {}

    def _wait_exit(self) -> int | None:
        """The exit status once stdout has ended (None if it keeps running past the grace)."""
        group = self._group
        if group is None:  # killed meanwhile from another thread (an interrupted run)
            return None
        return group.wait(min(self.grace, self.timeout))

    def _kill(self) -> None:
        with self._lifecycle:
            group, self._group = self._group, None
            reader, self._reader = self._reader, None
        if group is None:
            return
        group.kill()
        if reader is not None:
            reader.close()


class InProcessAdapter(_Adapter):
    """The :class:`AdapterProcess` interface over an in-process :class:`Session`.

    ``factory`` builds the policy for ``new`` (the reference's by default, or a mutant's).
    Answers go through the JSON encoder and decoder, so they look exactly as a process's
    would; an exception escaping the session counts as a crash.
    """

    def __init__(
        self,
        factory: Callable[..., Any] | None = None,
        implementation: Mapping[str, str] | None = None,
        timeout: float = ANSWER_TIMEOUT,
    ) -> None:
        # Here, as below: the in-process adapter loads the reference only when one is made.
        from conformance.policy.reference import new_policy

        self.factory = factory or new_policy
        self.implementation = implementation
        self.timeout = timeout  # unused: in-process calls cannot hang the runner's waits
        self.handshake: Handshake | None = None
        self.close_problems: list[str] = []
        self.bye_failure: AdapterFailure | None = None
        self._session: Any = None
        self._crashed = False
        self._next_id = 1
        self._outcomes: deque[tuple[Ticket, list[dict[str, Any]] | AdapterFailure]] = deque()

    def start(self) -> Handshake:
        # Here: the reference adapter (and orjson) is loaded only for an in-process adapter.
        from conformance.adapter.server import Session

        self._session = Session(self.factory, self.implementation)
        self._crashed = False
        self._next_id = 1
        self._outcomes.clear()
        (answer,) = self.exchange([{"op": "hello", "protocol": PROTOCOL_VERSION}])
        self.handshake = parse_handshake(answer)
        return self.handshake

    def restart(self) -> Handshake:
        return self.start()

    def close(self) -> None:
        self._session = None

    kill = cancel = close

    @property
    def running(self) -> bool:
        return self._session is not None

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        return ""

    def send(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> Ticket:
        """Answer the requests now; :meth:`receive` hands the answers (or the crash) over."""
        # Here: the reference adapter (and orjson) is loaded only for an in-process adapter.
        from conformance.adapter.server import encode

        prepared = prepare(requests)
        ticket = Ticket(self._next_id, len(prepared))
        self._next_id += len(prepared)
        answers: list[dict[str, Any]] = []
        outcome: list[dict[str, Any]] | AdapterFailure = answers
        if self._session is None:
            if not self._crashed:
                raise RuntimeError("the adapter is not running; call start() first")
            outcome = AdapterFailure("crash", 0, "the in-process adapter had crashed before")
        session = self._session
        # A policy that reads a weight's decimal itself gets it as the request line writes it.
        lines = prepared.bodies if session is not None and session.reads_weight_text else None
        for index, request in enumerate(prepared.requests if session else ()):
            try:
                # answer, not handle: a policy's exception must surface here as a crash
                message = {**decoded(request), "id": ticket.first + index}
                if lines is not None:
                    message = session.as_written(message, b"{" + lines[index])
                answer = self._session.answer(message)
                answers.append(decode(encode(answer)))
            except Exception as error:  # a mutant's bug: a real process would die here
                self._session, self._crashed = None, True
                outcome = AdapterFailure(
                    "crash",
                    index,
                    f"the in-process adapter raised {type(error).__name__}: {error}",
                    answers=answers,
                )
                outcome.__cause__ = error
                break
        self._outcomes.append((ticket, outcome))
        return ticket

    def receive(self, ticket: Ticket, into: Take | None = None) -> list[dict[str, Any]]:
        if not self._outcomes or self._outcomes[0][0] != ticket:
            raise RuntimeError("receive batches in the order they were sent")
        _, outcome = self._outcomes.popleft()
        if isinstance(outcome, AdapterFailure):
            raise outcome
        if into is not None:
            into(outcome)
            return []
        return outcome


#: What the runner drives: a process or in-process adapter.
Adapter = AdapterProcess | InProcessAdapter

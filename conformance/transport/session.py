"""One adapter program, lines in and lines out: :class:`AdapterProcess`.

It runs an adapter program (an argv list, never a shell), writes request lines (each
request's id spliced in, :mod:`conformance.transport.framing`) and reads the answer lines,
each bounded and every wait under a deadline. What an answer line means is not decided here:
:meth:`Transport.receive` hands each line to the ``read`` its caller gives
(:class:`conformance.runner.client.Client` reads it by the judge's rules) and keeps what that
returns. What goes wrong below the answers, a crash, a hang or a line longer than
``max_line``, is an :class:`~conformance.transport.failures.AdapterFailure`.

Why threads: the runner pipelines a whole vector's requests before reading any answer. If one
thread did both, a large vector could fill the adapter's stdin pipe while the adapter blocks
on a full stdout pipe, and neither side would ever move. So a writer thread feeds stdin and a
second thread drains stderr into a bounded tail, while the calling thread reads the answers
(:mod:`conformance.transport.pipes`), always with a deadline: every wait is bounded by the
per-call timeout no matter what the adapter does.

Every request gets an id from one counter per process, from :data:`FIRST_ID` (``hello``'s),
so an answer that arrives late (an adapter that answered a request twice) carries an id from
an earlier exchange and can be told apart from an answer with a wrong id.

Invariant: bytes and bounds only: no answer is decoded or judged here, every wait has a
deadline, and what is kept of an adapter's output is capped.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self

from conformance.spec.text import json_text
from conformance.suite.wire import Prepared, prepare
from conformance.transport import pipes, process
from conformance.transport.failures import AdapterFailure, AdapterStartError, status_text
from conformance.transport.framing import Ticket, pieces, with_ids

#: Answers longer than this are a protocol error; the transport stops reading rather than buffer.
MAX_LINE = 16 * 1024 * 1024
#: How many stderr lines a failure shows.
STDERR_TAIL_LINES = 20
#: The time allowed for each answer by default (the runner's ``--timeout``).
ANSWER_TIMEOUT = 10.0
#: The least time allowed for the first answer, ``hello``'s (a JVM, say, takes a while to start).
START_TIMEOUT = 10.0
#: How long ``close`` waits for the exit once the input is closed, before killing.
GRACE = 1.0
#: The id of the first request to every process (SPEC.md §3.1: ``hello``).
FIRST_ID = 1
#: A batch of more requests than this (a long vector) is written a piece at a time
#: (:data:`conformance.transport.framing.PIECE` bytes), and with ``into`` its answers are handed
#: over this many at a time.
HAND_OVER = 4096
#: Where :meth:`Transport.receive` hands answers over, in order, a list at a time.
Take = Callable[[list[Any]], None]
#: What :meth:`Transport.receive` makes of answer line ``line`` to request ``index`` of the
#: batch: the answer it keeps, or an :class:`AdapterFailure` raised (which then carries the
#: answers read before it).
Read = Callable[[bytes, int], Any]


class Transport:
    """What both transports share (a process, :class:`AdapterProcess`, and one in process,
    :class:`conformance.transport.in_process.InProcessAdapter`): ``exchange`` is ``send``
    then ``receive``; a context manager that starts and closes."""

    #: Seconds allowed for each answer, and for the first one.
    timeout: float
    start_timeout: float
    #: Problems seen while closing (an adapter that did not exit, ...), for reports.
    close_problems: list[str]
    #: Whether the session ends with ``bye`` (a process does; one in process is dropped).
    says_bye = True

    @property
    def command(self) -> str:
        """The adapter as messages name it."""
        raise NotImplementedError

    def start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    @property
    def running(self) -> bool:
        raise NotImplementedError

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        raise NotImplementedError

    def send(self, requests: Sequence[Mapping[str, Any]] | Prepared) -> Ticket:
        raise NotImplementedError

    def receive(
        self,
        ticket: Ticket,
        into: Take | None = None,
        read: Read | None = None,
        *,
        timeout: float | None = None,
    ) -> list[Any]:
        """The answers to a batch sent with :meth:`send`, in order: each line as ``read``
        makes it (the line itself without one), waiting at most ``timeout`` (the transport's
        by default) for each.

        With ``into``, the answers are handed to it instead, in order, at most
        :data:`HAND_OVER` at a time, and none is kept here (a long vector's answers are judged
        as they come, never all held): the list returned is then empty, and an
        :class:`AdapterFailure`'s ``answers`` are those not yet handed over (a failure that
        ``read`` raises too).
        """
        self._take(ticket)
        wait = self.timeout if timeout is None else timeout
        answers: list[Any] = []
        for index in range(ticket.count):
            if into is not None and len(answers) == HAND_OVER:
                into(answers)
                answers = []
            line = self._next_line(index, answers, wait)
            if read is None:
                answers.append(line)
                continue
            try:
                answers.append(read(line, index))
            except AdapterFailure as failure:
                failure.answers = answers
                raise
        if into is not None:
            into(answers)
            return []
        return answers

    def _take(self, ticket: Ticket) -> None:
        """Begin receiving ``ticket``'s batch: raise RuntimeError unless it was the first sent
        of those not yet received."""
        raise NotImplementedError

    def _next_line(self, index: int, answers: list[Any], wait: float) -> bytes:
        """The next answer line (request ``index`` of the batch), waiting at most ``wait``;
        raise :class:`AdapterFailure` (carrying ``answers``) when none can come."""
        raise NotImplementedError

    def exchange(
        self, requests: Sequence[Mapping[str, Any]] | Prepared, read: Read | None = None
    ) -> list[Any]:
        """Send every request (pipelined), then read one answer per request, in order.

        Ids are assigned here; any ``id`` in a request is replaced. Raises
        :class:`AdapterFailure` when the stream cannot be trusted; the adapter should then be
        restarted before it is used again.
        """
        return self.receive(self.send(requests), read=read)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AdapterProcess(Transport):
    """One adapter program over its stdin/stdout.

    ``argv`` is run without a shell in its own process group (so a wrapper script's children
    die with it). ``timeout`` bounds the wait for each answer; ``start_timeout`` the wait for
    the first (by default the larger of ``timeout`` and :data:`START_TIMEOUT`: starting a
    program can take longer than answering); ``max_line`` caps an answer's length; ``grace``
    is how long :meth:`close` waits for the exit before killing.
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
    ) -> None:
        if not argv:
            raise ValueError("the adapter command is empty")
        self.argv = [str(arg) for arg in argv]
        self.timeout = timeout
        self.start_timeout = max(timeout, START_TIMEOUT) if start_timeout is None else start_timeout
        self.max_line = max_line
        self.grace = grace
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.close_problems = []
        self._group: process.Process | None = None
        #: The last process started, kept after it is killed for its stderr tail.
        self._last: process.Process | None = None
        #: Set by :meth:`cancel`: no process may start any more (an interrupted run).
        self._cancelled = False
        self._lifecycle = threading.Lock()
        self._reader: pipes.LineReader | None = None
        self._sent: deque[Ticket] = deque()  # batches sent and not yet received
        self._next_id = FIRST_ID  # the next request's id, from FIRST_ID for each process

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the program; raise :class:`AdapterStartError` when it cannot run."""
        if self._group is not None:
            raise RuntimeError("the adapter is already running; use restart()")
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
        # Each process numbers its requests from FIRST_ID on and has nothing in flight.
        self._next_id = FIRST_ID
        self._sent = deque()

    def close(self) -> None:
        """Close the input, wait up to ``grace`` for the exit (SPEC.md §3.2: after ``bye``, or
        at the end of its input, an adapter exits with status 0), then kill; what went wrong
        is added to ``close_problems``. Idempotent."""
        group = self._group
        if group is None:
            return
        group.close_input()  # an adapter that ignored bye may stop at EOF
        status = group.wait(self.grace)
        if status is None:
            self.close_problems.append(
                f"the adapter did not exit within {self.grace:g} s after bye; killed it"
            )
        elif status != 0:
            self.close_problems.append(
                f"the adapter {status_text(status)} after bye, where protocol v1 says it "
                "exits with status 0 (a crash while shutting down?)"
            )
        self.kill()

    def kill(self) -> None:
        """Kill the program (and its process group) at once, without ``bye``."""
        with self._lifecycle:
            group, self._group = self._group, None
            reader, self._reader = self._reader, None
        if group is None:
            return
        group.kill()
        if reader is not None:
            reader.close()

    def cancel(self) -> None:
        """Kill the program and refuse to start it again (an interrupted run). A start in
        progress in another thread kills what it started and fails."""
        with self._lifecycle:
            self._cancelled = True
        self.kill()

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
        bodies = prepared.bodies
        if len(bodies) <= HAND_OVER:
            self._group.write(with_ids(ticket.first, bodies))
        else:  # a long vector: written a piece at a time as the adapter reads it
            self._group.write(pieces(ticket.first, bodies))
        self._sent.append(ticket)
        return ticket

    def _take(self, ticket: Ticket) -> None:
        if not self._sent or self._sent[0] != ticket:
            raise RuntimeError("receive batches in the order they were sent")
        self._sent.popleft()

    def _next_line(self, index: int, answers: list[Any], wait: float) -> bytes:
        assert self._reader is not None
        deadline = time.monotonic() + wait
        while True:
            got = self._reader.next(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise self._failure("timeout", index, f"no answer within {wait:g} s", answers)
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
        status = self._wait_exit(wait)
        if tag == pipes.PARTIAL:
            detail = (
                f"the adapter stopped in the middle of its answer and exited "
                f"({status_text(status)}); the unfinished line: {json_text(data[:200])}"
            )
        elif status is None:
            detail = "the adapter closed its stdout without answering"
        else:
            detail = f"the adapter exited ({status_text(status)}) without answering"
        raise self._failure("crash", index, detail, answers, exit_status=status)

    def _failure(
        self,
        kind: str,
        index: int,
        detail: str,
        answers: list[Any],
        *,
        exit_status: int | None = None,
    ) -> AdapterFailure:
        return AdapterFailure(
            kind, index, detail, self.stderr_tail(), answers=answers, exit_status=exit_status
        )

    def _wait_exit(self, wait: float) -> int | None:
        """The exit status once stdout has ended (None if it keeps running past the grace)."""
        group = self._group
        if group is None:  # killed meanwhile from another thread (an interrupted run)
            return None
        return group.wait(min(self.grace, wait))

"""A transport without a process: :class:`InProcessAdapter`, the reference's protocol server
(:class:`conformance.adapter.server.Session`) answering in this process, for the mutants' fast
path and for tests.

Invariant: what it hands over is what a process would have written: every answer is encoded as
its line (and read by the caller's ``read``, as a process's lines are); an exception escaping
the session is a crash, never an exception of the kit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.spec.protocol import decoded
from conformance.suite.wire import Prepared, prepare
from conformance.transport.failures import AdapterFailure
from conformance.transport.framing import Ticket
from conformance.transport.session import ANSWER_TIMEOUT, FIRST_ID, STDERR_TAIL_LINES, Transport


class InProcessAdapter(Transport):
    """The :class:`~conformance.transport.session.AdapterProcess` interface over an in-process
    :class:`~conformance.adapter.server.Session`.

    ``factory`` builds the policy for ``new`` (the reference's by default, or a mutant's).
    Answers are encoded as the lines a process would write; an exception escaping the session
    counts as a crash.
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
        self.timeout = self.start_timeout = timeout  # unused: in-process calls cannot hang
        self.close_problems = []
        self._session: Any = None
        self._crashed = False
        self._next_id = FIRST_ID
        self._outcomes: deque[tuple[Ticket, list[bytes], AdapterFailure | None]] = deque()
        # The batch being received: its lines, and the crash that cut them short.
        self._lines: list[bytes] = []
        self._failure: AdapterFailure | None = None

    #: Nothing to end: the session is dropped.
    says_bye = False

    @property
    def command(self) -> str:
        return "in process"

    def start(self) -> None:
        # Here: the reference adapter (and orjson) is loaded only for an in-process adapter.
        from conformance.adapter.server import Session

        self._session = Session(self.factory, self.implementation)
        self._crashed = False
        self._next_id = FIRST_ID
        self._outcomes.clear()

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
        lines: list[bytes] = []
        failure: AdapterFailure | None = None
        if self._session is None:
            if not self._crashed:
                raise RuntimeError("the adapter is not running; call start() first")
            failure = AdapterFailure("crash", 0, "the in-process adapter had crashed before")
        session = self._session
        # A policy that reads a weight's decimal itself gets it as the request line writes it.
        bodies = prepared.bodies if session is not None and session.reads_weight_text else None
        for index, request in enumerate(prepared.requests if session else ()):
            try:
                # answer, not handle: a policy's exception must surface here as a crash
                message = {**decoded(request), "id": ticket.first + index}
                if bodies is not None:
                    message = session.as_written(message, b"{" + bodies[index])
                lines.append(encode(self._session.answer(message)))
            except Exception as error:  # a mutant's bug: a real process would die here
                self._session, self._crashed = None, True
                failure = AdapterFailure(
                    "crash", index, f"the in-process adapter raised {type(error).__name__}: {error}"
                )
                failure.__cause__ = error
                break
        self._outcomes.append((ticket, lines, failure))
        return ticket

    def _take(self, ticket: Ticket) -> None:
        if not self._outcomes or self._outcomes[0][0] != ticket:
            raise RuntimeError("receive batches in the order they were sent")
        _, self._lines, self._failure = self._outcomes.popleft()

    def _next_line(self, index: int, answers: list[Any], wait: float) -> bytes:
        if index < len(self._lines):
            return self._lines[index]
        assert self._failure is not None  # a batch answered whole has a line per request
        self._failure.answers = answers
        raise self._failure

"""What goes wrong below the level of answers: an adapter that cannot start, and an exchange
whose stream can no longer be trusted.

Invariant: values only: these are raised by the transport (a crash, a hang, an over-long line)
and by the runner's reading of answer lines (:mod:`conformance.runner.client`, through the
judge's rules); nothing here decides what an answer means.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

from conformance.spec.errors import KitError

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


class AdapterFailure(KitError):
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
        answers: Sequence[Any] = (),
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


def status_text(status: int | None) -> str:
    """An exit status as a porter reads it: ``exit status 3``, ``killed by signal SIGSEGV``."""
    if status is None:
        return "still running"
    if status < 0:
        try:
            return f"killed by signal {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"

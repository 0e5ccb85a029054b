"""One adapter's vectors in flight: sending ahead, restarts, and which vector owns each answer.

A :class:`Window` keeps up to :data:`WINDOW` vectors (at most :data:`WINDOW_REQUESTS`
requests) sent ahead on its adapter, so the adapter always has input waiting and never idles
while the runner judges. It alone decides:

- **when to restart**: after a crash, a timeout or a desynchronised stream (the stream can no
  longer be trusted), and before a vector that needs a fresh session; what was in flight
  behind a failure is lost with the process and is sent again after the restart;
- **who owns an answer**: an answer that arrives after every answer of its vector (the
  adapter answered a request twice) is the fault of the vector it answers, not of the one
  being received. So a vector's result is *held* until the next vector's answers have come
  (or the adapter has said ``bye``, or been restarted): only then can no answer of its own
  still arrive, and only then is it *settled*: its
  :class:`~conformance.runner.results.VectorResult` is made, handed on and never changed;
- **when to diagnose**: a wrong evict gets a scores replay once nothing else is in flight.

Settled results come out in the order the vectors were sent. The window never raises for
what the adapter does; :class:`conformance.transport.failures.AdapterStartError` comes out of
it only when the handshake turns out broken (an adapter that answered ``hello`` twice), which
ends the run.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass

from conformance.explain import diagnosis
from conformance.judge import checker
from conformance.judge.verdicts import CRASH, PROTOCOL_ERROR, Errored, Judged
from conformance.numerics.profiles import Profile
from conformance.numerics.verdict import judge_numerics
from conformance.runner.client import Client
from conformance.runner.results import VectorResult
from conformance.suite.vectors import Vector
from conformance.suite.wire import Prepared
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.framing import Ticket

#: How many vectors a window keeps in flight, and how many requests at most (a vector is sent
#: anyway when nothing else is in flight). Small vectors take the adapter a millisecond or so:
#: it needs many queued never to wait for a runner the OS has descheduled.
WINDOW = 32
WINDOW_REQUESTS = 50_000
#: After this many failed restarts in a row a window stops taking vectors.
MAX_FAILED_RESTARTS = 2


@dataclass(frozen=True)
class Job:
    """A vector to run: ``index`` in the suite, the ``vector`` to judge against (a step's
    weights may be missing from it), the exact request bytes, and how to get the whole vector
    for a scores diagnosis."""

    index: int
    vector: Vector
    prepared: Prepared
    whole: Callable[[], Vector]

    @property
    def fresh(self) -> bool:
        """Does the vector need an adapter that has had no policy yet?

        A refused ``new`` leaves any earlier policy in place, so what follows it (a step
        expecting ``no-policy``, say) means something only on a fresh adapter.
        """
        calls = self.vector.calls
        return len(calls) > 1 and calls[0].expected_error is not None


@dataclass
class _Sent:
    job: Job
    ticket: Ticket
    began: float


@dataclass
class _Held:
    """A received vector not yet settled: a late answer of its own may still arrive, or its
    diagnosis is still to come. What the judge found (``judged``) and what the window learns
    of it beside that, until :meth:`result` makes its record."""

    job: Job
    judged: Judged
    duration: float
    stderr_tail: str
    catches: str = ""
    elsewhere: str = ""
    diagnosis: str | None = None
    divergence: str | None = None
    diagnose: bool = False

    def explain(self, judged: Judged) -> None:
        """Hold ``judged`` with what it means for the porter."""
        self.judged = judged
        self.catches, self.elsewhere = diagnosis.explained(self.job.vector, judged)

    def result(self, known: Container[str], numerics: Profile | None = None) -> VectorResult:
        """The record; a failure judged again under ``numerics`` too, when it is a profile
        other than exact (on the whole vector: a long one's weights are read again)."""
        rejudged = None
        if numerics is not None and not numerics.exact and not self.judged.passed:
            rejudged = judge_numerics(self.job.whole(), self.judged.answers, numerics)
        return VectorResult(
            self.judged,
            catches=self.catches,
            elsewhere=self.elsewhere,
            diagnosis=self.diagnosis,
            divergence=self.divergence,
            stderr_tail=self.stderr_tail,
            duration=self.duration,
            known_failure=self.judged.vector_id in known,
            numerics=rejudged,
        )


#: Where settled results go: the vector's index in the suite, and its record.
Settle = Callable[[int, VectorResult], None]


class Window:
    """The vectors in flight on one adapter (see the module docstring).

    Feed it with :meth:`run`; settled results go to ``settle`` in send order, each marked a
    known failure when its id is in ``known``, and each failure judged again under the
    ``numerics`` profile, if any. :meth:`close` says ``bye`` and settles the last vector.
    ``give_back`` receives the jobs a window gives up on after :data:`MAX_FAILED_RESTARTS`
    failed restarts (another window may run them).
    """

    def __init__(
        self,
        adapter: Client,
        settle: Settle,
        *,
        capacity: int = WINDOW,
        max_requests: int = WINDOW_REQUESTS,
        cancelled: Callable[[], bool] = lambda: False,
        known: Container[str] = frozenset(),
        numerics: Profile | None = None,
    ) -> None:
        self.adapter = adapter
        self.settle = settle
        self.known = known
        self.numerics = numerics
        self.capacity = capacity
        self.max_requests = max_requests
        self.cancelled = cancelled
        #: Problems that fail no vector (an adapter that ignored ``bye``, ...).
        self.warnings: list[str] = []
        self._inflight: deque[_Sent] = deque()
        #: Received and not yet settled, in order: the last may still get a late answer of its
        #: own; the others wait only for their diagnosis.
        self._received: deque[_Held] = deque()
        self._redo: deque[Job] = deque()
        self._retried: set[int] = set()
        self._broken = False  # must the adapter restart before its next exchange?
        self._dirty = False  # has it seen a vector since it (re)started?
        self._failed_restarts = 0

    # -- feeding -------------------------------------------------------------------------------

    def run(self, take: Callable[[], Job | None], give_back: Callable[[Job], None]) -> None:
        """Run the jobs ``take()`` hands out until it hands out None and all are received."""
        upcoming: Job | None = None
        while True:
            if upcoming is None:
                upcoming = self._next(take, give_back)
            if upcoming is None and not self._inflight:
                break
            if not self._inflight and self._diagnosis_due:
                self._diagnose()
            while upcoming is not None and self._may_send(upcoming):
                self._send(upcoming)
                upcoming = self._next(take, give_back)
            if self._inflight:
                self._receive()
                if self._redo and upcoming is not None:  # lost jobs were sent before it
                    self._redo.append(upcoming)
                    upcoming = None
        if self._diagnosis_due:
            self._diagnose()

    @property
    def _diagnosis_due(self) -> bool:
        return any(held.diagnose for held in self._received)

    def _next(self, take: Callable[[], Job | None], give_back: Callable[[Job], None]) -> Job | None:
        if self.cancelled():
            return None
        if self._failed_restarts >= MAX_FAILED_RESTARTS:
            while self._redo:  # leave them to windows whose adapters still start
                give_back(self._redo.popleft())
            return None
        return self._redo.popleft() if self._redo else take()

    def _may_send(self, job: Job) -> bool:
        if not self._inflight:
            return True
        queued = sum(len(sent.job.prepared) for sent in self._inflight)
        return not (
            len(self._inflight) >= self.capacity
            or queued + len(job.prepared) > self.max_requests
            or self._broken
            or job.fresh
            or self._diagnosis_due
        )

    def _send(self, job: Job) -> None:
        trouble = self._ready(fresh=job.fresh)
        if trouble is not None:
            errored = Errored(job.vector.id, CRASH, message=trouble)
            self.settle(job.index, VectorResult(errored, known_failure=job.vector.id in self.known))
            return
        self._dirty = True
        self._inflight.append(_Sent(job, self.adapter.send(job.prepared), time.monotonic()))

    def _ready(self, *, fresh: bool) -> str | None:
        """Restart the adapter if it is broken (or a fresh one is needed); None when ready."""
        if self.cancelled():
            return "the run was interrupted"
        if not (self._broken or (fresh and self._dirty)):
            return None
        self._settle(last=True)  # a restarted adapter cannot answer for them any more
        try:
            self.adapter.restart()
        except AdapterStartError as error:
            self._failed_restarts += 1
            return f"the adapter could not be restarted after an earlier failure: {error.message}"
        self._failed_restarts = 0
        self._broken = self._dirty = False
        return None

    # -- receiving -----------------------------------------------------------------------------

    def _receive(self) -> None:
        sent = self._inflight.popleft()
        job = sent.job
        failure: AdapterFailure | None = None
        # Judged as they come: a long vector's answers are never all held.
        judging = checker.Judging(job.vector)
        try:
            self.adapter.receive(sent.ticket, into=judging.feed)
        except AdapterFailure as caught:
            failure = caught
            self._broken = True
            if failure.earlier:
                self._blame_held(failure)
                if job.index not in self._retried:  # this vector's answers were never read
                    self._retried.add(job.index)
                    self._resend([job])
                    return
            judging.feed(caught.answers)
        judged = judging.verdict(failure)
        if failure is not None:
            tail = failure.stderr_tail
        else:
            tail = "" if judged.passed else self.adapter.stderr_tail()
        held = _Held(job, judged, time.monotonic() - sent.began, tail)
        held.explain(judged)
        held.diagnose = diagnosis.wants_diagnosis(judged)
        self._received.append(held)
        self._settle(last=False)  # the others' answers are all in: no late one can come
        if self._broken:
            self._resend([])

    def _resend(self, first: list[Job]) -> None:
        """What was in flight is lost with the adapter: send it again after the restart."""
        lost = first + [sent.job for sent in self._inflight]
        self._inflight.clear()
        self._redo.extendleft(reversed(lost))

    def _blame_held(self, failure: AdapterFailure) -> None:
        """An extra answer to the held vector's call: that vector fails, not the current one."""
        held = self._received[-1] if self._received else None
        if held is None:  # already settled (reported one vector at a time): say so at least
            self.warnings.append(f"a late answer to an earlier vector: {failure.detail}")
            return
        if not held.judged.passed:
            return
        calls = held.job.vector.calls
        known = 0 <= failure.call_index < len(calls)
        blamed = Errored(
            held.judged.vector_id,
            PROTOCOL_ERROR,
            call_index=failure.call_index if known else None,
            op=calls[failure.call_index].op if known else None,
            message=failure.detail,
        )
        held.explain(blamed)
        held.stderr_tail = failure.stderr_tail

    def release(self) -> None:
        """Settle every received vector now (for a caller that reports each vector at once; an
        answer of its own arriving later becomes a warning)."""
        if self._diagnosis_due and not self._inflight:
            self._diagnose()
        self._settle(last=True)

    def _settle(self, *, last: bool) -> None:
        """Settle received vectors in order, up to one still waiting for its diagnosis, and
        the last received one only when ``last``."""
        while self._received and (last or len(self._received) > 1):
            if self._received[0].diagnose:
                break
            held = self._received.popleft()
            self.settle(held.job.index, held.result(self.known, self.numerics))

    # -- diagnosis -----------------------------------------------------------------------------

    def _diagnose(self) -> None:
        """Attach the scores diagnosis to each wrong evict received (nothing is in flight), then
        settle them all: the replays' answers have come after theirs."""
        assert not self._inflight
        for held in list(self._received):
            if held.diagnose:
                held.diagnosis, held.divergence = self._diagnosis(held)
                held.diagnose = False  # only now: a restart for the replay settles up to here
        self._settle(last=True)

    def _diagnosis(self, held: _Held) -> tuple[str, str | None]:
        """The diagnosis text and where the port first diverged (None if not found)."""
        call_index = held.judged.call_index
        assert call_index is not None
        too_far = diagnosis.beyond_replay(call_index)
        if too_far is not None:
            return too_far, None
        try:
            vector = held.job.whole()
        except (OSError, ValueError) as error:
            return f"no scores diagnosis: cannot read the vector again: {error}", None
        handshake = self.adapter.handshake
        if handshake is None or "scores" not in handshake.capabilities:
            found = diagnosis.without_scores(vector, held.judged)
            return str(found), found.kind
        if self._ready(fresh=held.job.fresh) is not None:
            return "no scores diagnosis: the adapter could not be restarted", None
        try:
            answers = self.adapter.exchange(diagnosis.diagnosis_requests(vector, call_index))
        except AdapterFailure as failure:
            self._broken = True
            return f"no scores diagnosis: the replay failed: {failure.detail}", None
        self._dirty = True
        found = diagnosis.diagnose(vector, call_index, answers, held.judged.actual)
        return str(found), found.kind

    # -- the end -------------------------------------------------------------------------------

    def close(self) -> None:
        """Say ``bye`` (or kill an adapter whose stream is not trusted) and settle the last."""
        if self._diagnosis_due and not self._inflight:
            self._diagnose()
        if self._broken:
            self.adapter.kill()  # it may be hung: no bye
        else:
            self.adapter.close()
        self.warnings.extend(self.adapter.close_problems)
        if self.adapter.bye_failure is not None:
            self._blame_held(self.adapter.bye_failure)
        self._settle(last=True)

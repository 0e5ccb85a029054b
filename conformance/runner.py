"""Running a suite of vectors against an adapter: workers, shards and known failures.

:func:`run_suite` starts one persistent adapter per worker, hands vectors to the workers as they
become free, and judges each vector with :mod:`conformance.checker`. A vector's failure never
stops the run: after a crash, a hang or a desynchronised stream the worker restarts its adapter
and goes on with the next vector, so every selected vector gets exactly one result, in suite
order. Only an adapter that cannot be started at all (or cannot shake hands) stops the run,
with :class:`conformance.driver.AdapterStartError`, before any vector is run.

Which vectors run (``-k``, shards, known failures) is :mod:`conformance.selection`; the bytes
sent for each vector are :mod:`conformance.wire`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conformance import checker, diagnosis
from conformance.checker import VectorResult
from conformance.driver import (
    Adapter,
    AdapterFailure,
    AdapterProcess,
    AdapterStartError,
    Handshake,
    Prepared,
    Ticket,
)
from conformance.selection import (
    KnownFailuresError,
    format_known_failures,
    needs_fresh_session,
    parse_known_failures,
    parse_shard,
    read_known_failures,
    runnable_problems,
    select,
    shard_vectors,
)
from conformance.vectors import Vector
from conformance.wire import prepare_vector

if TYPE_CHECKING:
    from conformance.triage import Triage

__all__ = [  # the selection names stay importable from here, where they used to live
    "KnownFailuresError",
    "RunResult",
    "VectorRunner",
    "format_known_failures",
    "needs_fresh_session",
    "parse_known_failures",
    "parse_shard",
    "read_known_failures",
    "run_suite",
    "runnable_problems",
    "select",
    "shard_vectors",
]

#: After this many failed restarts in a row a worker stops taking vectors.
MAX_FAILED_RESTARTS = 2
#: How many vectors a worker keeps in flight on its adapter, and how many requests at most (a
#: vector is sent anyway when nothing else is in flight). Small vectors take the adapter a
#: millisecond or so: it needs many queued to never wait for a runner the OS has descheduled.
WINDOW = 32
WINDOW_REQUESTS = 50_000

#: How long an interrupted run waits for its workers to stop after killing their adapters.
CANCEL_WAIT = 2.0

Progress = Callable[[VectorResult, int, int], None]


@dataclass
class RunResult:
    """Everything a report needs about one run.

    ``results`` are in suite order (the order of the vectors given, after sharding).
    ``warnings`` are problems that fail no vector (an adapter that ignored ``bye``, ...).
    """

    results: list[VectorResult]
    handshake: Handshake | None
    shard: tuple[int, int] | None = None
    duration: float = 0.0
    adapter_argv: list[str] | None = None
    jobs: int = 1
    timeout: float = 10.0
    warnings: list[str] = field(default_factory=list)
    #: The :class:`conformance.triage.Triage` of a failing run, when one was asked for.
    triage: Triage | None = None

    @property
    def counts(self) -> dict[str, int]:
        """``passed`` and ``failed`` are what the summary line says; they add up to ``total``
        minus ``known_failures``. ``stale_known_failures`` (listed, but passed) are counted
        in ``failed``."""
        results = self.results
        return {
            "total": len(results),
            "passed": sum(r.passed and not r.known_failure for r in results),
            "failed": sum(r.fails_run for r in results),
            "known_failures": sum(not r.passed and r.known_failure for r in results),
            "stale_known_failures": sum(r.passed and r.known_failure for r in results),
        }

    @property
    def ok(self) -> bool:
        """True when no result fails the run (the exit status is then 0)."""
        return not any(result.fails_run for result in self.results)


# -- running ---------------------------------------------------------------------------------


def run_suite(
    vectors: Sequence[Vector],
    adapter_argv: Sequence[str] | None = None,
    *,
    adapter_factory: Callable[[], Adapter] | None = None,
    jobs: int = 1,
    timeout: float = 10.0,
    shard: tuple[int, int] | None = None,
    known_failures: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``vectors`` (sharded by ``shard``) and judge every one.

    Give either ``adapter_argv`` (each worker runs ``AdapterProcess(adapter_argv, timeout)``)
    or ``adapter_factory``, a no-argument callable returning a fresh adapter object (an
    :class:`~conformance.driver.InProcessAdapter`, say). ``jobs`` workers run in parallel, each
    with its own adapter. ``known_failures`` are vector ids whose failure does not fail the run
    (and whose pass does). ``progress(result, done, total)`` is called after each vector, from
    one thread at a time. Raises :class:`AdapterStartError` when an adapter cannot start.
    """
    if (adapter_argv is None) == (adapter_factory is None):
        raise ValueError("give exactly one of adapter_argv and adapter_factory")
    if adapter_argv is not None:
        argv = list(adapter_argv)

        def adapter_factory() -> Adapter:
            return AdapterProcess(argv, timeout)

    assert adapter_factory is not None
    began = time.monotonic()
    selected = shard_vectors(vectors, shard)
    jobs = max(1, min(jobs, len(selected)))
    adapters, handshake = _start_all(adapter_factory, jobs)
    suite = _Suite(selected, set(known_failures or ()), progress)
    workers = [_Worker(adapter, suite) for adapter in adapters]
    threads = [threading.Thread(target=worker.work, daemon=True) for worker in workers]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C: leave no adapter running behind us
        _cancel(suite, adapters, threads)
        raise
    for worker in workers:
        if worker.error is not None:  # a bug in the runner, not the adapter: do not hide it
            raise worker.error
    warnings = [problem for worker in workers for problem in worker.warnings]
    return RunResult(
        results=suite.finish(),
        handshake=handshake,
        shard=shard,
        duration=time.monotonic() - began,
        adapter_argv=list(adapter_argv) if adapter_argv is not None else None,
        jobs=jobs,
        timeout=timeout,
        warnings=sorted(set(warnings)),
    )


def _cancel(suite: _Suite, adapters: list[Adapter], threads: list[threading.Thread]) -> None:
    """Stop an interrupted run: kill every adapter, give the workers a moment to notice (they
    start nothing once ``suite.cancelled`` is set), and kill again in case one was restarting."""
    suite.cancelled = True  # the workers now fail on killed adapters: quietly
    for adapter in adapters:
        adapter.kill()
    deadline = time.monotonic() + CANCEL_WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for adapter in adapters:
        adapter.kill()


def _start_all(factory: Callable[[], Adapter], jobs: int) -> tuple[list[Adapter], Handshake]:
    """Start ``jobs`` adapters in parallel; on any failure close them all and raise."""
    adapters = [factory() for _ in range(jobs)]
    errors: list[BaseException] = []

    def start(adapter: Adapter) -> None:
        try:
            adapter.start()
        except Exception as error:  # re-raised in the calling thread, never lost in this one
            errors.append(error)

    threads = [threading.Thread(target=start, args=(a,), daemon=True) for a in adapters]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C while adapters start: kill those that did
        for adapter in adapters:
            adapter.kill()
        raise
    if errors:
        for adapter in adapters:
            adapter.kill()  # no bye: a failed start leaves nothing worth a goodbye
        raise errors[0]
    handshake = adapters[0].handshake
    assert handshake is not None
    return adapters, handshake


class VectorRunner:
    """Runs vectors one at a time on one adapter, exactly as a :func:`run_suite` worker does.

    For callers that schedule vectors themselves (a pytest plugin making one test per vector):
    the adapter is started on first use, restarted after a failure or before a vector that needs
    a fresh session, and a wrong evict gets its scores diagnosis. :meth:`close` says ``bye``
    and returns the warnings (an adapter that ignored ``bye``, ...).
    """

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self._worker: _Worker | None = None

    def run(self, vector: Vector) -> VectorResult:
        """Run and judge one vector; raise :class:`AdapterStartError` if the first start fails."""
        began = time.monotonic()
        suite = _Suite([vector], set(), None)
        if self._worker is None:
            if self.adapter.handshake is None:
                self.adapter.start()
            self._worker = _Worker(self.adapter, suite)
        else:
            self._worker.suite = suite
            self._worker._previous = None  # an index into the previous call's suite
        self._worker._loop()
        (result,) = suite.finish()
        result.duration = time.monotonic() - began
        return result

    def close(self) -> list[str]:
        if self._worker is None:
            self.adapter.close()
            return list(self.adapter.close_problems)
        self._worker.close()
        return self._worker.warnings


class _Suite:
    """The shared work list: hands out vector indices and collects results in order."""

    def __init__(self, vectors: list[Vector], known: set[str], progress: Progress | None) -> None:
        self.vectors = vectors
        self.known = known
        self.results: list[VectorResult | None] = [None] * len(vectors)
        self._prepared: dict[int, Prepared] = {}
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(vectors)):
            self._todo.put(index)
        self._progress = progress
        self._lock = threading.Lock()
        self._done = 0
        #: Set when the run is interrupted: workers stop, and errors from killed adapters are
        #: not reported.
        self.cancelled = False

    def prepared(self, index: int) -> Prepared:
        """Vector ``index``'s requests, encoded once (a vector may run twice)."""
        prepared = self._prepared.get(index)
        if prepared is None:
            prepared = self._prepared[index] = prepare_vector(self.vectors[index])
        return prepared

    def give_back(self, index: int) -> None:
        """Return a vector a worker could not run to the work list."""
        self._todo.put(index)

    def take(self) -> int | None:
        try:
            return self._todo.get_nowait()
        except queue.Empty:
            return None

    def record(self, index: int, result: VectorResult) -> None:
        result.known_failure = result.vector_id in self.known
        with self._lock:
            fresh = self.results[index] is None
            self.results[index] = result
            if fresh:
                self._done += 1
            if self._progress is not None and not self.cancelled:
                self._progress(result, self._done, len(self.vectors))

    def amend(self, index: int, result: VectorResult) -> None:
        """Replace an earlier pass by a failure found later (an extra answer to it)."""
        self.record(index, result)

    def finish(self) -> list[VectorResult]:
        """The results in order; a vector no worker could run gets a crash result."""
        for index, result in enumerate(self.results):
            if result is None:
                lost = VectorResult(
                    self.vectors[index].id,
                    checker.CRASH,
                    message="not run: every adapter process failed to restart",
                )
                lost.known_failure = lost.vector_id in self.known
                self.results[index] = lost
        return [result for result in self.results if result is not None]


class _Worker:
    """One adapter and the loop that runs vectors on it.

    Up to :data:`WINDOW` vectors are in flight at once: the next vectors' requests are sent
    before the current one's answers are read, so the adapter always has input waiting and
    never idles while the runner judges. The window closes (the worker waits for what is in
    flight) before anything that needs the adapter to itself: a restart, a vector that needs a
    fresh session, a scores diagnosis. When the adapter fails, what was in flight behind the
    failing vector is run again after the restart.
    """

    def __init__(self, adapter: Adapter, suite: _Suite) -> None:
        self.adapter = adapter
        self.suite = suite
        self.warnings: list[str] = []
        self.capabilities = adapter.handshake.capabilities if adapter.handshake else ()
        self._dirty = False  # has this adapter seen a vector since it (re)started?
        self._broken = False  # must it be restarted before its next exchange?
        self._failed_restarts = 0
        self._previous: tuple[int, VectorResult] | None = None  # the last vector received
        self._redo: deque[int] = deque()  # vectors to run (again) before taking new ones
        self._retried: set[int] = set()
        self._to_diagnose: list[tuple[int, VectorResult]] = []
        #: An unexpected exception that ended :meth:`work`; :func:`run_suite` re-raises it.
        self.error: Exception | None = None

    def work(self) -> None:
        try:
            self._loop()
        except Exception as error:
            if not self.suite.cancelled:  # after an interruption: a killed adapter, say nothing
                self.error = error
        finally:
            if not self.suite.cancelled:
                self.close()

    def _take(self) -> int | None:
        if self.suite.cancelled:
            return None
        if self._failed_restarts >= MAX_FAILED_RESTARTS:
            # Leave the rest to workers whose adapters still start (or to Suite.finish).
            while self._redo:
                self.suite.give_back(self._redo.popleft())
            return None
        if self._redo:
            return self._redo.popleft()
        return self.suite.take()

    def _loop(self) -> None:
        inflight: deque[tuple[int, float, Ticket]] = deque()
        upcoming = self._take()
        while upcoming is not None or inflight:
            while upcoming is not None and len(inflight) < WINDOW:
                queued = sum(ticket.count for _, _, ticket in inflight)
                if inflight and (queued >= WINDOW_REQUESTS or not self._may_join(upcoming)):
                    break
                self._diagnose_pending()
                sent = self._send(upcoming)
                if sent is not None:
                    inflight.append(sent)
                upcoming = self._take()
            if not inflight:
                continue
            index, began, ticket = inflight.popleft()
            result = self._receive(index, ticket)
            if self._broken and (inflight or result is None):
                # What was in flight behind a failure is lost with the adapter: run it again.
                lost = ([index] if result is None else []) + [i for i, _, _ in inflight]
                inflight.clear()
                if upcoming is not None:
                    self._redo.appendleft(upcoming)
                self._redo.extendleft(reversed(lost))
                upcoming = self._take()
            if result is not None:
                result.duration = time.monotonic() - began
                self.suite.record(index, result)
        self._diagnose_pending()

    def _may_join(self, index: int) -> bool:
        """May vector ``index`` be sent while others are in flight?"""
        vector = self.suite.vectors[index]
        return not (self._broken or self._to_diagnose or needs_fresh_session(vector))

    def _send(self, index: int) -> tuple[int, float, Ticket] | None:
        """Send a vector's requests; None if the adapter could not be restarted for it."""
        vector = self.suite.vectors[index]
        trouble = self._ready(fresh=needs_fresh_session(vector))
        if trouble is not None:
            self.suite.record(index, VectorResult(vector.id, checker.CRASH, message=trouble))
            return None
        self._dirty = True
        return index, time.monotonic(), self.adapter.send(self.suite.prepared(index))

    def _receive(self, index: int, ticket: Ticket) -> VectorResult | None:
        """Receive and judge a vector; None when it must run again (see _blame_previous)."""
        vector = self.suite.vectors[index]
        failure: AdapterFailure | None = None
        try:
            answers = self.adapter.receive(ticket)
        except AdapterFailure as caught:
            failure, answers = caught, caught.answers
            self._broken = True
            if failure.earlier:
                self._blame_previous(failure)
                if index not in self._retried:
                    self._retried.add(index)
                    return None
        result = checker.judge(vector, answers, failure=failure)
        if not result.passed:
            if not result.stderr_tail:
                result.stderr_tail = self.adapter.stderr_tail()
            if diagnosis.wants_diagnosis(result):
                self._to_diagnose.append((index, result))
        self._previous = (index, result)
        return result

    def _diagnose_pending(self) -> None:
        """Run the scores diagnoses waiting for the adapter (nothing is in flight now)."""
        pending, self._to_diagnose = self._to_diagnose, []
        for index, result in pending:
            self._diagnose(self.suite.vectors[index], result)
            # An extra answer from the replay must not be blamed on the last vector.
            self._previous = None

    def _ready(self, *, fresh: bool) -> str | None:
        """Restart the adapter if it is broken (or a fresh session is needed); None if ready."""
        if self.suite.cancelled:
            return "the run was interrupted"
        if not (self._broken or (fresh and self._dirty)):
            return None
        try:
            self.adapter.restart()
        except AdapterStartError as error:
            self._failed_restarts += 1
            return f"the adapter could not be restarted after an earlier failure: {error.message}"
        self._failed_restarts = 0
        self._broken = self._dirty = False
        return None

    def _blame_previous(self, failure: AdapterFailure) -> None:
        """An extra answer to the previous vector's call: that vector fails, not this one."""
        if self._previous is None:
            return
        index, previous = self._previous
        if not previous.passed:
            return
        call_index = failure.call_index
        vector = self.suite.vectors[index]
        known = 0 <= call_index < len(vector.calls)
        amended = VectorResult(
            previous.vector_id,
            checker.PROTOCOL_ERROR,
            call_index=call_index if known else None,
            op=vector.calls[call_index].op if known else None,
            message=failure.detail,
            stderr_tail=failure.stderr_tail,
            duration=previous.duration,
        )
        self._previous = (index, amended)
        self.suite.amend(index, amended)

    def _diagnose(self, vector: Vector, result: VectorResult) -> None:
        """Attach the scores diagnosis to a wrong evict, when the adapter can give one."""
        if "scores" not in self.capabilities:
            found = diagnosis.without_scores(vector, result)
            result.diagnosis, result.divergence = str(found), found.kind
            return
        assert result.call_index is not None
        if self._ready(fresh=needs_fresh_session(vector)) is not None:
            result.diagnosis = "no scores diagnosis: the adapter could not be restarted"
            return
        requests = diagnosis.diagnosis_requests(vector, result.call_index)
        try:
            answers = self.adapter.exchange(requests)
        except AdapterFailure as failure:
            self._broken = True
            result.diagnosis = f"no scores diagnosis: the replay failed: {failure.detail}"
            return
        found = diagnosis.diagnose(vector, result.call_index, answers, result.actual)
        result.diagnosis, result.divergence = str(found), found.kind

    def close(self) -> None:
        if self._broken:
            self.adapter.kill()  # its stream is not trusted (it may be hung): no bye
        else:
            self.adapter.close()
        self.warnings.extend(self.adapter.close_problems)
        if self.adapter.bye_failure is not None:
            self._blame_previous(self.adapter.bye_failure)

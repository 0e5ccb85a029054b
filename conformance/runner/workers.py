"""The suite's vectors on adapters: in parallel on persistent adapters (:func:`run_vectors`),
or one at a time on one (:class:`VectorRunner`).

:func:`run_vectors` starts one persistent adapter per worker. Each worker takes the next vector
of the suite when its :class:`conformance.runner.window.Window` has room, reads it then (a
:class:`conformance.suite.stream.SuiteEntry` is a file not read yet), and sends it ahead of the
answers it is still reading; the window judges each vector, restarts the adapter after a
crash, a hang or a desynchronised stream, and settles each vector's result once no answer of
its own can still arrive. So memory holds the vectors in flight, not the suite, and the first
request goes out as soon as the first file is read. A vector's failure never stops the run:
every vector given gets exactly one result, in the order given. What stops it is an adapter
that cannot be started at all (or cannot shake hands), raised as
:class:`conformance.transport.failures.AdapterStartError`, or a vector file found invalid when
its turn comes, raised as :class:`conformance.spec.errors.VectorError`.

Invariant: every adapter a worker starts is killed when the run ends, is interrupted or fails;
no vector is lost (one result each, a crash for one no adapter could run).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Union

from conformance.judge.verdicts import CRASH, Errored
from conformance.runner.client import Client, Handshake
from conformance.runner.results import VectorResult
from conformance.runner.window import Job, Window
from conformance.suite.stream import SuiteEntry, read_for_run
from conformance.suite.vectors import Vector
from conformance.transport.pipes import waited
from conformance.transport.session import Transport

#: How long an interrupted run waits for its workers to stop after killing their adapters.
CANCEL_WAIT = 2.0

Progress = Callable[[VectorResult, int, int], None]
#: What a suite is made of: vectors in memory, or files read when their turn comes.
SuiteItem = Union[Vector, SuiteEntry]  # noqa: UP007 (a runtime alias)


def make_job(index: int, item: SuiteItem) -> Job:
    """Vector ``item`` ready to send: a file is read now (raising :class:`VectorError` for a
    vector the runner cannot use), an in-memory vector is encoded."""
    if isinstance(item, SuiteEntry):
        runnable = read_for_run(item)
        return Job(index, runnable.vector, runnable.prepared, item.load)
    # Here: only a vector built in memory needs it (files come prepared by read_for_run).
    from conformance.suite.wire import prepare_vector

    vector = item
    return Job(index, vector, prepare_vector(vector), lambda: vector)


@dataclass
class Vectors:
    """What :func:`run_vectors` gives: a result per vector in the order given, the first
    adapter's handshake, how many adapters ran, and the problems that fail no vector (an
    adapter that ignored ``bye``, ...)."""

    results: list[VectorResult]
    handshake: Handshake
    jobs: int
    warnings: list[str]


def run_vectors(
    vectors: Sequence[SuiteItem],
    client: Callable[[], Client],
    *,
    jobs: int = 1,
    known: Container[str] = frozenset(),
    progress: Progress | None = None,
) -> Vectors:
    """Run ``vectors`` on ``jobs`` adapters in parallel, each a fresh ``client()``, and judge
    every one. ``known`` are the ids listed as known failures. ``progress(result, done,
    total)`` is called as each vector is settled, from one thread at a time. Raises
    :class:`AdapterStartError` when an adapter cannot start, :class:`VectorError` for a vector
    file that cannot be run."""
    jobs = max(1, min(jobs, len(vectors)))
    suite = _Suite(list(vectors), known, progress)
    adapters: list[Client] = []
    threads: list[threading.Thread] = []
    workers: list[_Worker] = []
    # One try from the first adapter on: an interruption at any point of the start-up (while
    # adapters start, or workers do) must still kill every adapter started so far.
    try:
        handshake = _start_all(client, jobs, adapters)
        for adapter in adapters:
            workers.append(_Worker(adapter, suite))
            threads.append(threading.Thread(target=workers[-1].work, daemon=True))
            threads[-1].start()
        for thread in threads:
            _join(thread)
    except BaseException:  # Ctrl-C: leave no adapter running behind us
        _cancel(suite, adapters, threads)
        raise
    for worker in workers:
        if worker.error is not None:  # a broken handshake, a bad file, or a bug: raise it
            for adapter in adapters:
                adapter.kill()
            raise worker.error
    warnings = [problem for worker in workers for problem in worker.window.warnings]
    return Vectors(suite.finish(), handshake, jobs, sorted(set(warnings)))


def _join(thread: threading.Thread) -> None:
    """Wait until ``thread`` ends, in slices: a stop signal the kernel gave another thread is
    handled between two of them (:data:`conformance.transport.pipes.WAIT_SLICE`)."""

    def ended(seconds: float) -> bool:
        thread.join(seconds)
        return not thread.is_alive()

    waited(ended)


def _cancel(suite: _Suite, adapters: list[Client], threads: list[threading.Thread]) -> None:
    """Stop an interrupted run: kill every adapter, give the workers a moment to notice (they
    start nothing once ``suite.cancelled`` is set), and kill again in case one was restarting."""
    suite.cancelled = True  # the workers now fail on killed adapters: quietly
    for adapter in list(adapters):
        adapter.cancel()
    deadline = time.monotonic() + CANCEL_WAIT
    for thread in threads:
        if thread.ident is not None:  # interrupted between creating and starting it
            thread.join(max(0.0, deadline - time.monotonic()))
    for adapter in list(adapters):
        adapter.cancel()


def _start_all(factory: Callable[[], Client], jobs: int, adapters: list[Client]) -> Handshake:
    """Start ``jobs`` adapters in parallel, adding each to ``adapters`` before it starts (so
    that the caller can kill it whenever it is interrupted); on any failure kill them all and
    raise."""
    for _ in range(jobs):
        adapters.append(factory())
    errors: list[BaseException] = []

    def start(adapter: Client) -> None:
        try:
            adapter.start()
        except Exception as error:  # re-raised in the calling thread, never lost in this one
            errors.append(error)

    threads = [threading.Thread(target=start, args=(a,), daemon=True) for a in adapters]
    for thread in threads:
        thread.start()
    for thread in threads:
        _join(thread)
    if errors:
        for adapter in adapters:
            adapter.kill()  # no bye: a failed start leaves nothing worth a goodbye
        raise errors[0]
    handshake = adapters[0].handshake
    assert handshake is not None
    return handshake


class _Suite:
    """The shared work list: hands out vectors in order and collects outcomes in order."""

    def __init__(
        self, items: list[SuiteItem], known: Container[str], progress: Progress | None
    ) -> None:
        self.items = items
        self.known = known
        self.results: list[VectorResult | None] = [None] * len(items)
        self._next = 0
        self._returned: deque[Job] = deque()  # given back by a window that gave up
        self._progress = progress
        self._lock = threading.Lock()
        self._done = 0
        #: Set when the run is interrupted or ends in error: workers stop, and errors from
        #: killed adapters are not reported.
        self.cancelled = False

    def take(self) -> Job | None:
        with self._lock:
            if self._returned:
                return self._returned.popleft()
            index = self._next
            if index >= len(self.items):
                return None
            self._next += 1
        return make_job(index, self.items[index])  # read outside the lock: workers in parallel

    def give_back(self, job: Job) -> None:
        with self._lock:
            self._returned.append(job)

    def settle(self, index: int, result: VectorResult) -> None:
        with self._lock:
            if self.results[index] is None:
                self._done += 1
            self.results[index] = result
            if self._progress is not None and not self.cancelled:
                self._progress(result, self._done, len(self.items))

    def finish(self) -> list[VectorResult]:
        """The results in order; a vector no worker could run gets a crash result."""
        results = []
        for index, result in enumerate(self.results):
            if result is None:
                item = self.items[index]
                message = "not run: every adapter process failed to restart"
                result = VectorResult(
                    Errored(item.id, CRASH, message=message), known_failure=item.id in self.known
                )
            results.append(result)
        return results


class _Worker:
    """One adapter, its window, and the thread's loop."""

    def __init__(self, adapter: Client, suite: _Suite) -> None:
        self.suite = suite
        self.window = Window(
            adapter, suite.settle, cancelled=lambda: suite.cancelled, known=suite.known
        )
        #: What ended :meth:`work` early; :func:`run_vectors` re-raises it.
        self.error: Exception | None = None

    def work(self) -> None:
        try:
            self.window.run(self.suite.take, self.suite.give_back)
        except Exception as error:
            if not self.suite.cancelled:  # after an interruption: a killed adapter, say nothing
                self.error = error
                self.suite.cancelled = True  # the other workers stop too
        finally:
            if not self.suite.cancelled:
                self.window.close()


class VectorRunner:
    """Runs vectors one at a time on one adapter, judged as :func:`run_vectors` judges them.

    For callers that schedule vectors themselves (a pytest plugin making one test per vector):
    the adapter is started on first use, restarted after a failure or before a vector that needs
    a fresh session, and a wrong evict gets its scores diagnosis. Each vector is settled when
    :meth:`run` returns, so an extra answer to it found later is a warning. :meth:`close` says
    ``bye`` and returns the warnings (an adapter that ignored ``bye``, ...). ``transport`` is
    spoken to through a :class:`~conformance.runner.client.Client`, ``adapter`` (with
    ``validate_protocol``, every answer held to the response schema too); a vector whose id is
    in ``known`` is a known failure.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        known: Container[str] = frozenset(),
        validate_protocol: bool = False,
    ) -> None:
        self.adapter = Client(transport, validate_protocol=validate_protocol)
        self.known = known
        self._window: Window | None = None
        self._settled: list[VectorResult] = []

    def run(self, vector: Vector) -> VectorResult:
        """Run and judge one vector; raise :class:`AdapterStartError` if the first start fails."""
        if self._window is None:
            if self.adapter.handshake is None:
                self.adapter.start()
            self._window = Window(
                self.adapter, lambda _, result: self._settled.append(result), known=self.known
            )
        job: Job | None = make_job(0, vector)
        given: list[Job] = []

        def take() -> Job | None:
            nonlocal job
            handed, job = job, None
            return handed

        self._settled.clear()
        self._window.run(take, given.append)
        self._window.release()
        if not self._settled:
            message = "not run: the adapter could not be restarted"
            errored = Errored(vector.id, CRASH, message=message)
            self._settled.append(VectorResult(errored, known_failure=vector.id in self.known))
        (result,) = self._settled
        return result

    def close(self) -> list[str]:
        if self._window is None:
            self.adapter.close()
            return list(self.adapter.close_problems)
        self._window.close()
        return self._window.warnings

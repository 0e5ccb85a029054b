"""Running a suite of vectors against an adapter: workers, streaming, known failures.

:func:`run_suite` starts one persistent adapter per worker. Each worker takes the next vector
of the suite when its :class:`conformance.runner.window.Window` has room, reads it then (a
:class:`conformance.suite.stream.SuiteEntry` is a file not read yet), and sends it ahead of the
answers it is still reading; the window judges each vector, restarts the adapter after a
crash, a hang or a desynchronised stream, and settles each vector's outcome once no answer of
its own can still arrive. So memory holds the vectors in flight, not the suite, and the first
request goes out as soon as the first file is read. A vector's failure never stops the run:
every selected vector gets exactly one result, in suite order. What stops it is an adapter
that cannot be started at all (or cannot shake hands), raised as
:class:`conformance.transport.failures.AdapterStartError`, or a vector file found invalid when its
turn comes, raised as :class:`conformance.spec.errors.VectorError`.

Which vectors run (``-k``, shards, known failures) is :mod:`conformance.suite.discovery`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from conformance.judge import checker
from conformance.judge.checker import VectorResult, Verdict
from conformance.runner.checks import run_checks
from conformance.runner.client import Client, Handshake
from conformance.runner.window import Job, Settled, Window
from conformance.suite.checks import ProtocolCheck, load_check
from conformance.suite.discovery import shard_vectors
from conformance.suite.stream import SuiteEntry, read_for_run
from conformance.suite.vectors import Vector
from conformance.transport import process
from conformance.transport.session import ANSWER_TIMEOUT, AdapterProcess, Transport

#: How long an interrupted run waits for its workers to stop after killing their adapters.
CANCEL_WAIT = 2.0


def timeout_problem(seconds: float) -> str | None:
    """Why ``seconds`` cannot be a timeout, or None: the one rule for every front end's
    ``--timeout`` and the plugin's ``--snapkv-timeout``. A timeout is a finite number of seconds
    greater than zero: ``inf`` or ``nan`` would let a hung adapter hang the run for good."""
    if not seconds > 0 or seconds == float("inf"):
        return f"must be a positive number of seconds, got {seconds!r}"
    return None


Progress = Callable[[VectorResult, int, int], None]
#: What a suite is made of: vectors in memory, or files read when their turn comes.
SuiteItem = Union[Vector, SuiteEntry]  # noqa: UP007 (a runtime alias)


class Explanation(Protocol):
    """What a report shows of a failing run's triage (:class:`conformance.explain.triage.Triage`
    is one): the run carries it and never looks inside, so the run path does not import the
    triage, which replays the catalogue's mistakes with numpy."""

    def headline(self) -> str: ...

    def lines(self) -> list[str]: ...

    def to_json(self) -> dict[str, Any]: ...


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
    timeout: float = ANSWER_TIMEOUT
    warnings: list[str] = field(default_factory=list)
    #: The :class:`conformance.explain.triage.Triage` of a failing run, when one was asked for.
    triage: Explanation | None = None
    #: Stopped by SIGINT or SIGTERM: ``results`` hold only the items that finished.
    interrupted: bool = False

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


# -- the one run ------------------------------------------------------------------------------


@dataclass
class Run:
    """The suite as every front end runs it (``run``, ``matrix``, the pytest plugin's items):
    the vectors on persistent adapters (:func:`run_suite`), then each protocol check in a
    session of its own (:func:`conformance.runner.checks.run_checks`), so a port fails the
    same items whichever front end runs it.

    ``vectors`` and ``checks`` are what was selected (``-k`` and shards already applied,
    :func:`conformance.suite.discovery.select_items`); files are read when their turn comes.
    ``shard`` is only reported. Protocol checks need a program (``adapter_argv``): with an
    ``adapter_factory`` (an in-process adapter) only vectors run. ``progress(result, done,
    total)`` is called as each item is judged, vectors first, and never after SIGINT or SIGTERM
    (:func:`conformance.transport.process.interrupt_all`), so that a front end can write
    what finished.
    """

    vectors: Sequence[SuiteItem]
    checks: Sequence[SuiteEntry | ProtocolCheck] = ()
    adapter_argv: Sequence[str] | None = None
    adapter_factory: Callable[[], Transport] | None = None
    jobs: int = 1
    timeout: float = ANSWER_TIMEOUT
    shard: tuple[int, int] | None = None
    known_failures: Iterable[str] = ()
    progress: Progress | None = None
    validate_protocol: bool = False

    def execute(self) -> RunResult:
        """Run everything; raise :class:`AdapterStartError` when the adapter cannot start,
        :class:`VectorError` or :class:`CheckError` for a file the runner cannot use, and
        :class:`StartError` when the adapter no longer starts for the checks."""
        known = set(self.known_failures)
        began = time.monotonic()
        given = self.progress

        def progress(result: VectorResult, done: int, total: int) -> None:
            # After SIGINT or SIGTERM the adapters were killed by the kit, not by their bugs:
            # what is judged from then on is not a result of the port.
            if given is not None and not process.interrupted():
                given(result, done, total)

        if self.vectors:
            result = run_suite(
                self.vectors,
                self.adapter_argv,
                adapter_factory=self.adapter_factory,
                jobs=self.jobs,
                timeout=self.timeout,
                known_failures=known,
                progress=progress,
                validate_protocol=self.validate_protocol,
            )
        else:
            argv = list(self.adapter_argv) if self.adapter_argv is not None else None
            result = RunResult([], None, adapter_argv=argv, jobs=self.jobs, timeout=self.timeout)
        result.shard = self.shard
        if self.checks and self.adapter_argv is not None:
            checks = [
                item if isinstance(item, ProtocolCheck) else load_check(item.path)
                for item in self.checks
            ]
            result.results.extend(
                run_checks(
                    checks,
                    self.adapter_argv,
                    timeout=self.timeout,
                    jobs=self.jobs,
                    known_failures=known,
                    progress=progress,
                )
            )
        result.duration = time.monotonic() - began
        return result


# -- running ---------------------------------------------------------------------------------


def run_suite(
    vectors: Sequence[SuiteItem],
    adapter_argv: Sequence[str] | None = None,
    *,
    adapter_factory: Callable[[], Transport] | None = None,
    jobs: int = 1,
    timeout: float = ANSWER_TIMEOUT,
    shard: tuple[int, int] | None = None,
    known_failures: Iterable[str] | None = None,
    progress: Progress | None = None,
    validate_protocol: bool = False,
) -> RunResult:
    """Run ``vectors`` (sharded by ``shard``) and judge every one.

    Give either ``adapter_argv`` (each worker runs ``AdapterProcess(adapter_argv, timeout)``)
    or ``adapter_factory``, a no-argument callable returning a fresh transport (an
    :class:`~conformance.transport.in_process.InProcessAdapter`, say); each worker speaks to
    its own through a :class:`~conformance.runner.client.Client`. ``jobs`` workers run in
    parallel, each with its own adapter. ``known_failures`` are vector ids whose failure does not
    fail the run (and whose pass does). ``progress(result, done, total)`` is called as each vector
    is settled, from one thread at a time. With ``validate_protocol`` every answer of an
    ``adapter_argv`` process is also checked against the shipped response schema. Raises
    :class:`AdapterStartError` when an adapter cannot start, :class:`VectorError` for a vector
    file that cannot be run.
    """
    if (adapter_argv is None) == (adapter_factory is None):
        raise ValueError("give exactly one of adapter_argv and adapter_factory")
    if adapter_argv is not None:
        argv = list(adapter_argv)

        def client() -> Client:
            return Client(AdapterProcess(argv, timeout), validate_protocol=validate_protocol)

    else:
        assert adapter_factory is not None
        factory = adapter_factory

        def client() -> Client:
            return Client(factory())

    began = time.monotonic()
    selected = shard_vectors(vectors, shard)
    jobs = max(1, min(jobs, len(selected)))
    suite = _Suite(selected, set(known_failures or ()), progress)
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
            thread.join()
    except BaseException:  # Ctrl-C: leave no adapter running behind us
        _cancel(suite, adapters, threads)
        raise
    for worker in workers:
        if worker.error is not None:  # a broken handshake, a bad file, or a bug: raise it
            for adapter in adapters:
                adapter.kill()
            raise worker.error
    warnings = [problem for worker in workers for problem in worker.window.warnings]
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
        thread.join()
    if errors:
        for adapter in adapters:
            adapter.kill()  # no bye: a failed start leaves nothing worth a goodbye
        raise errors[0]
    handshake = adapters[0].handshake
    assert handshake is not None
    return handshake


class _Suite:
    """The shared work list: hands out vectors in order and collects outcomes in order."""

    def __init__(self, items: list[SuiteItem], known: set[str], progress: Progress | None) -> None:
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

    def settle(self, settled: Settled) -> None:
        verdict = settled.verdict
        result = VectorResult.of(
            verdict,
            stderr_tail=settled.stderr_tail,
            diagnosis=settled.diagnosis,
            divergence=settled.divergence,
            duration=settled.duration,
            known_failure=verdict.vector_id in self.known,
        )
        with self._lock:
            if self.results[settled.index] is None:
                self._done += 1
            self.results[settled.index] = result
            if self._progress is not None and not self.cancelled:
                self._progress(result, self._done, len(self.items))

    def finish(self) -> list[VectorResult]:
        """The results in order; a vector no worker could run gets a crash result."""
        results = []
        for index, result in enumerate(self.results):
            if result is None:
                item = self.items[index]
                result = VectorResult(
                    item.id,
                    checker.CRASH,
                    message="not run: every adapter process failed to restart",
                    known_failure=item.id in self.known,
                )
            results.append(result)
        return results


class _Worker:
    """One adapter, its window, and the thread's loop."""

    def __init__(self, adapter: Client, suite: _Suite) -> None:
        self.suite = suite
        self.window = Window(adapter, suite.settle, cancelled=lambda: suite.cancelled)
        #: What ended :meth:`work` early; :func:`run_suite` re-raises it.
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
    """Runs vectors one at a time on one adapter, judged as :func:`run_suite` judges them.

    For callers that schedule vectors themselves (a pytest plugin making one test per vector):
    the adapter is started on first use, restarted after a failure or before a vector that needs
    a fresh session, and a wrong evict gets its scores diagnosis. Each vector is settled when
    :meth:`run` returns, so an extra answer to it found later is a warning. :meth:`close` says
    ``bye`` and returns the warnings (an adapter that ignored ``bye``, ...). ``transport`` is
    spoken to through a :class:`~conformance.runner.client.Client`, ``adapter``.
    """

    def __init__(self, transport: Transport) -> None:
        self.adapter = Client(transport)
        self._window: Window | None = None
        self._settled: list[Settled] = []

    def run(self, vector: Vector) -> VectorResult:
        """Run and judge one vector; raise :class:`AdapterStartError` if the first start fails."""
        if self._window is None:
            if self.adapter.handshake is None:
                self.adapter.start()
            self._window = Window(self.adapter, self._settled.append)
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
            self._settled.append(Settled(0, Verdict(vector.id, checker.CRASH, message=message)))
        (settled,) = self._settled
        return VectorResult.of(
            settled.verdict,
            stderr_tail=settled.stderr_tail,
            diagnosis=settled.diagnosis,
            divergence=settled.divergence,
            duration=settled.duration,
        )

    def close(self) -> list[str]:
        if self._window is None:
            self.adapter.close()
            return list(self.adapter.close_problems)
        self._window.close()
        return self._window.warnings

"""Running a suite of vectors against an adapter: workers, shards and known failures.

:func:`run_suite` starts one persistent adapter per worker, hands vectors to the workers as they
become free, and judges each vector with :mod:`conformance.checker`. A vector's failure never
stops the run: after a crash, a hang or a desynchronised stream the worker restarts its adapter
and goes on with the next vector, so every selected vector gets exactly one result, in suite
order. Only an adapter that cannot be started at all (or cannot shake hands) stops the run,
with :class:`conformance.driver.AdapterStartError`, before any vector is run.

Selection rules (SPEC.md states them): ``-k`` patterns match vector ids as globs when they hold
``*``, ``?`` or ``[``, else as substrings; shard ``I/N`` takes the vectors whose index in the
id-sorted selection is ``I - 1`` modulo ``N``. A known-failures file lists one vector id per
line; text from ``#`` to the end of a line is a comment.
"""

from __future__ import annotations

import fnmatch
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import checker
from conformance.checker import VectorResult
from conformance.driver import (
    Adapter,
    AdapterFailure,
    AdapterProcess,
    AdapterStartError,
    Handshake,
    Prepared,
)
from conformance.policy import ERROR_KINDS
from conformance.vectors import Vector

#: After this many failed restarts in a row a worker stops taking vectors.
MAX_FAILED_RESTARTS = 2

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


# -- selection -------------------------------------------------------------------------------


def matches(vector_id: str, pattern: str) -> bool:
    """``-k``: a glob over the whole id if the pattern has ``*``, ``?`` or ``[``, else a
    substring. Case-sensitive, since ids are."""
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(vector_id, pattern)
    return pattern in vector_id


def select(vectors: Sequence[Vector], patterns: Sequence[str] | None) -> list[Vector]:
    """The vectors whose id matches any of ``patterns`` (all of them when there are none)."""
    if not patterns:
        return list(vectors)
    return [v for v in vectors if any(matches(v.id, pattern) for pattern in patterns)]


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` with ``1 <= I <= N`` as ``(I, N)``; raise ValueError naming the fault."""
    head, sep, tail = text.partition("/")
    try:
        if not sep:
            raise ValueError
        index, count = int(head), int(tail)
    except ValueError:
        raise ValueError(f"shard must be I/N with integers, e.g. 1/4, got {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {text!r} needs 1 <= I <= N")
    return index, count


def shard_vectors(vectors: Sequence[Vector], shard: tuple[int, int] | None) -> list[Vector]:
    """Shard ``I/N``: the vectors at index ``I - 1`` modulo ``N`` among the ids sorted by code
    point; the given order is kept. Every vector is in exactly one of the N shards."""
    if shard is None:
        return list(vectors)
    index, count = shard
    ranked = sorted(v.id for v in vectors)
    chosen = {vector_id for rank, vector_id in enumerate(ranked) if rank % count == index - 1}
    return [v for v in vectors if v.id in chosen]


class KnownFailuresError(ValueError):
    """A known-failures file that cannot be read or holds a line that is not an id."""


def parse_known_failures(text: str, source: str = "<known failures>") -> set[str]:
    """Vector ids, one per line; ``#`` starts a comment; blank lines are ignored."""
    ids = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if any(char.isspace() for char in line):
            raise KnownFailuresError(
                f"{source}:{number}: expected one vector id per line, got {line!r}"
            )
        ids.add(line)
    return ids


def read_known_failures(path: str | Path) -> set[str]:
    """:func:`parse_known_failures` of a file; raise :class:`KnownFailuresError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise KnownFailuresError(f"{path}: cannot read the known-failures file: {error}") from None
    return parse_known_failures(text, str(path))


def format_known_failures(ids: Iterable[str], comment: str = "") -> str:
    """The text of a known-failures file listing ``ids`` sorted, after a comment header."""
    header = "# snapkv-conformance known failures: one vector id per line; '#' starts a comment.\n"
    if comment:
        header += "".join(f"# {line}\n" for line in comment.splitlines())
    return header + "".join(f"{vector_id}\n" for vector_id in sorted(set(ids)))


def runnable_problems(vectors: Sequence[Vector]) -> list[str]:
    """Faults that make vectors unusable by the runner (file, field and reason), if any.

    Cheaper than full validation (``snapkv-conformance validate``): unique ids, a ``new``
    first, and expectations of the right shape.
    """
    problems = []
    seen: dict[str, Any] = {}
    for vector in vectors:
        where = str(vector.path) if vector.path is not None else vector.id
        if vector.id in seen:
            problems.append(f"{where}: /id: duplicate id {vector.id!r} (also in {seen[vector.id]})")
        seen[vector.id] = where
        if not vector.calls or vector.calls[0].op != "new":
            problems.append(f"{where}: /calls/0: the first call must be new")
        for index, call in enumerate(vector.calls):
            problem = _expect_problem(call.op, call.expect)
            if problem:
                problems.append(f"{where}: /calls/{index}/expect: {problem}")
    return problems


def _expect_problem(op: str, expect: Mapping[str, Any] | None) -> str | None:
    if expect is None:
        return None
    if not isinstance(expect, Mapping) or len(expect) != 1:
        return "must be {'victims': [...]} or {'error': kind}"
    if "error" in expect:
        return None if expect["error"] in ERROR_KINDS else f"unknown error kind {expect['error']!r}"
    victims = expect.get("victims")
    if op != "evict":
        return "only an evict can expect victims"
    if not isinstance(victims, list) or not all(type(v) is int for v in victims):
        return "victims must be a list of integers"
    return None


def needs_fresh_session(vector: Vector) -> bool:
    """True for a vector whose ``new`` must be refused and which goes on after it.

    A refused ``new`` leaves any earlier policy in place, so what follows (a step expecting
    ``no-policy``, say) means something only on an adapter that has had no policy yet.
    """
    return len(vector.calls) > 1 and vector.calls[0].expected_error is not None


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
        for adapter in adapters:
            adapter.kill()
        raise
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


def _start_all(factory: Callable[[], Adapter], jobs: int) -> tuple[list[Adapter], Handshake]:
    """Start ``jobs`` adapters in parallel; on any failure close them all and raise."""
    adapters = [factory() for _ in range(jobs)]
    errors: list[AdapterStartError] = []

    def start(adapter: Adapter) -> None:
        try:
            adapter.start()
        except AdapterStartError as error:
            errors.append(error)

    threads = [threading.Thread(target=start, args=(a,), daemon=True) for a in adapters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for adapter in adapters:
            adapter.close()
        raise errors[0]
    handshake = adapters[0].handshake
    assert handshake is not None
    return adapters, handshake


class _Suite:
    """The shared work list: hands out vector indices and collects results in order."""

    def __init__(self, vectors: list[Vector], known: set[str], progress: Progress | None) -> None:
        self.vectors = vectors
        self.known = known
        self.results: list[VectorResult | None] = [None] * len(vectors)
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(vectors)):
            self._todo.put(index)
        self._progress = progress
        self._lock = threading.Lock()
        self._done = 0

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
            if self._progress is not None:
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
    """One adapter and the loop that runs vectors on it."""

    def __init__(self, adapter: Adapter, suite: _Suite) -> None:
        self.adapter = adapter
        self.suite = suite
        self.warnings: list[str] = []
        self.capabilities = adapter.handshake.capabilities if adapter.handshake else ()
        self._dirty = False  # has this adapter seen a vector since it (re)started?
        self._broken = False  # must it be restarted before its next exchange?
        self._failed_restarts = 0
        self._previous: tuple[int, VectorResult] | None = None

    def work(self) -> None:
        try:
            while self._failed_restarts < MAX_FAILED_RESTARTS:
                index = self.suite.take()
                if index is None:
                    break
                self.suite.record(index, self.run_vector(index))
        finally:
            self.close()

    def run_vector(self, index: int) -> VectorResult:
        vector = self.suite.vectors[index]
        began = time.monotonic()
        result = self._attempt(vector, retry=True, index=index)
        result.duration = time.monotonic() - began
        return result

    def _attempt(self, vector: Vector, *, retry: bool, index: int) -> VectorResult:
        trouble = self._ready(fresh=needs_fresh_session(vector))
        if trouble is not None:
            return VectorResult(vector.id, checker.CRASH, message=trouble)
        self._dirty = True
        prepared = Prepared([call.request for call in vector.calls])
        failure: AdapterFailure | None = None
        try:
            answers = self.adapter.exchange(prepared)
        except AdapterFailure as caught:
            failure, answers = caught, caught.answers
            self._broken = True
            if failure.earlier:
                self._blame_previous(failure)
                if retry:
                    return self._attempt(vector, retry=False, index=index)
        result = checker.judge(vector, answers, failure=failure)
        if not result.passed:
            if not result.stderr_tail:
                result.stderr_tail = self.adapter.stderr_tail()
            self._diagnose(vector, result)
        self._previous = (index, result)
        return result

    def _ready(self, *, fresh: bool) -> str | None:
        """Restart the adapter if it is broken (or a fresh session is needed); None if ready."""
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
        if result.verdict not in (checker.WRONG_VICTIMS, checker.BROKEN_INVARIANT):
            return
        if "scores" not in self.capabilities:
            result.diagnosis = (
                "no scores diagnosis: the adapter does not announce the scores capability"
            )
            return
        assert result.call_index is not None
        if self._ready(fresh=needs_fresh_session(vector)) is not None:
            result.diagnosis = "no scores diagnosis: the adapter could not be restarted"
            return
        requests = checker.diagnosis_requests(vector, result.call_index)
        try:
            answers = self.adapter.exchange(requests)
        except AdapterFailure as failure:
            self._broken = True
            result.diagnosis = f"no scores diagnosis: the replay failed: {failure.detail}"
            return
        result.diagnosis = checker.diagnose(vector, result.call_index, answers, result.actual)

    def close(self) -> None:
        if self._broken:
            self.adapter.kill()  # its stream is not trusted (it may be hung): no bye
        else:
            self.adapter.close()
        self.warnings.extend(self.adapter.close_problems)
        if self.adapter.bye_failure is not None:
            self._blame_previous(self.adapter.bye_failure)

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
import json
import queue
import threading
import time
from collections import deque
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
    Ticket,
    encode_body,
)
from conformance.policy import ERROR_KINDS
from conformance.vectors import Vector

#: After this many failed restarts in a row a worker stops taking vectors.
MAX_FAILED_RESTARTS = 2
#: How many vectors a worker keeps in flight on its adapter.
WINDOW = 2

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


# -- request bytes ---------------------------------------------------------------------------

# The bytes a list of JSON numbers is made of (a step's attn as a vector file writes it).
_NUMBER_LIST_BYTES = b"0123456789.eE+-,"
_CALLS_OPEN = b'\n  "calls": [\n'
_EVICT_BODY = b'"op":"evict"}\n'


def prepare_vector(vector: Vector) -> Prepared:
    """The vector's requests, with their bodies taken from the vector file where possible.

    Encoding attention weights costs the runner as much as decoding them costs the adapter,
    and the canonical vector file already holds each request as one compact JSON line. So the
    bodies of step requests are the file's own bytes, after checking line by line that each is
    exactly its call; any doubt (a file not in canonical layout, changed since it was loaded)
    falls back to encoding the parsed requests.
    """
    requests = [call.request for call in vector.calls]
    lines = _call_lines(vector)
    if lines is not None:
        bodies = [_verbatim(call, line) for call, line in zip(vector.calls, lines, strict=True)]
        if all(body is not None for body in bodies):
            return Prepared(requests, bodies)  # type: ignore[arg-type]
    return Prepared(requests)


def _call_lines(vector: Vector) -> list[bytes] | None:
    """The file's call lines, one per call, if its layout is the canonical one."""
    if vector.path is None:
        return None
    try:
        data = vector.path.read_bytes()
    except OSError:
        return None
    start = data.find(_CALLS_OPEN)
    if start < 0:
        return None
    lines = data[start + len(_CALLS_OPEN) :].split(b"\n", len(vector.calls))
    count = len(vector.calls)
    if len(lines) <= count or not lines[count].startswith(b"  ]"):
        return None
    calls = [line.strip() for line in lines[:count]]
    if not all(line.endswith(b",") for line in calls[:-1]):
        return None
    return [line[:-1] for line in calls[:-1]] + calls[-1:]


def _verbatim(call: Any, line: bytes) -> bytes | None:
    """The request body from ``line`` if ``line`` is exactly ``call``, else None.

    A step line is checked by its text: it must start with the compact JSON of the call's other
    fields, and the rest up to the closing brace must be ``null`` or a list of numbers (so it
    is one object and that text is the attention). Other lines are small: they are parsed and
    compared, and their bodies encoded.
    """
    request = call.request
    if call.op == "evict" and len(request) == 1:
        # The common shapes, checked without a JSON round trip: evict lines are most others.
        expected = b'{"op":"evict"}'
        if call.expect is not None and call.expected_victims is not None:
            victims = b",".join(b"%d" % v for v in call.expected_victims)
            expected = b'{"op":"evict","expect":{"victims":[' + victims + b"]}}"
        if line == expected:
            return _EVICT_BODY
    if call.op == "step" and call.expect is None and list(request)[-1] == "attn":
        if list(request) == ["op", "pos", "attn"] and type(request["pos"]) is int:
            prefix = b'{"op":"step","pos":%d,"attn":' % request["pos"]
        else:
            head = {key: value for key, value in request.items() if key != "attn"}
            prefix = _compact(head)[:-1] + b',"attn":'
        if line.startswith(prefix) and line.endswith(b"}"):
            attn = line[len(prefix) : -1]
            if attn == b"null" or (
                attn.startswith(b"[")
                and attn.endswith(b"]")
                and not attn[1:-1].translate(None, _NUMBER_LIST_BYTES)
            ):
                return line[1:] + b"\n"
    try:
        same = json.loads(line) == call.to_json()
    except ValueError:
        return None
    return encode_body(request) if same else None


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


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
        self._prepared: dict[int, Prepared] = {}
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(vectors)):
            self._todo.put(index)
        self._progress = progress
        self._lock = threading.Lock()
        self._done = 0

    def prepared(self, index: int) -> Prepared:
        """Vector ``index``'s requests, encoded once (a vector may run twice)."""
        prepared = self._prepared.get(index)
        if prepared is None:
            prepared = self._prepared[index] = prepare_vector(self.vectors[index])
        return prepared

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
    """One adapter and the loop that runs vectors on it.

    Up to :data:`WINDOW` vectors are in flight at once: the next vector's requests are sent
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

    def work(self) -> None:
        try:
            self._loop()
        finally:
            self.close()

    def _take(self) -> int | None:
        if self._redo:
            return self._redo.popleft()
        if self._failed_restarts >= MAX_FAILED_RESTARTS:
            return None  # leave the rest to workers whose adapters still start
        return self.suite.take()

    def _loop(self) -> None:
        inflight: deque[tuple[int, float, Ticket]] = deque()
        upcoming = self._take()
        while upcoming is not None or inflight:
            while upcoming is not None and len(inflight) < WINDOW:
                if inflight and not self._may_join(upcoming):
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
            if result.verdict in (checker.WRONG_VICTIMS, checker.BROKEN_INVARIANT):
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

"""Running protocol checks: each in a raw session of its own (the one transport), judged by
:func:`conformance.judge.check_answers.judge_check`, one result per check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from conformance.judge.check_answers import judge_check
from conformance.judge.verdicts import Judged
from conformance.runner.results import VectorResult
from conformance.spec.text import catches_of
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.transport.pipes import waited
from conformance.transport.raw import Transcript, talk

#: Bytes of adapter output kept per check; a check needs a few lines, never more.
MAX_OUTPUT = 1 << 20


def run_session(
    argv: Sequence[str], data: bytes, timeout: float, answers_due: int | None = None
) -> Transcript:
    """Start ``argv``, write ``data``, close its input and read its answers until it exits:
    one raw session of the one transport (:func:`conformance.transport.raw.talk`), at most
    :data:`MAX_OUTPUT` bytes of answers kept. Raises
    :class:`~conformance.transport.process.StartError` for a command that cannot start."""
    return talk(argv, data, timeout=timeout, answers_due=answers_due, max_output=MAX_OUTPUT)


def run_check(
    check: ProtocolCheck, argv: Sequence[str], timeout: float
) -> tuple[Judged, Transcript]:
    """Run ``check`` in a fresh session of ``argv`` and judge it."""
    session = run_session(argv, check.payload, timeout, answers_due=len(check.expect))
    verdict = judge_check(
        check, session.answers, exit_status=session.exit_status, timed_out=session.timed_out
    )
    return verdict, session


#: Sessions run at once: each is a short-lived process that mostly waits to start.
PARALLEL_SESSIONS = 4


def run_checks(
    checks: Sequence[ProtocolCheck],
    argv: Sequence[str],
    *,
    timeout: float,
    jobs: int = 1,
    known_failures: frozenset[str] | set[str] = frozenset(),
    progress: Callable[[Any, int, int], None] | None = None,
) -> list[Any]:
    """Run every check in its own session and return one
    :class:`~conformance.runner.results.VectorResult` per check, in the order given.

    ``progress(result, done, total)`` is called as each check is judged (in the order they
    finish), from one thread at a time, as :func:`conformance.runner.workers.run_vectors`
    calls it."""
    if not checks:
        return []
    lock = threading.Lock()
    done = ended = 0
    all_ended = threading.Event()

    def one(check: ProtocolCheck) -> VectorResult:
        nonlocal done, ended
        try:
            result = judged(check)
            if progress is not None:
                with lock:
                    done += 1
                    progress(result, done, len(checks))
            return result
        finally:
            with lock:
                ended += 1
                if ended == len(checks):
                    all_ended.set()

    def judged(check: ProtocolCheck) -> VectorResult:
        verdict, session = run_check(check, argv, timeout)
        failed = not verdict.passed
        return VectorResult(
            verdict,
            catches=catches_of(check.description) if failed else "",
            stderr_tail=session.stderr_tail if failed else "",
            duration=session.duration,
            known_failure=check.id in known_failures,
        )

    pool = ThreadPoolExecutor(max(PARALLEL_SESSIONS, jobs))
    try:
        futures = [pool.submit(one, check) for check in checks]
        # In slices: a stop signal the kernel gave a session's thread is handled here within
        # moments (it kills the adapters, which ends the sessions), not once they time out.
        waited(all_ended.wait)
        return [future.result() for future in futures]
    finally:  # after a stop signal the sessions in flight end with their killed adapters
        pool.shutdown(wait=True, cancel_futures=True)

"""The one run: :class:`Run`, the suite as every front end runs it (``run``, ``matrix``, the
pytest plugin), and its :class:`RunResult`.

A run takes what was selected (``-k`` and shards are
:func:`conformance.suite.discovery.select_items`'s, applied before), runs the vectors on
persistent adapters (:func:`conformance.runner.workers.run_vectors`) and each protocol check in
a session of its own (:func:`conformance.runner.check_sessions.run_checks`), keeps every
result, and then, asked to and when an item failed (a vector or a protocol check), adds the
triage (:func:`triaged`). The
pytest plugin runs the same items one at a time (:meth:`Run.one`, then :meth:`Run.close`), on
the same adapter code, with the same triage at the end. So a port fails the same items,
explained the same way, whichever front end runs it.

Invariant: no numpy on this path, even in a function, but the triage's import, which only a
failing run takes (the catalogue it replays is numpy); every adapter a run starts is closed
when it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformance.numerics.profiles import EXACT, profile_named
from conformance.numerics.verdict import NOT_APPLICABLE, WITHIN
from conformance.runner.check_sessions import run_checks
from conformance.runner.client import Client, Handshake
from conformance.runner.results import VectorResult
from conformance.runner.workers import Progress, SuiteItem, VectorRunner, run_vectors
from conformance.spec.errors import KitError
from conformance.spec.text import KEEP_TEXT, capped, escape
from conformance.suite.discovery import select_items
from conformance.suite.protocol_checks import ProtocolCheck, load_check
from conformance.suite.stream import SuiteEntry
from conformance.suite.vectors import Vector
from conformance.transport import process
from conformance.transport.session import ANSWER_TIMEOUT, AdapterProcess, Transport


def timeout_problem(seconds: float) -> str | None:
    """Why ``seconds`` cannot be a timeout, or None: the one rule for every front end's
    ``--timeout`` and the plugin's ``--snapkv-timeout``. A timeout is a finite number of seconds
    greater than zero: ``inf`` or ``nan`` would let a hung adapter hang the run for good."""
    if not seconds > 0 or seconds == float("inf"):
        return f"must be a positive number of seconds, got {seconds!r}"
    return None


__all__ = [
    "Explanation",
    "Progress",
    "Run",
    "RunResult",
    "SuiteItem",
    "VectorRunner",
    "run_suite",
    "timeout_problem",
    "triage_into",
    "triaged",
]


class Explanation(Protocol):
    """What a report shows of a failing run's triage (:class:`conformance.explain.triage.Triage`
    is one): the run carries it and never looks inside."""

    def headline(self) -> str: ...

    def lines(self) -> list[str]: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass
class RunResult:
    """Everything a report needs about one run.

    ``results`` are in suite order (the vectors, then the protocol checks, as given).
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
    #: Stopped by a stop signal while running: ``results`` hold only the items that finished.
    interrupted: bool = False
    #: The numerics profile the run judged failures under (``exact``: none).
    numerics: str = EXACT
    #: The stop signal (a ``KeyboardInterrupt``) that came during the triage, after every item
    #: was judged: the results are whole and the triage is left out (with a warning). A front
    #: end writes its outputs, then raises it (:func:`triage_into`).
    stopped: KeyboardInterrupt | None = None
    #: Why a run whose vectors failed has no triage (also among ``warnings``), or ``""``.
    no_triage: str = ""

    @property
    def counts(self) -> dict[str, int]:
        """``passed`` (exactly), ``within`` and ``not_applicable`` (present under a numerics
        profile only) and ``failed`` are what the summary line says; they add up to ``total``
        minus ``known_failures``. ``stale_known_failures`` (listed, but passed) are counted in
        ``failed``."""
        results = self.results

        def under(status: str) -> int:
            return sum(
                r.numerics is not None and r.numerics.status == status and not r.known_failure
                for r in results
            )

        counts = {
            "total": len(results),
            "passed": sum(r.passed and not r.known_failure for r in results),
            "failed": sum(r.fails_run for r in results),
            "known_failures": sum(
                not (r.passed or r.tolerated) and r.known_failure for r in results
            ),
            "stale_known_failures": sum(
                (r.passed or r.tolerated) and r.known_failure for r in results
            ),
        }
        if self.numerics != EXACT:
            counts.update(within=under(WITHIN), not_applicable=under(NOT_APPLICABLE))
        return counts

    @property
    def ok(self) -> bool:
        """True when no result fails the run (the exit status is then 0)."""
        return not any(result.fails_run for result in self.results)


def triaged(
    vectors: Sequence[Any],
    results: Sequence[VectorResult],
    checks: Sequence[Any] = (),
    numerics: str = EXACT,
    capabilities: Sequence[str] | None = None,
) -> Explanation | None:
    """The triage of a run, or None when none of its items failed unlisted: which catalogued
    mistakes and protocol-level choices answer as the port did on ``vectors`` and the protocol
    ``checks`` (their results among ``results``). ``vectors`` and ``checks`` may be suite
    entries: each is read only if something is replayed on it. In an exact run (``numerics``),
    when a numerics profile explains every failure as rounding, the first line says so
    (:func:`conformance.explain.rounding_triage.with_rounding`). ``capabilities``: what the
    port announced in its hello (None: unknown). The one place a run is triaged."""
    ids = {item.id for item in (*vectors, *checks)}
    ran = [result for result in results if result.vector_id in ids]
    # A stale known failure (a listed item that passes, or a vector within the numerics
    # profile) fails the run but is no failure of the port: a run whose only faults are those
    # has nothing to explain.
    if not any(result.fails_run and not (result.passed or result.tolerated) for result in ran):
        return None
    # Here: the catalogue the triage replays is numpy, and only a failing run loads it.
    from conformance.explain.rounding_triage import with_rounding
    from conformance.explain.triage import triage

    found = triage(list(vectors), ran, checks=list(checks), capabilities=capabilities)
    vector_ids = {vector.id for vector in vectors}
    of_vectors = [result for result in ran if result.vector_id in vector_ids]
    # Rounding explains vectors only: a failing protocol check is a mistake whatever the
    # arithmetic, so the rounding line would not explain every failure.
    a_check_failed = any(
        result.fails_run and not result.passed
        for result in ran
        if result.vector_id not in vector_ids
    )
    if numerics != EXACT or a_check_failed:
        return found
    return with_rounding(found, vectors, of_vectors)


def triage_into(result: RunResult, vectors: Sequence[Any], checks: Sequence[Any] = ()) -> None:
    """Add the triage of ``result``'s vectors and protocol ``checks`` (:func:`triaged`) to
    ``result``, never at the cost of its verdicts or outputs: the one place every front end's
    triage goes through. A run stopped by a signal is not triaged: what failed after the kit
    killed the adapters is not the port's doing.

    A vector file that can no longer be read (removed, rewritten into something invalid,
    swapped for a FIFO since it ran) leaves a warning that says so instead of a triage (also in
    ``result.no_triage``). A stop signal during the triage (SIGINT, SIGTERM, SIGHUP: it may
    take many seconds) leaves the warning ``the triage was interrupted: none is reported`` (in
    ``result.no_triage`` too) and sets ``result.stopped``: the caller writes what it writes for
    a finished run, then raises it."""
    if process.interrupted():
        return
    try:
        announced = result.handshake.capabilities if result.handshake else None
        result.triage = triaged(vectors, result.results, checks, result.numerics, announced)
    except (KitError, OSError) as error:
        result.no_triage = (
            f"no triage: {escape(capped(str(error), KEEP_TEXT), one_line=True)} (was a vector "
            "file changed or removed during the run?)"
        )
    except KeyboardInterrupt as stop:
        result.no_triage = "the triage was interrupted: none is reported"
        result.stopped = stop
    if result.no_triage:
        result.warnings.append(result.no_triage)


@dataclass
class Run:
    """The suite as every front end runs it: the vectors on persistent adapters, then each
    protocol check in a session of its own, so a port fails the same items whichever front end
    runs it.

    ``vectors`` and ``checks`` are what was selected (``-k`` and shards already applied,
    :func:`conformance.suite.discovery.select_items`); files are read when their turn comes.
    ``shard`` is only reported. Give either ``adapter_argv`` (each adapter is
    ``AdapterProcess(adapter_argv, timeout)``) or ``adapter_factory``, a no-argument callable
    returning a fresh transport (an :class:`~conformance.transport.in_process.InProcessAdapter`,
    say): protocol checks need a program, so with a factory only vectors run. ``jobs`` adapters
    run the vectors in parallel. ``known_failures`` are ids whose failure does not fail the run
    (and whose pass does). ``progress(result, done, total)`` is called as each item is judged,
    vectors first, from one thread at a time, and never after SIGINT or SIGTERM
    (:func:`conformance.transport.process.interrupt_all`), so that a front end can write what
    finished. With ``validate_protocol`` every answer of an ``adapter_argv`` process is also
    held to the shipped response schema. With ``triage``, a failing run (a vector or a protocol
    check failed) carries its triage (:func:`triage_into`). ``numerics`` names the numerics
    profile a failed vector is judged again under (:mod:`conformance.numerics`; ``exact``, the
    default, judges nothing again).
    """

    vectors: Sequence[SuiteItem] = ()
    checks: Sequence[SuiteEntry | ProtocolCheck] = ()
    adapter_argv: Sequence[str] | None = None
    adapter_factory: Callable[[], Transport] | None = None
    jobs: int = 1
    timeout: float = ANSWER_TIMEOUT
    shard: tuple[int, int] | None = None
    known_failures: Iterable[str] = ()
    progress: Progress | None = None
    validate_protocol: bool = False
    triage: bool = False
    numerics: str = EXACT
    # The items run one at a time (:meth:`one`): their adapter, results and items.
    _runner: VectorRunner | None = field(default=None, init=False, repr=False)
    _results: list[VectorResult] = field(default_factory=list, init=False, repr=False)
    _ran: list[SuiteItem] = field(default_factory=list, init=False, repr=False)
    _ran_checks: list[ProtocolCheck] = field(default_factory=list, init=False, repr=False)
    _began: float = field(default_factory=time.monotonic, init=False, repr=False)

    def __post_init__(self) -> None:
        if (self.adapter_argv is None) == (self.adapter_factory is None):
            raise ValueError("give exactly one of adapter_argv and adapter_factory")
        self.known_failures = frozenset(self.known_failures)
        self._profile = profile_named(self.numerics)  # ValueError naming the choices

    def execute(self) -> RunResult:
        """Run everything; raise :class:`AdapterStartError` when the adapter cannot start,
        :class:`VectorError` or :class:`CheckError` for a file the runner cannot use, and
        :class:`StartError` when the adapter no longer starts for the checks."""
        began = time.monotonic()
        given = self.progress

        def progress(result: VectorResult, done: int, total: int) -> None:
            # After SIGINT or SIGTERM the adapters were killed by the kit, not by their bugs:
            # what is judged from then on is not a result of the port.
            if given is not None and not process.interrupted():
                given(result, done, total)

        result = self._result([])
        if self.vectors:
            ran = run_vectors(
                self.vectors,
                self._client,
                jobs=self.jobs,
                known=self._known,
                progress=progress,
                numerics=self._profile,
            )
            result.results, result.handshake = ran.results, ran.handshake
            result.jobs, result.warnings = ran.jobs, ran.warnings
        result.results.extend(self._checks(self.checks, progress))
        if self.triage:
            triage_into(result, self.vectors, self.checks)
        result.duration = time.monotonic() - began
        return result

    # -- one item at a time ----------------------------------------------------------------

    def one(self, item: Vector | ProtocolCheck) -> VectorResult:
        """Run one item now, as :meth:`execute` runs it: a vector on this run's one adapter
        (started on first use, restarted after a failure), a protocol check in a session of
        its own. Raises :class:`AdapterStartError` (the adapter is then killed; the next vector
        starts it again) or :class:`StartError` as :meth:`execute` does."""
        if isinstance(item, ProtocolCheck):
            (result,) = self._checks([item])
            self._ran_checks.append(item)
        else:
            if self._runner is None:
                self._runner = VectorRunner(
                    self._transport(),
                    known=self._known,
                    validate_protocol=self._validating,
                    numerics=self._profile,
                )
            try:
                result = self._runner.run(item)
            except BaseException:
                self._runner.adapter.kill()  # a handshake found broken late leaves it running
                self._runner = None
                raise
            self._ran.append(item)
        self._results.append(result)
        return result

    def close(self) -> RunResult:
        """Say ``bye`` to the adapter of :meth:`one` and give what the items run so far make:
        their results in the order run, the warnings, and (with ``triage``) the triage."""
        result = self._result(self._results)
        if self._runner is not None:
            result.handshake = self._runner.adapter.handshake
            result.warnings = self._runner.close()
            self._runner = None
        if self.triage:
            triage_into(result, self._ran, self._ran_checks)
        result.duration = time.monotonic() - self._began
        return result

    # -- what both share -------------------------------------------------------------------

    @property
    def _known(self) -> frozenset[str]:
        return frozenset(self.known_failures)

    def _transport(self) -> Transport:
        if self.adapter_argv is not None:
            return AdapterProcess(list(self.adapter_argv), self.timeout)
        assert self.adapter_factory is not None
        return self.adapter_factory()

    @property
    def _validating(self) -> bool:
        """Whether answers are held to the response schema: a program's, when asked."""
        return self.validate_protocol and self.adapter_argv is not None

    def _client(self) -> Client:
        return Client(self._transport(), validate_protocol=self._validating)

    def _checks(
        self, items: Sequence[SuiteEntry | ProtocolCheck], progress: Progress | None = None
    ) -> list[VectorResult]:
        if not items or self.adapter_argv is None:
            return []
        checks = [
            item if isinstance(item, ProtocolCheck) else load_check(item.path) for item in items
        ]
        return run_checks(
            checks,
            self.adapter_argv,
            timeout=self.timeout,
            jobs=self.jobs,
            known_failures=self._known,
            progress=progress,
        )

    def _result(self, results: list[VectorResult]) -> RunResult:
        argv = list(self.adapter_argv) if self.adapter_argv is not None else None
        return RunResult(
            list(results),
            None,
            shard=self.shard,
            adapter_argv=argv,
            jobs=self.jobs,
            timeout=self.timeout,
            numerics=self.numerics,
        )


def run_suite(
    vectors: Sequence[SuiteItem],
    adapter_argv: Sequence[str] | None = None,
    *,
    shard: tuple[int, int] | None = None,
    **options: Any,
) -> RunResult:
    """:class:`Run` of ``vectors`` alone (shard ``shard`` of them, chosen as
    :func:`conformance.suite.discovery.select_items` chooses), for a caller that has only
    vectors: ``Run(selected, adapter_argv=..., **options).execute()``, nothing else."""
    selected, _ = select_items(vectors, (), None, shard)
    return Run(selected, (), adapter_argv, shard=shard, **options).execute()

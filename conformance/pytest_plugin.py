"""The pytest plugin: ``pytest --snapkv-adapter CMD`` runs the suite as test items.

Registered through the ``pytest11`` entry point as ``snapkv``, so every pytest run in an
environment with the kit installed loads this module. It therefore imports nothing but pytest
at import time and, without ``--snapkv-adapter``, does nothing beyond declaring its options:
no items, no hooks, no adapter. With the option, a collector named ``snapkv`` joins whatever
else pytest collects (so it works in a directory with no tests and beside a project's own
tests), with one item per vector and per protocol check, named ``snapkv::<id>``; each item
fails with the verdict ``snapkv-conformance run`` gives it, so a port fails the same items in
both.

The items run through the one :class:`conformance.runner.run.Run`, one at a time
(:meth:`~conformance.runner.run.Run.one`): one adapter process per session, or per worker
under pytest-xdist (each worker process loads the plugin and collects the same items), started
when the first vector runs and closed when the session ends, so restarts after a crash, fresh
sessions and the scores diagnosis are exactly those of ``snapkv-conformance run``; each
protocol check runs in a session of its own, as ``run`` runs it. A failing session ends with
the run's triage (:func:`conformance.runner.run.triage_into`), of the whole run under xdist.

As on the command line: the options are held to the same rules (``--snapkv-timeout inf`` is a
usage error); the transport's signal policy holds for the session
(:func:`conformance.transport.process.signal_policy`: SIGINT, SIGTERM or SIGHUP kills every
adapter at once, pytest writes its reports, JUnit included, and exits 130, 143 or 129; during
the triage, the results stand and only the triage is left out); the session adopts and kills
what adapters leave behind (a child subreaper, swept when the session ends); and a fault of the
kit itself fails its item as the kit's, with the line that says where its traceback was saved,
and makes the session exit 70, never a port's failure.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conformance.runner.results import VectorResult
    from conformance.runner.run import Run, RunResult
    from conformance.suite.protocol_checks import ProtocolCheck
    from conformance.suite.vectors import Vector

#: The name of the collector that holds the vector items (the first part of their node ids).
COLLECTOR = "snapkv"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("snapkv", "SnapKV conformance vectors (snapkv-conformance)")
    group.addoption(
        "--snapkv-adapter",
        metavar="CMD",
        help="run the SnapKV conformance suite against this adapter command (split like a "
        "POSIX shell splits it, run without a shell), one test per vector and protocol check",
    )
    group.addoption(
        "--snapkv-vectors",
        action="append",
        default=[],
        metavar="PATH",
        help="vector files or directories (repeatable; default: the committed suite)",
    )
    group.addoption(
        "--snapkv-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds allowed for each adapter answer (default 10)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("snapkv_adapter", None) is not None:
        config.addinivalue_line("markers", "snapkv: a SnapKV conformance vector (from the plugin)")
        config.pluginmanager.register(SnapKVSession(config), "snapkv-session")


class SnapKVSession:
    """The plugin's work when ``--snapkv-adapter`` is given: items in, one adapter per process."""

    def __init__(self, config: pytest.Config) -> None:
        # Why lazy: the plugin loads in every pytest run with the kit installed; the kit itself
        # is imported only when --snapkv-adapter asks for it.
        from conformance.transport.process import CommandError, split_command

        self.command = config.getoption("snapkv_adapter")
        try:
            self.argv = split_command(self.command, "--snapkv-adapter")
        except CommandError as error:
            raise pytest.UsageError(str(error)) from None
        from conformance.runner.run import timeout_problem

        self.paths = [str(path) for path in config.getoption("snapkv_vectors")]
        self.timeout = config.getoption("snapkv_timeout")
        problem = timeout_problem(self.timeout)
        if problem is not None:
            raise pytest.UsageError(f"--snapkv-timeout {problem}")
        self._signals = contextlib.ExitStack()
        #: The exit status pytest ends with on our account: a stop signal's, or a fault's.
        self._status: int | None = None
        self._session: pytest.Session | None = None
        #: The kit's own faults outside any item (the triage's), each said in one line.
        self._faults: list[str] = []
        #: The items run here, one at a time; a pytest-xdist worker leaves the triage to the
        #: controller, which triages the whole run.
        self._run: Run | None = None
        self._triage = not hasattr(config, "workerinput")
        self._start_error: str | None = None
        self.finished: RunResult | None = None
        self._worker_results: list[str] = []  # under pytest-xdist, the workers' results

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from conformance.transport import process

        process.begin()
        process.become_subreaper()  # orphaned descendants of adapters come to this process
        self._signals.enter_context(process.signal_policy())

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        from conformance.transport.process import Interrupted

        if isinstance(excinfo.value, Interrupted):
            self._status = excinfo.value.status

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._signals.close()

    def _fault(self, error: Exception) -> KitFault:
        """A fault of the kit's while running an item: its traceback saved, the session's exit
        status :data:`~conformance.spec.errors.EXIT_INTERNAL`."""
        from conformance.spec.errors import EXIT_INTERNAL, internal_error_line

        if self._status is None:
            self._status = EXIT_INTERNAL
        return KitFault(internal_error_line("(pytest plugin)", error, [self.command]))

    def pytest_report_header(self, config: pytest.Config) -> str:
        where = ", ".join(self.paths) or "the committed suite"
        return f"snapkv: adapter {self.command}; vectors from {where}"

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """Add the vector collector to the session's own collection (its args' collectors).

        Being part of the ordinary collection, the items are counted, listed by
        ``--collect-only``, deselected by ``-k`` and ``-m``, and collected by each xdist worker.
        """
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            vectors, checks = _load(self.paths)
            report.result.append(
                VectorSuite.from_parent(
                    collector,
                    name=COLLECTOR,
                    nodeid=_collector_nodeid(collector.config),
                    vectors=vectors,
                    checks=checks,
                )
            )
        return report

    def one(self, item: Vector | ProtocolCheck) -> VectorResult:
        """Run one item through the run, starting its adapter on first use: a vector on this
        process's adapter, a protocol check in a session of its own, as ``run`` runs them."""
        from conformance.runner.run import Run
        from conformance.suite.protocol_checks import ProtocolCheck
        from conformance.transport.failures import AdapterStartError
        from conformance.transport.process import StartError

        if self._start_error is not None and not isinstance(item, ProtocolCheck):
            raise AdapterNotStarted(self._start_error)
        if self._run is None:
            self._run = Run(adapter_argv=self.argv, timeout=self.timeout, triage=self._triage)
        try:
            return self._run.one(item)
        except StartError as error:  # a check's session: this check fails, the next may start
            raise AdapterNotStarted(f"the adapter {self.command} cannot start: {error}") from None
        except (AdapterStartError, OSError) as error:
            # Every later item fails the same way at once rather than retrying a broken start.
            self._start_error = f"the adapter {self.command} cannot start: {error}"
            raise AdapterNotStarted(self._start_error) from None
        except Exception as error:  # a bug of the kit's: never the port's failure
            raise self._fault(error) from error

    def _stopped(self, result: RunResult) -> None:
        """A stop signal that came during ``result``'s triage: the session ends with its
        status once pytest has written its reports (the results stand)."""
        from conformance.transport.process import Interrupted

        if result.stopped is not None and self._status is None:
            stop = result.stopped
            self._status = stop.status if isinstance(stop, Interrupted) else 2

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from conformance.transport import process

        self._session = session
        try:
            if self._run is not None:
                try:
                    self.finished = self._run.close()
                except Exception as error:  # a bug of the kit's (in the triage, say)
                    self._faults.append(str(self._fault(error)))
                else:
                    self._stopped(self.finished)
                self._run = None
        finally:
            process.shutdown()  # nothing an adapter started outlives the session
        if self._status is not None:
            session.exitstatus = self._status
        output = getattr(session.config, "workeroutput", None)
        if output is not None and self.finished is not None:  # a pytest-xdist worker
            output[WORKER_RESULTS] = [_result_to_wire(result) for result in self.finished.results]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist's controller: keep a finished worker's results for the triage."""
        self._worker_results.extend(getattr(node, "workeroutput", {}).get(WORKER_RESULTS, ()))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        finished = self.finished
        for warning in finished.warnings if finished is not None else ():
            terminalreporter.write_line(f"snapkv: warning: {warning}")
        found = finished.triage if finished is not None else None
        why = finished.no_triage if finished is not None else ""
        if self._worker_results:  # under pytest-xdist the items ran in the workers
            from conformance.runner.run import RunResult, triage_into

            whole = RunResult([_result_from_wire(data) for data in self._worker_results], None)
            try:
                vectors = _load(self.paths)[0]
            except pytest.UsageError as error:  # a file changed since it ran
                why = f"no triage: {error}"
            else:
                try:
                    triage_into(whole, vectors)
                except Exception as error:  # a bug of the kit's: never the port's failure
                    self._faults.append(str(self._fault(error)))
                found, why = whole.triage, whole.no_triage
                self._stopped(whole)
                if self._status is not None and self._session is not None:
                    self._session.exitstatus = self._status
        for fault in self._faults:
            terminalreporter.write_line(f"snapkv: {fault}")
        if found is not None or why:
            terminalreporter.section("snapkv triage")
            for line in found.lines() if found is not None else [why]:
                terminalreporter.write_line(line)


def _load(paths: list[str]) -> tuple[list[Vector], list[ProtocolCheck]]:
    """The suite's vectors and protocol checks under ``paths`` (default: the committed suite),
    each sorted by id, read as ``run`` reads them; a file that cannot be used is a usage error
    naming it."""
    from conformance.spec.errors import VectorError
    from conformance.spec.resources import suite_dir
    from conformance.suite.protocol_checks import CheckError, load_check
    from conformance.suite.stream import plan_suite

    try:
        plan = plan_suite(paths or [suite_dir()])
        return [entry.load() for entry in plan.vectors], [
            load_check(entry.path) for entry in plan.checks
        ]
    except (VectorError, CheckError) as error:
        raise pytest.UsageError(f"--snapkv-vectors: invalid vectors: {error}") from None


def _collector_nodeid(config: pytest.Config) -> str:
    """The collector's node id, so that pytest shows the items as ``snapkv::<id>``.

    pytest reads a node id's first part as a path below the rootdir and shows it relative to
    the invocation directory: a bare ``snapkv`` would read ``../snapkv::...`` when pytest runs
    in a subdirectory. So the collector sits in the invocation directory.
    """
    try:
        here = config.invocation_params.dir.relative_to(config.rootpath)
    except ValueError:  # invoked outside the rootdir: nothing better to show
        return COLLECTOR
    return (here / COLLECTOR).as_posix()


#: The key of a pytest-xdist worker's results in its ``workeroutput``.
WORKER_RESULTS = "snapkv_results"


def _result_to_wire(result: VectorResult) -> str:
    """A result as JSON text, to pass from an xdist worker to the controller (execnet carries
    only plain values). Non-finite floats travel as JSON's extensions; nothing is printed."""
    import dataclasses
    import json

    from conformance.judge.verdicts import Errored

    data = dataclasses.asdict(result)
    data["errored"] = isinstance(result.judged, Errored)
    return json.dumps(data)


def _result_from_wire(text: str) -> VectorResult:
    import json

    from conformance.judge.verdicts import Errored, Verdict
    from conformance.runner.results import VectorResult

    data = json.loads(text)
    judged = data.pop("judged")
    # The triage compares the answers' outcomes as tuples: JSON gave lists.
    judged["answers"] = _tuples(judged.get("answers", ()))
    kind = Errored if data.pop("errored") else Verdict
    return VectorResult(kind(**judged), **data)


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    return value


class AdapterNotStarted(Exception):
    """The adapter could not be started, so no vector can run."""


class KitFault(Exception):
    """A fault of the kit itself while running an item: the message says so and where the
    traceback was saved (never a port's failure)."""


class VectorFailed(Exception):
    """A vector's verdict was not a pass."""

    def __init__(self, result: VectorResult) -> None:
        super().__init__(result.describe())
        self.result = result


class VectorSuite(pytest.Collector):
    """The collector of the suite's items: ``snapkv``, vectors then protocol checks."""

    def __init__(
        self, *, vectors: list[Vector], checks: list[ProtocolCheck], **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.vectors = vectors
        self.checks = checks

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = [
            VectorItem.from_parent(self, name=v.id, vector=v) for v in self.vectors
        ]
        items += [CheckItem.from_parent(self, name=c.id, check=c) for c in self.checks]
        return items


class _SuiteItem(pytest.Item):
    """What the plugin's items share: a failure shown as ``run`` prints it."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, VectorFailed):
            from conformance.report.terminal import format_result

            # The show command a FAIL block ends with names the suite run when it is not the
            # committed one (--snapkv-vectors), as run's FAIL blocks do.
            session = self.config.pluginmanager.get_plugin("snapkv-session")
            paths = session.paths if isinstance(session, SnapKVSession) else []
            return format_result(excinfo.value.result, paths)
        if isinstance(excinfo.value, AdapterNotStarted | KitFault):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class VectorItem(_SuiteItem):
    """One vector, run against the adapter and judged by the checker."""

    def __init__(self, *, vector: Vector, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vector = vector
        self.add_marker("snapkv")

    def runtest(self) -> None:
        session = self.config.pluginmanager.get_plugin("snapkv-session")
        assert isinstance(session, SnapKVSession)
        result = session.one(self.vector)
        if not result.passed:
            raise VectorFailed(result)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.vector.path or COLLECTOR, None, f"snapkv vector {self.vector.id}"


class CheckItem(_SuiteItem):
    """One protocol check, in a session of its own, judged as ``run`` judges it."""

    def __init__(self, *, check: ProtocolCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.add_marker("snapkv")

    def runtest(self) -> None:
        session = self.config.pluginmanager.get_plugin("snapkv-session")
        assert isinstance(session, SnapKVSession)
        result = session.one(self.check)
        if not result.passed:
            raise VectorFailed(result)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.check.path or COLLECTOR, None, f"snapkv protocol check {self.check.id}"

"""Shared test set-up: each run's temporary files in one directory of its own, and the
skipped tests logged for ``.ci/run``."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest

_OWN_BASETEMP = pytest.StashKey[str]()
_KEPT = pytest.StashKey[str]()
#: Whether this process is a pytest-xdist worker (the controller reports every test too).
_WORKER = False


def pytest_configure(config: pytest.Config) -> None:
    """Put every test's temporary files in one directory of this run's own, which
    :func:`pytest_sessionfinish` removes: a run leaves nothing behind in the temp directory.

    Only the controlling process picks it (pytest-xdist hands each worker a subdirectory of
    it); an explicit ``--basetemp`` is left alone.
    """
    global _WORKER
    _WORKER = hasattr(config, "workerinput")
    if config.option.basetemp is None and not _WORKER:
        base = tempfile.mkdtemp(prefix="snapkv-conformance-tests-")
        config.option.basetemp = base
        config.stash[_OWN_BASETEMP] = base


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    base = session.config.stash.get(_OWN_BASETEMP, None)
    if base is None:
        return
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        shutil.rmtree(base, ignore_errors=True)
    else:  # a failing test's files help to see why
        session.config.stash[_KEPT] = base


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    kept = config.stash.get(_KEPT, None)
    if kept is not None:
        terminalreporter.write_line(f"the tests' temporary files are kept in {kept}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With ``SNAPKV_SKIPPED_LOG`` set, append each skipped test's node id to that file:
    ``.ci/run`` runs exactly those again once it has installed what they need and set ``CI``
    (benchmarks/readme_commands.py)."""
    log = os.environ.get("SNAPKV_SKIPPED_LOG")
    if log and report.skipped and not hasattr(report, "wasxfail") and not _WORKER:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(report.nodeid + "\n")

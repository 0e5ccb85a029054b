"""Protocol checks, each in a session of its own: a stop signal ends them within moments,
whichever of the kit's threads the kernel hands it to."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from conformance.runner.check_sessions import run_checks
from conformance.spec.resources import suite_dir
from conformance.suite.protocol_checks import load_check
from conformance.transport import process
from tests.support.hostile import adapter, signal_another_thread


def test_a_stop_signal_given_to_a_session_thread_stops_the_checks_within_moments(
    tmp_path: Path,
) -> None:
    """Ctrl-C sent to the kit may be handed to a session's thread; Python runs the handler in
    the main thread only, when it next runs Python code. The main thread waited on the sessions
    in one uninterruptible wait, so with their adapters hung the signal policy acted only at
    the check timeout (a CI flake: no exit within 20 s of SIGINT). It waits in slices now."""
    hung = tmp_path / "hung"
    stuck = adapter(
        f"import time; open({str(hung)!r}, 'w').close(); time.sleep(3600)"
    )  # fmt: skip
    checks = [
        load_check(suite_dir() / "protocol" / name) for name in ("crlf.json", "blank-lines.json")
    ]
    process.begin()
    signal_another_thread(signal.SIGINT, hung.exists)
    started = time.monotonic()
    try:
        with pytest.raises(process.Interrupted), process.signal_policy():
            run_checks(checks, stuck, timeout=60)
        assert time.monotonic() - started < 15
    finally:
        process.shutdown()
        process.begin()

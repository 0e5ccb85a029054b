"""A raw session: a stop signal ends it within moments, whichever of the kit's threads the
kernel hands it to."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from conformance.transport import process
from conformance.transport.raw import talk
from tests.support.hostile import adapter, signal_another_thread


@pytest.mark.parametrize("answers_due", [1, None])
def test_a_stop_signal_given_to_another_thread_stops_a_raw_session_within_moments(
    tmp_path: Path, answers_due: int | None
) -> None:
    """bench, fuzz --protocol and record talk in the main thread; it waited on a silent adapter
    in one poll (or one wait for its exit) as long as the timeout, so a Ctrl-C handed to the
    writer's or the stderr drain's thread was acted on only then. It waits in slices now."""
    hung = tmp_path / "hung"
    silent = adapter(f"import time; open({str(hung)!r}, 'w').close(); time.sleep(3600)")
    process.begin()
    signal_another_thread(signal.SIGINT, hung.exists)
    started = time.monotonic()
    try:
        with pytest.raises(process.Interrupted), process.signal_policy():
            talk(
                silent, b'{"id":0,"op":"hello","protocol":1}\n', timeout=60, answers_due=answers_due
            )
        assert time.monotonic() - started < 15
    finally:
        process.shutdown()
        process.begin()

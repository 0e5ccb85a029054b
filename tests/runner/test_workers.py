"""The vectors on persistent adapters: a stop signal ends the run within moments, whichever of
the kit's threads the kernel hands it to."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from conformance.runner.run import Run
from conformance.suite.stream import plan_suite
from conformance.transport import process
from tests.support.hostile import hanging_adapter, signal_another_thread
from tests.support.small_suite import write_small_suite


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_stop_signal_given_to_a_worker_thread_stops_the_vectors_within_moments(
    tmp_path: Path, jobs: int
) -> None:
    """The main thread joined the workers in one uninterruptible wait: a Ctrl-C handed to a
    worker's thread was acted on only at the hung adapter's timeout. It waits in slices now."""
    hung = tmp_path / "hung"
    vectors = plan_suite([str(write_small_suite(tmp_path / "vectors"))]).vectors
    process.begin()
    signal_another_thread(signal.SIGINT, hung.exists)
    started = time.monotonic()
    try:
        with pytest.raises(process.Interrupted), process.signal_policy():
            Run(vectors, adapter_argv=hanging_adapter(hung), jobs=jobs, timeout=60).execute()
        assert time.monotonic() - started < 15
    finally:
        process.shutdown()
        process.begin()

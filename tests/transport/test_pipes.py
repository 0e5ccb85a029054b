"""An adapter's pipes are read whatever their descriptor numbers: a run with many descriptors
open (``--jobs 400``, a CI runner's high ``ulimit -n``) drains stderr as any other."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator

import pytest

from conformance.runner.client import Client
from tests.support.hostile import SERVE, adapter

#: Descriptors held open so that the adapter's pipes get numbers past select()'s 1024.
HELD = 1100
PARAMS = {"budget": 4, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1}


@pytest.fixture
def descriptors_past_1024() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < HELD + 200:
        pytest.skip(f"the hard descriptor limit ({hard}) keeps every descriptor below 1024")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, HELD + 200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(HELD)]
    try:
        yield
    finally:
        for descriptor in held:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_chatty_adapter_is_drained_past_descriptor_1024(descriptors_past_1024: None) -> None:
    """Case 16: with the stderr pipe at a descriptor past 1024, ``select`` raised and the
    drain stopped, so an adapter that writes more than a pipe holds to stderr before it
    answers hello blocked or died of SIGPIPE, and was refused at the handshake."""
    chatty = adapter(
        SERVE
        + """
for _ in range(64):
    sys.stderr.write("log line " * 400 + "\\n")  # 230 KB in all: more than a pipe holds
sys.stderr.flush()
serve()
"""
    )
    with Client.process(chatty, 30) as running:
        group = running.transport._group  # type: ignore[union-attr]
        assert group is not None and group.stdout.fileno() >= 1024  # the case is the one meant
        assert running.handshake is not None
        assert running.exchange([{"op": "new", "params": PARAMS, "seed": 0}])[0]["ok"]
        assert "log line" in running.stderr_tail(1)

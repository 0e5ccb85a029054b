"""``bench`` streams its workload, honours ``--timeout`` and holds hello to protocol v1 as
``run`` does."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.tools import bench
from tests.support.hostile import adapter

REFERENCE = shlex.join(bench.REFERENCE_ARGV)


def test_the_workload_is_made_a_piece_at_a_time() -> None:
    """A billion steps' stream is never built: pieces come one at a time, each bounded, and
    they add up to the same bytes as the whole stream."""
    small = dataclasses.replace(bench.WORKLOADS[0], steps=300)
    assert b"".join(small.pieces(size=4096)) == small.stream()
    assert small.stream().count(b"\n") == small.requests
    huge = dataclasses.replace(bench.WORKLOADS[0], steps=10**9)
    pieces = huge.pieces()
    first, second = next(pieces), next(pieces)
    assert len(first) < 2 * bench.PIECE and len(second) < 2 * bench.PIECE
    assert huge.requests == 2 * 10**9 + 3


@pytest.mark.slow
def test_a_billion_steps_stop_at_the_timeout_in_bounded_memory(tmp_path: Path) -> None:
    """Case 14: ``--steps 1000000000`` used to build the whole stream first (823 MB after
    two minutes) and never apply ``--timeout``; now the run stops at the timeout, exit 2,
    its memory a small multiple of one piece."""
    script = (
        "import resource, sys\n"
        "from conformance.cli import main\n"
        "status = main(['bench', '--adapter', sys.argv[1], '--workload', 'defaults',\n"
        "               '--repeats', '1', '--steps', '1000000000', '--timeout', '5'])\n"
        "print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script, REFERENCE],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    took = time.monotonic() - started
    status, peak_mb = done.stdout.split()[-2:]
    assert status == "2" and int(peak_mb) < 250, done.stdout + done.stderr
    assert "no answer within the 5 s timeout" in done.stderr and took < 60, (took, done.stderr)


def test_a_hello_nested_100000_deep_is_refused_as_run_refuses_it() -> None:
    """Left-over 2: such a hello passed bench's look for ``"ok":true`` and the port was
    timed; ``run`` refuses it."""
    nested = adapter(
        """
import sys
head = b'{"id":0,"ok":true,"protocol":1,"capabilities":[],"implementation":'
sys.stdout.buffer.write(head + b"[" * 100000 + b"]" * 100000 + b"}\\n")
sys.stdout.buffer.flush()
for line in sys.stdin.buffer:
    pass
"""
    )
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "bench", "--adapter", shlex.join(nested),
         "--repeats", "1", "--steps", "20", "--workload", "defaults"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "no successful hello answer: " in done.stderr
    assert "nested more than 64 levels deep" in done.stderr


def test_a_port_named_with_10_mib_is_shown_capped() -> None:
    """Case 19 in bench: the port's name reaches the terminal capped."""
    hello = (
        b'{"id":0,"ok":true,"protocol":1,"capabilities":[],"implementation":{"name":"'
        + b"n" * (10 << 20)
        + b'","language":"c","version":"1"}}'
    )
    shown = bench.identity(hello)
    assert len(shown) < 500 and shown.endswith("more characters) (c) 1")

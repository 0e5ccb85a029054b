"""`snapkv-conformance adapter`: it ends quietly when whoever reads its answers goes away."""

from __future__ import annotations

import contextlib
import subprocess

from tests.support.runner_support import REFERENCE_ARGV

BOUND = 20.0  # seconds allowed for any wait on a subprocess here (a loaded 2-core machine)


def test_the_adapter_ends_quietly_when_its_reader_goes_away():
    proc = subprocess.Popen(
        REFERENCE_ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    with contextlib.suppress(BrokenPipeError):  # the adapter may be gone before all is written
        proc.stdin.write(b'{"id":1,"op":"evict"}\n' * 10000)
        proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(BOUND) == 141
    assert b"Traceback" not in err

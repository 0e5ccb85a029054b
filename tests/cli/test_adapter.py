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


def test_adapter_mutant_serves_line_by_line_exactly_the_choices_that_read_lines_otherwise():
    # `adapter --mutant` decides by family, without loading the triage's replay module.
    from conformance import mutants
    from conformance.explain.play import reads_lines_otherwise

    for mutant in (*mutants.CATALOGUE, *mutants.PROTOCOL):
        assert reads_lines_otherwise(mutant.policy) == (mutant.family == "protocol"), mutant.name

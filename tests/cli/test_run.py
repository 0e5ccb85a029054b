"""``snapkv-conformance run`` and the known-failures file: a run whose only faults are stale
entries (listed vectors that now pass) prints those lines and the summary, no triage."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from conformance.suite.discovery import read_known_failures
from tests.support.runner_support import mutant_argv

PASSING = "ties/lower-position-first"
STALE_LINE = (
    f"FAIL {PASSING}: pass (listed as a known failure, but it passes: remove it from the list)"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "run", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_a_run_whose_only_failures_are_stale_entries_prints_only_the_stale_lines(
    tmp_path: Path,
) -> None:
    known = tmp_path / "known.txt"
    known.write_text(f"{PASSING}\n")
    rewritten = tmp_path / "rewritten.txt"
    done = run(
        "-k", PASSING, "--known-failures", str(known), "--write-known-failures", str(rewritten)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    head, _, summary = done.stdout.partition("\n\n")
    assert head.splitlines() == [STALE_LINE]
    assert "triage" not in done.stdout and "failures by first divergence" not in done.stdout
    assert summary.splitlines()[-2:] == [
        f"known failures ({known}): 0 still failing, 1 now passing",
        "0 passed, 1 failed",
    ]
    assert read_known_failures(rewritten) == set()


def test_a_run_with_a_real_failure_beside_a_stale_entry_is_still_triaged(tmp_path: Path) -> None:
    """The contrast: the mutant fails a vector that it did not fail before, so the triage has
    evidence and runs."""
    failing = "ties/pooled-not-raw"
    known = tmp_path / "known.txt"
    known.write_text("order/victims-ascending\n")
    adapter = shlex.join(mutant_argv("ties-to-higher-position"))
    done = run(
        "-k", failing, "-k", "order/victims-ascending", "--adapter", adapter,
        "--known-failures", str(known),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL {failing}: call " in done.stdout
    assert "FAIL order/victims-ascending: pass (listed as a known failure" in done.stdout
    assert "\ntriage: " in done.stdout and "failures by first divergence:" in done.stdout

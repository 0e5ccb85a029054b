"""``pytest --snapkv-adapter`` held to the command line's promises: its options checked by the
same rules, the same signal policy, and the kit's own faults never a port's failure."""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile import gone, hanging_adapter, wait_for_text
from tests.support.runner_support import REFERENCE_ARGV, mutant_argv
from tests.support.small_suite import write_small_suite

pytest_plugins = ["pytester"]

REFERENCE = shlex.join(REFERENCE_ARGV)


@pytest.mark.parametrize("timeout", ["inf", "nan", "-1"])
def test_a_timeout_the_cli_refuses_is_a_usage_error(
    pytester: pytest.Pytester, timeout: str
) -> None:
    """Case 20: ``--snapkv-timeout inf`` used to be accepted (the CLI refuses it), and the
    session then hung as long as the adapter did."""
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--snapkv-adapter", REFERENCE, "--snapkv-timeout", timeout
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --snapkv-timeout must be a positive number of seconds, got {float(timeout)!r}"]
    )


@pytest.mark.slow
@pytest.mark.parametrize(("name", "status"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_stop_signal_kills_the_adapter_and_writes_the_junit_file(
    tmp_path: Path, name: str, status: int
) -> None:
    """Case 15: a cancelled CI job (SIGTERM) or a closed terminal (SIGHUP) used to kill
    pytest at once, the hung adapter running on and no JUnit file written."""
    suite = write_small_suite(tmp_path / "vectors")
    pid_file, junit = tmp_path / "adapter.pid", tmp_path / "junit.xml"
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
        "--snapkv-adapter", shlex.join(hanging_adapter(pid_file)), "--snapkv-vectors",
        str(suite), "--snapkv-timeout", "300", f"--junitxml={junit}",
    ]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    ) as session:
        hung = int(wait_for_text(pid_file, within=120))
        session.send_signal(getattr(signal, name))
        stdout, stderr = session.communicate(timeout=60)
    assert session.returncode == status, stdout[-3000:] + stderr[-3000:]
    assert gone(hung)
    assert junit.read_text().startswith("<?xml")


def assert_internal_error_saved(output: str) -> None:
    """The session's output names the kit's own fault (the conftest's planted
    ``1 % len(members)``) as a bug of the kit's, and the file its traceback was saved in, which
    holds it (and is removed)."""
    found = re.search(
        r"internal error: ZeroDivisionError: integer modulo by zero: this is a bug in "
        r"snapkv-conformance, not in the port under test; the full traceback is saved in (\S+);",
        output,
    )
    assert found is not None, output
    saved = Path(found.group(1))
    try:
        assert "1 % len(members)" in saved.read_text()
    finally:
        saved.unlink()


def test_a_fault_of_the_kit_fails_the_item_as_the_kit_s_and_exits_70(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Left-over 3 in the plugin: a bug of the kit's while running an item says so (and where
    its traceback is) and makes the session exit 70, not 1, which blames the port."""
    suite = write_small_suite(tmp_path / "vectors")
    pytester.makeconftest(
        """
        from conformance.runner import run

        real = run.VectorRunner.run

        def run_one(self, vector):
            members = []
            return 1 % len(members)

        def pytest_configure(config):
            run.VectorRunner.run = run_one

        def pytest_unconfigure(config):
            run.VectorRunner.run = real
        """
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--snapkv-adapter", REFERENCE, "--snapkv-vectors", str(suite),
        "-k", "tiny/ties",
    )  # fmt: skip
    assert result.ret == 70
    assert_internal_error_saved(result.stdout.str())


def test_a_fault_of_the_kit_in_the_triage_exits_70_with_the_results_kept(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """A bug of the kit's in the triage a failing session ends with (after every item was
    judged) says so, and where its traceback is, and makes the session exit 70 as the command
    line does, not pytest's internal-error status; the items keep their verdicts."""
    suite = write_small_suite(tmp_path / "vectors")
    pytester.makeconftest(
        """
        from conformance.explain import triage

        real = triage.triage

        def broken(vectors, results, **options):
            members = []
            return 1 % len(members)

        def pytest_configure(config):
            triage.triage = broken

        def pytest_unconfigure(config):
            triage.triage = real
        """
    )
    ties = shlex.join(mutant_argv("ties-to-higher-position"))  # fails tiny/ties
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--snapkv-adapter", ties, "--snapkv-vectors", str(suite),
        "-k", "tiny/",
    )  # fmt: skip
    assert result.ret == 70, result.stdout.str()
    result.assert_outcomes(passed=2, failed=2)
    assert_internal_error_saved(result.stdout.str())

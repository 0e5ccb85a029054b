"""The pytest plugin: items named by vector id, the checker's verdicts, -k, -x, JUnit, xdist.

Each test runs pytest on a temporary directory (pytester) holding a four-vector suite whose
expectations come from the reference, against the reference adapter or a planted bug.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from conformance.spec import resources
from tests.support.paths import TESTS
from tests.support.runner_support import REFERENCE_ARGV, mutant_argv
from tests.support.small_suite import IDS, write_small_suite

pytest_plugins = ["pytester"]

REFERENCE = shlex.join(REFERENCE_ARGV)
TIES = shlex.join(mutant_argv("ties-to-higher-position"))


@pytest.fixture
def suite(pytester):
    return write_small_suite(pytester.path / "vectors")


def snapkv(adapter: str, suite) -> list[str]:
    return ["-p", "no:cacheprovider", "--snapkv-adapter", adapter, "--snapkv-vectors", str(suite)]


def test_without_the_option_the_plugin_does_nothing(pytester):
    pytester.makepyfile(
        """
        def test_plugin_is_loaded_but_idle(pytestconfig):
            assert pytestconfig.pluginmanager.has_plugin("snapkv")
            assert pytestconfig.pluginmanager.get_plugin("snapkv-session") is None
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    collected = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    assert "snapkv::" not in collected.stdout.str()


def test_one_item_per_vector_named_by_its_id(pytester, suite):
    result = pytester.runpytest(*snapkv(REFERENCE, suite), "--collect-only", "-q")
    assert [f"snapkv::{vector_id}" for vector_id in IDS] == [
        line for line in result.stdout.lines if line.startswith("snapkv::")
    ]


def test_items_fail_with_the_checkers_verdict(pytester, suite):
    result = pytester.runpytest(*snapkv(TIES, suite))
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    assert "FAIL tiny/ties: call 3 (evict): wrong-victims: evicted [1], expected [0]" in output
    assert "    expected: [0]\n    actual:   [1]\n" in output
    assert "collected 4 items" in output
    assert pytester.runpytest(*snapkv(REFERENCE, suite)).ret == pytest.ExitCode.OK


def test_a_failure_ends_with_the_command_that_shows_the_vector_in_the_suite_run(pytester, suite):
    """As run's FAIL blocks: the suite given by --snapkv-vectors is named, so the command
    finds the vector that failed, not the committed suite's (which has no tiny/ties)."""
    result = pytester.runpytest(*snapkv(TIES, suite))
    command = f"snapkv-conformance show tiny/ties {shlex.quote(str(suite))}"
    assert f"    its calls and the answers due: {command}\n" in result.stdout.str()
    shown = subprocess.run(
        [sys.executable, "-m", "conformance", *shlex.split(command)[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("tiny/ties (vector)\n")


def test_beside_the_projects_own_tests(pytester, suite):
    pytester.makepyfile(test_mine="def test_mine(): pass")
    result = pytester.runpytest(*snapkv(REFERENCE, suite), "-v")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*test_mine.py::test_mine PASSED*", "*snapkv::tiny/ties PASSED*"])


def test_items_read_snapkv_from_a_subdirectory(pytester, suite):
    """Run from below the rootdir, the items still read ``snapkv::<id>``, not ``../snapkv``."""
    pytester.makeini("[pytest]\n")  # the rootdir: pytester.path
    sub = pytester.mkdir("sub")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(sub)
        result = pytester.runpytest(*snapkv(TIES, suite), "-v", "-rf")
    lines = [line for line in result.stdout.lines if "snapkv::" in line]
    assert lines and all(line.startswith(("snapkv::", "FAILED snapkv::")) for line in lines), (
        result.stdout.str()
    )
    assert "FAILED snapkv::tiny/ties" in result.stdout.str()


def test_k_selects_and_x_stops(pytester, suite):
    selected = pytester.runpytest(*snapkv(TIES, suite), "-k", "ties or refusal")
    selected.assert_outcomes(passed=1, failed=1, deselected=2)
    assert pytester.runpytest(*snapkv(TIES, suite), "-m", "snapkv").ret == 1
    stopped = pytester.runpytest(*snapkv(TIES, suite), "-x")
    stopped.assert_outcomes(passed=2, failed=1)  # null-ring and refusal pass; ties stops it


def test_junit_xml(pytester, suite):
    report = pytester.path / "junit.xml"
    pytester.runpytest(*snapkv(TIES, suite), f"--junitxml={report}")
    cases = ET.parse(report).getroot().iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert sorted(by_name) == sorted(IDS)
    assert {case.get("classname") for case in by_name.values()} == {"snapkv"}
    failure = by_name["tiny/ties"].find("failure")
    assert failure is not None and "wrong-victims" in failure.get("message")
    assert by_name["tiny/refusal"].find("failure") is None


@pytest.mark.slow
def test_xdist_one_adapter_per_worker_closed_at_the_end(pytester, suite):
    log = pytester.path / "adapters.log"
    adapter = pytester.path / "logging_adapter.py"
    adapter.write_text(
        textwrap.dedent(
            f"""
            import os, sys
            from conformance.adapter.server import serve
            with open({str(log)!r}, "a") as out:
                out.write(f"start {{os.getpid()}}\\n")
            status = serve(sys.stdin.buffer, sys.stdout.buffer)
            with open({str(log)!r}, "a") as out:
                out.write(f"bye {{os.getpid()}}\\n")
            sys.exit(status)
            """
        )
    )
    command = shlex.join([sys.executable, str(adapter)])
    result = pytester.runpytest_subprocess(*snapkv(command, suite), "-n", "2", timeout=120)
    result.assert_outcomes(passed=4)
    events = [line.split() for line in log.read_text().splitlines()]
    started = [pid for event, pid in events if event == "start"]
    assert len(started) == len(set(started)) == 2  # each worker its own adapter, started once
    assert sorted(pid for event, pid in events if event == "bye") == sorted(started)


def test_an_adapter_that_cannot_start_fails_every_item(pytester, suite):
    result = pytester.runpytest(*snapkv(str(pytester.path / "missing-adapter"), suite))
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*missing-adapter cannot start*"])


@pytest.mark.parametrize(
    "args",
    [
        ["--snapkv-adapter", REFERENCE, "--snapkv-vectors", "no/such/dir"],
        ["--snapkv-adapter", "'unclosed"],
        ["--snapkv-adapter", REFERENCE, "--snapkv-timeout", "0"],
    ],
)
def test_usage_errors(pytester, args):
    assert pytester.runpytest("-p", "no:cacheprovider", *args).ret == pytest.ExitCode.USAGE_ERROR


LAX = shlex.join(
    [
        sys.executable,
        str(TESTS / "lax_adapters" / "lax.py"),
        "hello-loose",
    ]
)


def test_protocol_checks_are_items_and_fail_a_lax_protocol_layer(pytester, suite):
    """The plugin runs the suite ``run`` runs: its protocol checks too, each an item judged as
    ``run`` judges it, so a port whose hello accepts ``"protocol": true`` fails here as well."""
    checks = suite / "protocol"
    checks.mkdir()
    for name in ("hello-protocol-true", "crlf"):
        source = resources.suite_dir() / "protocol" / f"{name}.json"
        (checks / f"{name}.json").write_bytes(source.read_bytes())
    collected = pytester.runpytest(*snapkv(REFERENCE, suite), "--collect-only", "-q")
    assert "snapkv::protocol/hello-protocol-true" in collected.stdout.lines
    assert "snapkv::protocol/crlf" in collected.stdout.lines
    assert pytester.runpytest(*snapkv(REFERENCE, suite)).ret == pytest.ExitCode.OK
    result = pytester.runpytest(*snapkv(LAX, suite), "-rf")
    result.assert_outcomes(passed=5, failed=1)
    output = result.stdout.str()
    assert "FAILED snapkv::protocol/hello-protocol-true" in output
    assert "SPEC.md §3.2: hello's protocol must be the JSON integer 1" in output

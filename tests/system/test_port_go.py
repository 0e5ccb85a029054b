"""The Go port (``adapters/go``): ``go vet`` and ``go test`` clean, the reference's answers
exactly on random and trap streams, and the committed suite through ``snapkv-conformance run``.

Built with ``make -C adapters/go``. Without go and make the tests skip, or fail when ``CI`` is
set: a CI run must not pass without testing the port.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tests.support.port_template_checks as checks
from tests.support.paths import ROOT
from tests.support.port_differential import port_output, run_committed_suite
from tests.support.toolchains import require_tools

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

GO_DIR = ROOT / "adapters" / "go"


@pytest.fixture(scope="session")
def go_adapter() -> list[str]:
    return checks.make_adapter(GO_DIR, "go", "go")


def test_go_vet_and_go_test_are_clean(go_adapter: list[str]) -> None:
    go = require_tools("go")["go"]
    vet = subprocess.run(
        [go, "vet", "./..."], cwd=GO_DIR, capture_output=True, text=True, timeout=600, check=False
    )
    assert vet.returncode == 0 and not vet.stdout.strip(), vet.stdout + vet.stderr
    # The conformance test inside go test runs the kit: put this interpreter's scripts first.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    test = subprocess.run(
        [go, "test", "-count=1", "-v", "./..."],
        cwd=GO_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert test.returncode == 0, test.stdout[-4000:] + test.stderr[-4000:]
    assert "--- PASS: TestConformanceSuite" in test.stdout, test.stdout[-4000:]
    assert test.stdout.count("--- PASS") >= 5, test.stdout[-4000:]


def test_random_scenarios_match_the_reference(go_adapter: list[str]) -> None:
    checks.random_scenarios(go_adapter, 200)


def test_language_traps(go_adapter: list[str]) -> None:
    checks.traps(go_adapter)


def test_long_lines(go_adapter: list[str]) -> None:
    checks.long_lines(go_adapter)


def test_parameters_at_the_limit(go_adapter: list[str]) -> None:
    checks.parameters_at_the_limit(go_adapter)


def test_answers_each_line_before_reading_the_next(go_adapter: list[str]) -> None:
    checks.answers_each_line_before_reading_the_next(go_adapter)


def test_bye_ends_the_session(go_adapter: list[str]) -> None:
    checks.bye_ends_the_session(go_adapter)


def test_hello_names_the_go_port(go_adapter: list[str]) -> None:
    out = port_output(go_adapter, b'{"id":1,"op":"hello","protocol":1}\n')
    assert b'"name":"snapkv-go"' in out and b'"language":"go"' in out, out


def test_committed_suite_passes(go_adapter: list[str]) -> None:
    assert "snapkv-go" in run_committed_suite(go_adapter[0])

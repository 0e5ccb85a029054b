"""The TypeScript port (``adapters/typescript``): its ``node --test`` tests, the reference's
answers exactly on random and trap streams, and the committed suite through
``snapkv-conformance run``.

Built with ``make -C adapters/typescript`` (``npm ci`` fetches the compiler, a dev dependency,
on the first build). Without node, npm and make the tests skip, or fail when ``CI`` is set.
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

TS_DIR = ROOT / "adapters" / "typescript"


@pytest.fixture(scope="session")
def ts_adapter() -> list[str]:
    return checks.make_adapter(TS_DIR, "typescript", "node", "npm")


def test_node_version_is_supported(ts_adapter: list[str]) -> None:
    node = require_tools("node")["node"]
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    assert int(version.stdout.strip().lstrip("v").split(".")[0]) >= 20, version.stdout


def test_npm_test_passes(ts_adapter: list[str]) -> None:
    npm = require_tools("npm")["npm"]
    # The conformance test inside npm test runs the kit: put this interpreter's scripts first.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [npm, "test", "--silent"],
        cwd=TS_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "# fail 0" in out and "# skipped 0" in out, out[-4000:]
    assert "ok 1 - the snapkv-conformance suite passes" in out, out[-4000:]
    passed = int(next(line for line in out.splitlines() if line.startswith("# pass")).split()[2])
    assert passed >= 7, out[-4000:]


def test_random_scenarios_match_the_reference(ts_adapter: list[str]) -> None:
    checks.random_scenarios(ts_adapter, 60)


def test_language_traps(ts_adapter: list[str]) -> None:
    checks.traps(ts_adapter)


def test_long_lines(ts_adapter: list[str]) -> None:
    checks.long_lines(ts_adapter)


def test_parameters_at_the_limit(ts_adapter: list[str]) -> None:
    checks.parameters_at_the_limit(ts_adapter)


def test_answers_each_line_before_reading_the_next(ts_adapter: list[str]) -> None:
    checks.answers_each_line_before_reading_the_next(ts_adapter)


def test_bye_ends_the_session(ts_adapter: list[str]) -> None:
    checks.bye_ends_the_session(ts_adapter)


def test_hello_names_the_typescript_port(ts_adapter: list[str]) -> None:
    out = port_output(ts_adapter, b'{"id":1,"op":"hello","protocol":1}\n')
    assert b'"name":"snapkv-typescript"' in out and b'"language":"typescript"' in out, out


def test_committed_suite_passes(ts_adapter: list[str]) -> None:
    assert "snapkv-typescript" in run_committed_suite(ts_adapter[0])

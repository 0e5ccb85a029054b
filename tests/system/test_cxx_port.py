"""A C++ port written from SPEC.md alone (tests/heldout/cxx_port.cpp, built once with g++),
run through the whole suite, vectors and protocol checks, once faithful and once with each of
its planted mistakes: the faithful build passes; every mistake fails the run, and the first
triage line names it exactly, with the run's own figures (tests/heldout/cxx_port.py,
``EXACT``). Two mistakes the catalogue cannot reproduce (``SAYS``: chronological sums, whose
failures are all rounding another order also gives; uint32 positions, not catalogued) are held
to what the first line truthfully says instead: the numerics verdict, and "closest", never
"likely cause"."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.runner.run import Run, RunResult
from conformance.spec import resources
from conformance.suite.stream import plan_suite
from tests.heldout.cxx_port import EXACT, SAYS, build
from tests.system.test_engine_ports import _named_exactly


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.toolchains import require_tools

    tools = require_tools("gcc", "g++")
    return build(tmp_path_factory.mktemp("cxx-port"), tools["gcc"], tools["g++"])


def _run(port: Path, mistake: str) -> RunResult:
    plan = plan_suite([str(resources.suite_dir())])
    return Run(plan.vectors, plan.checks, [str(port), mistake], jobs=2, triage=True).execute()


@pytest.mark.slow
def test_the_faithful_cxx_port_passes_every_vector_and_check(port: Path) -> None:
    run = _run(port, "NONE")
    assert run.ok and run.counts["failed"] == 0, run.counts


@pytest.mark.slow
@pytest.mark.parametrize("mistake", sorted(EXACT))
def test_a_planted_cxx_mistake_is_named_exactly_by_the_first_triage_line(
    port: Path, mistake: str
) -> None:
    line = _named_exactly(_run(port, mistake), EXACT[mistake])
    assert all(choice in line for choice in EXACT[mistake]), line


@pytest.mark.slow
@pytest.mark.parametrize("mistake", sorted(SAYS))
def test_a_planted_cxx_mistake_the_catalogue_cannot_reproduce_gets_a_truthful_first_line(
    port: Path, mistake: str
) -> None:
    run = _run(port, mistake)
    assert not run.ok and run.triage is not None
    line = run.triage.lines()[0]
    counts = run.counts
    assert line.startswith(SAYS[mistake].format(**counts)), line
    assert not line.startswith("triage: likely cause"), line

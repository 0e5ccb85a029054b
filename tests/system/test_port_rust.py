"""The Rust port (``adapters/rust``): its own unit tests, the reference's answers exactly, and
the committed suite through ``snapkv-conformance run``.

The crate is built once per session (release). Its adapter gets the same request streams as the
reference adapter and must answer identically: ids, ok/refusal, error kinds, victims, and scores
bit for bit (:mod:`port_differential`). Without cargo the tests skip, except under ``CI``, where
they fail: a CI run must not pass without testing the port.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from conformance.adapter.server import Session
from tests.support.paths import ROOT
from tests.support.port_differential import (
    INT31,
    ScenarioBuilder,
    check_scenarios,
    compare,
    params_text,
    port_output,
    reference_output,
    run_committed_suite,
)
from tests.support.toolchains import require_tools

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

MANIFEST = ROOT / "adapters" / "rust" / "Cargo.toml"
ADAPTER = ROOT / "adapters" / "rust" / "target" / "release" / "snapkv-adapter"
CARGO_TIMEOUT = 600  # seconds; a cold release build takes well under a minute

#: Random scenarios per run (override with SNAPKV_DIFF_SCENARIOS for a longer soak).
SCENARIOS = int(os.environ.get("SNAPKV_DIFF_SCENARIOS", "200"))


def cargo() -> str:
    """The cargo executable; skip without it, or fail when ``CI`` is set."""
    return require_tools("cargo")["cargo"]


def run_cargo(*args: str) -> subprocess.CompletedProcess[str]:
    command = [cargo(), *args, "--locked", "--manifest-path", str(MANIFEST)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=CARGO_TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def rust_adapter() -> list[str]:
    """The built adapter's argv (``cargo build --release`` once per session)."""
    run_cargo("build", "--release")
    assert ADAPTER.is_file(), f"cargo build did not produce {ADAPTER}"
    return [str(ADAPTER)]


def test_cargo_unit_tests_pass() -> None:
    # The debug profile: it compiles in a few seconds and checks integer overflow.
    done = run_cargo("test")
    results = [line for line in done.stdout.splitlines() if line.startswith("test result:")]
    assert results and all(line.startswith("test result: ok.") for line in results), done.stdout
    # The crate's own tests ran: not just empty harnesses.
    assert sum(int(line.split()[3]) for line in results) >= 40, results


def test_hello_names_the_port_and_announces_scores(rust_adapter: list[str]) -> None:
    stream = b'{"id":1,"op":"hello","protocol":1}\n{"id":2,"op":"bye"}\n{"id":3,"op":"bye"}\n'
    answers = [json.loads(line) for line in port_output(rust_adapter, stream).splitlines()]
    assert answers == [
        {
            "id": 1,
            "ok": True,
            "protocol": 1,
            "implementation": {"name": "snapkv-rust", "language": "rust", "version": "0.1.0"},
            "capabilities": ["scores"],
        },
        {"id": 2, "ok": True},
    ]


def test_random_scenarios_match_the_reference(rust_adapter: list[str]) -> None:
    totals = check_scenarios(rust_adapter, range(SCENARIOS))
    # The scenarios did exercise refusals and evictions, not only successes.
    assert totals["refusals"] > SCENARIOS and totals["victims"] > SCENARIOS, totals


def long_run(seed: int) -> bytes:
    """One long pipelined session: larger budgets, wide kernels, many evictions and scores.

    (Windows of ``2^31 - 1`` are left to the short scenarios: the reference sums a wide ring
    column by column in Python, which would make a long run slow.)
    """
    rng = np.random.default_rng(seed)
    builder = ScenarioBuilder(rng, [], Session())
    budget = int(rng.choice([64, 130, 200]))
    params = {
        "budget": str(budget),
        "recentWindow": str(rng.choice([0, 16, budget - 1])),
        "obsWindow": str(rng.choice([1, 16, 40, 100])),
        "poolKernel": str(rng.choice([1, 7, 19, 33, INT31])),
    }
    builder.new(f'"params":{params_text(params)},"seed":{seed}')
    every = int(rng.choice([1, 3, 17]))
    pos = -1
    for n in range(1, 500):
        pos += 1 if rng.random() < 0.8 else int(rng.integers(2, 50))
        attn = "null" if rng.random() < 0.1 else builder.attention()
        builder.send(f'{{"id":{builder.take_id()},"op":"step","pos":{pos},"attn":{attn}}}')
        if n % every == 0:
            builder.simple("evict")
        if n % 89 == 0:
            builder.simple("scores")
    builder.simple("scores")
    builder.simple("bye")
    return b"".join(line + b"\n" for line in builder.lines)


@pytest.mark.parametrize("seed", range(2))
def test_long_pipelined_runs_match_the_reference(rust_adapter: list[str], seed: int) -> None:
    stream = long_run(seed)
    compare(stream, reference_output(stream), port_output(rust_adapter, stream), f"run {seed}")


def test_committed_suite_passes_through_the_runner(rust_adapter: list[str]) -> None:
    output = run_committed_suite(rust_adapter[0])
    assert "snapkv-rust" in output, output[-4000:]

"""The differential fuzzer finds, shrinks and saves the planted bugs; its scenarios are valid.

The planted bugs are catalogued mutants (:mod:`conformance.mutants`), each one classic porting
mistake, served by ``snapkv-conformance adapter --mutant NAME``.
Every test here uses the default example budget, so it also checks the promise that the default
finds these mistakes; the seeds are fixed, so the runs are deterministic.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.judge import checker
from conformance.mutants import lookup
from conformance.policy.reference import SnapKV
from conformance.runner.run import run_suite
from conformance.suite import validation
from conformance.suite.vectors import load_vector
from conformance.tools import fuzz
from conformance.tools.scenarios import replay, scenarios
from conformance.transport.session import AdapterProcess, InProcessAdapter
from tests.heldout_ports import ArgsortSelection
from tests.support.runner_support import REFERENCE_ARGV, mutant_argv

PLANTED = ("stale-history-on-reuse", "null-advances-ring", "ties-to-higher-position")


@pytest.mark.parametrize("name", PLANTED)
def test_default_budget_finds_shrinks_and_saves_the_planted_bug(name, tmp_path):
    with AdapterProcess(mutant_argv(name), timeout=10) as adapter:
        result = fuzz.fuzz(adapter, seed=0, max_shrinks=100)
        port = adapter.handshake.describe()
    finding = result.finding
    assert finding is not None, f"{name}: no difference in {result.examples} examples"
    # The expectations are a fresh reference's answers to the calls, nothing else.
    assert replay(finding.scenario.calls) == finding.scenario
    assert finding.difference.expected.startswith("victims")
    vector = fuzz.difference_vector(finding, port, seed=0)
    path = fuzz.save_vector(vector, tmp_path)
    assert path == tmp_path / f"{vector.id}.json"
    assert vector.id.startswith("fuzz/") and vector.tags == ("fuzz",)
    assert f"calls[{finding.difference.call_index}]" in vector.description
    # The vector ends at the difference (shrinking quality is tested in-process below).
    assert len(vector.calls) == finding.difference.call_index + 1
    _, problems = validation.check_file(path)
    assert problems == []
    on_bug = run_suite([load_vector(path)], mutant_argv(name), timeout=10)
    assert [r.verdict for r in on_bug.results] == [checker.WRONG_VICTIMS]
    on_reference = run_suite([load_vector(path)], REFERENCE_ARGV, timeout=10)
    assert on_reference.results[0].passed


#: Real-world mistakes the default budget must find on every seed tried: catalogued summation
#: mutants and a held-out numpy port ranking with the default (unstable) argsort.
REAL_WORLD = (
    "pairwise-summation",
    "kahan-summation",
    "chronological-order",
    "float32-accumulation",
    "argsort",
)


@pytest.mark.parametrize("seed", (1, 2, 3))
@pytest.mark.parametrize("name", REAL_WORLD)
def test_default_budget_finds_real_world_summations_and_sorts(name, seed):
    result = fuzz.fuzz(mistake(name), seed=seed)
    finding = result.finding
    assert finding is not None, f"{name}: no difference in {result.examples} examples"
    vector = fuzz.difference_vector(finding, "a port", seed)
    assert len(vector.calls) <= 160  # shrunk: the scenarios that find these run to hundreds
    on_mistake = run_suite([vector], adapter_factory=lambda: mistake(name, start=False))
    assert [r.verdict for r in on_mistake.results] == [checker.WRONG_VICTIMS]
    on_reference = run_suite([vector], adapter_factory=InProcessAdapter)
    assert on_reference.results[0].passed


def mistake(name: str, start: bool = True) -> InProcessAdapter:
    if name == "argsort":
        adapter = InProcessAdapter(ArgsortSelection)
    else:
        found = lookup(name)
        adapter = InProcessAdapter(found.factory, found.implementation())
    if start:
        adapter.start()
    return adapter


def test_shrinks_a_tie_bug_to_the_smallest_scenario():
    finding = fuzz.fuzz(planted("ties-to-higher-position"), seed=3).finding
    assert finding is not None
    calls = finding.scenario.calls
    # new, a step with nothing kept, a step with one zero weight, evict: a tie of two zeros.
    assert [call["op"] for call in calls] == ["new", "step", "step", "evict"]
    assert calls[0]["params"]["budget"] == 1
    assert (finding.difference.expected, finding.difference.actual) == (
        "victims [0]",
        "victims [1]",
    )


def test_the_default_shrink_budget_gets_stale_history_down_to_a_few_calls():
    finding = fuzz.fuzz(planted("stale-history-on-reuse"), seed=3).finding
    assert finding is not None
    # The smallest has 7: new, two steps, evict (a ring freed), a step (admitted with the
    # victim's ring), a step and the evict that tells. Found in a scenario that opens with a
    # duel of summation orders, it keeps the duel's run of at least 8 steps.
    assert 7 <= len(finding.scenario.calls) <= 24


def test_the_same_seed_gives_the_same_vector():
    first = fuzz.fuzz(planted("null-advances-ring"), seed=11, max_shrinks=60).finding
    second = fuzz.fuzz(planted("null-advances-ring"), seed=11, max_shrinks=60).finding
    assert first is not None and second is not None
    assert first.scenario == second.scenario
    assert first.examples_to_find == second.examples_to_find


def test_no_difference_against_the_reference():
    adapter = InProcessAdapter()
    adapter.start()
    result = fuzz.fuzz(adapter, seed=5, max_examples=60)
    assert result.finding is None
    assert result.examples == 60  # exactly the budget: hypothesis is stopped there


def test_a_crash_is_a_difference_and_the_adapter_is_restarted(tmp_path):
    class CrashOnEvict(SnapKV):
        def evict(self):
            if len(self.kept) > self.params.budget:
                raise RuntimeError("boom")
            return super().evict()

    adapter = InProcessAdapter(CrashOnEvict)
    adapter.start()
    finding = fuzz.fuzz(adapter, seed=2, max_shrinks=80).finding
    assert finding is not None
    assert finding.difference.actual.startswith("crash")
    assert finding.scenario.calls[finding.difference.call_index]["op"] == "evict"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_every_scenario_makes_a_valid_vector(scenario):
    last = len(scenario.calls) - 1
    finding = fuzz.Finding(scenario, fuzz.Difference(last, "x", "y"), 1, 0)
    vector = fuzz.difference_vector(finding, "a port", seed=1)
    text = json.dumps(vector.to_json())
    _, problems = validation.check_document(text, f"somewhere/{vector.id}.json")
    assert problems == []
    assert [call.request for call in vector.calls] == list(scenario.calls)


def test_cli_saves_a_vector_that_fails_through_run(tmp_path):
    command = shlex.join(mutant_argv("ties-to-higher-position"))
    save = tmp_path / "found"
    fuzzed = cli("fuzz", "--adapter", command, "--seed", "3", "--save", str(save))
    assert fuzzed.returncode == 1, fuzzed.stderr
    (path,) = save.rglob("*.json")
    assert f"saved: {path}" in fuzzed.stdout
    replay = next(line for line in fuzzed.stdout.splitlines() if line.startswith("replay: "))
    argv = shlex.split(replay.removeprefix("replay: "))
    assert argv[:2] == ["snapkv-conformance", "run"]
    replayed = cli(*argv[1:])
    assert replayed.returncode == 1
    assert "wrong-victims" in replayed.stdout
    assert cli("validate", str(path)).returncode == 0


def test_cli_exit_codes(tmp_path):
    reference = shlex.join(REFERENCE_ARGV)
    clean = cli("fuzz", "--adapter", reference, "--max-examples", "15", "--seed", "1")
    assert clean.returncode == 0, clean.stderr
    # The count printed is the count announced: at most --max-examples.
    assert "up to 15 examples" in clean.stdout
    assert re.search(r"^no difference in 15 examples \(seed 1\)$", clean.stdout, re.M)
    missing = cli("fuzz", "--adapter", str(tmp_path / "no-such-adapter"))
    assert missing.returncode == 2
    assert "cannot start" in missing.stderr
    assert cli("fuzz", "--adapter", reference, "--max-examples", "0").returncode == 2
    assert cli("fuzz").returncode == 2


def test_a_save_blocked_by_a_file_names_that_file(tmp_path):
    command = shlex.join(mutant_argv("ties-to-higher-position"))
    (tmp_path / "fuzz").write_text("in the way")
    fuzzed = cli("fuzz", "--adapter", command, "--seed", "3", "--save", str(tmp_path))
    assert fuzzed.returncode == 2
    assert f"{tmp_path / 'fuzz'} is a file, where a directory is needed" in fuzzed.stderr
    assert '"format": "snapkv-vector/1"' in fuzzed.stdout  # the finding is printed, not lost


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )


def planted(name: str) -> InProcessAdapter:
    """The catalogued mutant ``name``, served in-process (faster than a process)."""
    mutant = lookup(name)
    adapter = InProcessAdapter(mutant.factory, mutant.implementation())
    adapter.start()
    return adapter

"""Triage names the planted mistake: the suite is run in process against catalogued mistakes
(alone and combined) and against ports the catalogue does not contain, and the triage's first
item must be the mistake that was planted."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import jsonschema
import pytest

from conformance import mutants
from conformance.explain import kills, triage
from conformance.mutants.pooling import ForwardOnlyPooling
from conformance.mutants.summation import Float32Accumulation, KahanSummation, ReversedSlotOrder
from conformance.policy.reference import SnapKV
from conformance.report import terminal
from conformance.runner.run import RunResult, run_suite
from conformance.spec import resources
from conformance.suite.vectors import Vector, load_suite
from conformance.transport.session import InProcessAdapter
from tests.heldout.ports import PORTS as HELDOUT

pytest_plugins = ["pytester"]


@cache
def suite() -> tuple[Vector, ...]:
    return tuple(load_suite([str(resources.suite_dir())]))


def run_policy(factory: Callable[..., Any], name: str = "port") -> RunResult:
    implementation = {"name": name, "language": "python", "version": "0"}
    return run_suite(
        list(suite()), adapter_factory=lambda: InProcessAdapter(factory, implementation)
    )


def triage_of(run: RunResult, **options: Any) -> triage.Triage:
    return triage.triage(list(suite()), run.results, **options)


@pytest.mark.parametrize(
    "name",
    [
        "float32-accumulation",
        "forward-only-pooling",
        "ties-to-higher-position",
        "negative-weights-accepted",
        "null-advances-ring",
    ],
)
def test_a_single_catalogued_mistake_is_named_first(name: str) -> None:
    mutant = mutants.lookup(name)
    run = run_policy(mutant.factory)
    assert not run.ok
    result = triage_of(run)
    top = result.likely[0]
    assert top.names == (name,)
    assert top.exact, top.evidence()
    assert result.headline().startswith(f"likely cause: {name}: ")
    failing = sum(not r.passed for r in run.results)
    assert top.explains == top.of == failing
    assert top.agrees == top.passing == len(run.results) - failing


def test_two_independent_mistakes_are_named_together() -> None:
    class Both(Float32Accumulation, ForwardOnlyPooling):
        """A port with two mistakes in different steps."""

    run = run_policy(Both)
    result = triage_of(run)
    top = result.likely[0]
    assert set(top.names) == {"float32-accumulation", "forward-only-pooling"}
    assert top.exact, top.evidence()
    assert result.combinations > 0
    # neither part alone explains every failure, or the combination would not be needed
    singles = {item.names[0]: item for item in result.likely if len(item.names) == 1}
    assert singles["forward-only-pooling"].explains < top.explains


def test_compose_refuses_mistakes_that_override_the_same_step() -> None:
    assert triage.compose([Float32Accumulation, KahanSummation], SnapKV) is None
    assert triage.compose([ReversedSlotOrder, Float32Accumulation], SnapKV) is None
    both = triage.compose([Float32Accumulation, ForwardOnlyPooling], SnapKV)
    assert both is not None
    assert both.window_sums is Float32Accumulation.window_sums
    assert both.pool is ForwardOnlyPooling.pool


def test_ranking_is_deterministic() -> None:
    run = run_policy(mutants.lookup("kahan-summation").factory)
    first = triage_of(run).to_json()
    second = triage_of(run).to_json()
    assert first == second
    assert first["likely"][0]["mistake"] == "kahan-summation"


def test_a_mistake_left_out_of_the_catalogue_is_said_not_found_or_partial() -> None:
    """With the mistake left out, the triage must not claim a full explanation."""
    run = run_policy(mutants.lookup("ties-to-higher-position").factory)
    mistakes = triage.catalogue_mistakes(exclude=["ties-to-higher-position"])
    result = triage_of(run, mistakes=mistakes, combine=False)
    assert not result.headline().startswith("likely cause:")
    groups = {group.kind: group for group in result.groups}
    # every failure is a tie broken upward: the grouping says so without the catalogue
    assert set(groups) == {"ties"}
    assert len(groups["ties"].vectors) == result.failing


def test_crashes_are_grouped_as_process_failures() -> None:
    class Crashes(SnapKV):
        """Dies on the first eviction that has anything to evict."""

        def select(self, pooled: Any, count: int) -> Any:
            raise IndexError("index 3 is out of bounds for axis 0 with size 3")

    run = run_policy(Crashes)
    result = triage_of(run, combine=False)
    groups = {group.kind: group for group in result.groups}
    assert "process" in groups
    assert sum(len(g.vectors) for g in result.groups) == result.failing


def test_report_carries_the_triage_and_matches_the_schema() -> None:
    run = run_policy(mutants.lookup("float32-accumulation").factory)
    run.triage = triage_of(run)
    data = terminal.json_report(run)
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["triage"]["likely"][0]["mistake"] == "float32-accumulation"
    assert data["triage"]["likely"][0]["explains"] == data["summary"]["failed"]
    text = terminal.format_summary(run)
    lines = text.splitlines()
    fails = [i for i, line in enumerate(lines) if line.startswith("FAIL ")]
    at = next(i for i, line in enumerate(lines) if line.startswith("triage: likely cause:"))
    assert fails and at > max(fails)


def test_a_passing_run_has_no_triage_in_its_report() -> None:
    run = run_policy(SnapKV)
    assert run.ok
    data = terminal.json_report(run)
    assert data["triage"] is None


def test_junit_carries_the_triage() -> None:
    import xml.etree.ElementTree as ET

    run = run_policy(mutants.lookup("float32-accumulation").factory)
    run.triage = triage_of(run)
    root = ET.fromstring(terminal.junit_xml(run))
    suite_element = root.find("testsuite")
    assert suite_element is not None
    properties = {p.get("name"): p.get("value") for p in suite_element.iter("property")}
    assert properties["triage"].startswith("likely cause: float32-accumulation: ")
    system_out = suite_element.find("system-out")
    assert system_out is not None and system_out.text is not None
    assert system_out.text.startswith("triage: likely cause: float32-accumulation: ")


def test_matrix_pages_carry_each_failing_ports_triage() -> None:
    from conformance.tools.matrix import Column, Matrix, Port, to_html, to_markdown

    run = run_policy(mutants.lookup("float32-accumulation").factory)
    column = Column(Port("f32", ("f32-adapter",)), run.handshake)
    column.results = {result.vector_id: result for result in run.results}
    column.triage = triage_of(run)
    matrix = Matrix(list(suite()), [column])
    assert "**f32**: likely cause: float32-accumulation: " in to_markdown(matrix)
    assert "<b>f32</b>: likely cause: float32-accumulation: " in to_html(matrix)


@pytest.mark.parametrize("workers", [None, "2"], ids=["one-process", "xdist"])
def test_pytest_terminal_summary_carries_the_triage(pytester: Any, workers: str | None) -> None:
    import shlex

    from tests.support.runner_support import mutant_argv
    from tests.support.small_suite import write_small_suite

    vectors = write_small_suite(pytester.path / "vectors")
    adapter = shlex.join(mutant_argv("ties-to-higher-position"))
    options = ["-p", "no:cacheprovider", "--snapkv-adapter", adapter]
    options += ["--snapkv-vectors", str(vectors)]
    if workers is None:
        result = pytester.runpytest(*options)
    else:  # the workers run the vectors; the controller triages them all
        result = pytester.runpytest_subprocess(*options, "-n", workers, timeout=120)
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    assert "snapkv triage" in output
    section = output[output.index("snapkv triage") :]
    assert "triage: likely cause: " in section
    assert "ties-to-higher-position" in section


def test_fuzz_accept_finds_the_next_different_mistake() -> None:
    from conformance.mutants.selection import RecentMadeCandidates, TiesToHigherPosition
    from conformance.tools import fuzz
    from conformance.tools.scenarios import replay

    class Both(TiesToHigherPosition, RecentMadeCandidates):
        """Ties go to the higher position, and the recent window protects nothing."""

    adapter = InProcessAdapter(Both, {"name": "both", "language": "python", "version": "0"})
    adapter.start()
    accepted = fuzz.accepting(["ties-to-higher-position"])
    result = fuzz.fuzz(adapter, seed=1, reference=accepted)
    assert result.finding is not None
    calls = result.finding.scenario.calls
    port = replay(calls, Both).expected
    # the difference is not the accepted mistake: with it accepted the answers still differ...
    assert replay(calls, accepted).expected != port
    # ...and it is the other one: with both accepted the port's answers are reproduced
    both = fuzz.accepting(["ties-to-higher-position", "recent-made-candidates"])
    assert replay(calls, both).expected == port


def test_fuzz_accept_refuses_unknown_and_clashing_mistakes() -> None:
    from conformance.tools import fuzz

    with pytest.raises(ValueError, match="unknown mutant"):
        fuzz.accepting(["no-such-mistake"])
    with pytest.raises(ValueError, match="same step"):
        fuzz.accepting(["float32-accumulation", "kahan-summation"])


# -- every FAIL line tells the truth -----------------------------------------------------------


def test_catches_only_when_the_failure_is_what_the_vector_pins() -> None:
    run = run_policy(mutants.lookup("ties-to-higher-position").factory)
    by_id = {vector.id: vector for vector in suite()}
    pinned = elsewhere = 0
    for result in run.results:
        if result.passed:
            continue
        vector = by_id[result.vector_id]
        refusals = [i for i, call in enumerate(vector.calls) if call.expected_error]
        assert bool(result.catches) != bool(result.elsewhere), result.vector_id
        if refusals:
            # the refusals are right (ties are not about refusing): the failure is a later evict
            assert result.op == "evict" and result.call_index not in refusals
            assert not result.catches
            assert result.elsewhere.startswith("this vector pins: ")
            assert f"at call {result.call_index} (evict)" in result.elsewhere
            assert "it evicted other positions" in result.elsewhere
            elsewhere += 1
        elif result.vector_id.startswith("ties/"):
            assert "tie" in result.catches.lower()
            pinned += 1
    assert pinned and elsewhere


def test_a_crash_shows_no_catches_text_about_something_else() -> None:
    class Crashes(SnapKV):
        """Dies on the first eviction that has anything to evict."""

        def select(self, pooled: Any, count: int) -> Any:
            raise IndexError("index 3 is out of bounds for axis 0 with size 3")

    run = run_policy(Crashes)
    crashes = [r for r in run.results if r.verdict == "crash"]
    assert crashes
    for result in crashes:
        assert not result.catches, result.vector_id
        assert "the adapter crashed" in result.elsewhere
        assert f"at call {result.call_index} (evict)" in result.elsewhere


def test_a_tie_broken_the_wrong_way_names_the_tied_positions() -> None:
    from conformance.explain import diagnosis

    run = run_policy(mutants.lookup("ties-to-higher-position").factory)
    ties = next(r for r in run.results if r.vector_id == "ties/lower-position-first")
    assert ties.divergence == "ties"
    assert ties.diagnosis is not None
    assert "Its scores equal the reference's at every kept position." in ties.diagnosis
    assert "are tied at pooled score" in ties.diagnosis
    assert "the port's tie went to the higher position" in ties.diagnosis
    assert "unstable sort" in ties.diagnosis and "argpartition" in ties.diagnosis
    vector = next(v for v in suite() if v.id == ties.vector_id)
    assert ties.call_index is not None
    tie = diagnosis.tied_selection(vector, ties.call_index, ties.actual)
    assert tie is not None and tie.went_higher
    assert set(tie.actual) <= set(tie.positions) and set(tie.expected) <= set(tie.positions)
    # without the scores capability the tie is still named, from the reference alone
    assert "are tied at pooled score" in diagnosis.without_scores(vector, ties)


def test_a_malformed_evict_answer_gets_no_scores_diagnosis() -> None:
    from conformance.explain import diagnosis
    from conformance.judge import checker

    vector = next(v for v in suite() if v.id == "ties/lower-position-first")
    index = next(i for i, call in enumerate(vector.calls) if call.op == "evict")
    answers: list[dict[str, Any]] = [{"ok": True} for _ in vector.calls]
    answers[index] = {"ok": True, "victims": None}
    result = checker.judge(vector, answers[: index + 1] + answers[index + 1 :])
    assert result.verdict == checker.BROKEN_INVARIANT and result.rule == checker.NOT_INTEGERS
    assert not diagnosis.wants_diagnosis(result)
    assert "null" in result.message and "None" not in result.message


def test_designed_vectors_are_listed_before_random_and_workload_ones() -> None:
    run = run_policy(mutants.lookup("float32-accumulation").factory)
    lines = [line for line in terminal.format_summary(run).splitlines() if line.startswith("FAIL ")]
    generated = [triage.is_generated(line.split()[1].rstrip(":")) for line in lines]
    assert generated == sorted(generated)
    assert not generated[0] and generated[-1]


# -- held-out ports: written from SPEC.md with a planted bug, unknown to the catalogue --------


def heldout_run(name: str) -> RunResult:
    import sys
    from pathlib import Path

    script = Path(__file__).parent / "heldout" / "ports.py"
    return run_suite(list(suite()), [sys.executable, str(script), name], jobs=2)


def test_the_spec_port_passes_so_the_planted_bugs_are_the_only_differences() -> None:
    assert heldout_run("spec").ok


@pytest.mark.parametrize(
    "port", [name for name, (_, expected) in HELDOUT.items() if expected], ids=str
)
def test_a_held_out_port_is_triaged_to_its_planted_bug(port: str) -> None:
    expected = HELDOUT[port][1]
    run = heldout_run(port)
    assert not run.ok
    result = triage_of(run)
    top = result.likely[0]
    assert top.mistake in expected, result.headline()
    assert top.explains == top.of and top.agrees == top.passing, top.evidence()
    assert result.headline().startswith(f"likely cause: {top.mistake}: ")


def test_the_openvino_transcription_is_named_with_its_three_rules() -> None:
    run = heldout_run("openvino-sum")
    result = triage_of(run)
    headline = result.headline()
    assert headline.startswith("likely cause: openvino-sum: ")
    # the three differences, in plain words: cumulative scores, pooling each step's row,
    # and a forward-only window
    assert "never forgotten" in headline
    assert "each step's row" in headline
    assert "forward only" in headline
    failing = sum(not r.passed for r in run.results)
    passing = len(run.results) - failing
    assert (
        f"reproduces all {failing} failing vectors and agrees on the {passing} passing ones"
        in headline
    )


# -- the shipped kill matrix -------------------------------------------------------------------


def test_the_shipped_kill_matrix_is_the_catalogue_replayed_on_the_committed_suite() -> None:
    from conformance.explain import kills

    computed = kills.dumps(kills.compute(suite()))
    assert kills.PATH.read_text(encoding="utf-8") == computed, (
        "conformance/data/kills.json is stale: run python -m conformance.explain.kills"
    )


@pytest.mark.parametrize("name", ["forward-only-pooling", "refused-step-still-admits"])
def test_the_kill_matrix_changes_no_ranking(name: str, monkeypatch: pytest.MonkeyPatch) -> None:

    run = run_policy(mutants.lookup(name).policy, name)
    with_matrix = triage_of(run)
    monkeypatch.setattr(kills, "load", lambda vectors: {})
    replayed = triage_of(run)
    assert [item.to_json() for item in with_matrix.likely] == [
        item.to_json() for item in replayed.likely
    ]
    assert with_matrix.likely[0].mistake == name


def test_an_edited_vector_is_replayed_not_looked_up() -> None:
    from dataclasses import replace

    from conformance.explain import kills

    vector = next(v for v in suite() if v.id == "ties/lower-position-first")
    assert kills.load([vector]) != {}
    edited = replace(vector, description=vector.description + " (edited)")
    assert kills.load([edited]) == {}

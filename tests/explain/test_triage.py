"""Triage names the port's real differences: the suite is run against catalogued mistakes
(alone and combined), against held-out ports written from SPEC.md with a planted bug, and
against realistic transcriptions (numpy ports, the official SnapKV code, kvpress, the C
template built with fast-math), and the first triage line must name every difference, claim an
exact cause only when it reproduces the whole run, and list nothing that explains no failure."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest

from conformance import mutants
from conformance.explain import known_kills, triage
from conformance.explain.play import compose, play
from conformance.explain.triage import search
from conformance.judge import verdicts
from conformance.judge.outcomes import expected_outcomes
from conformance.policy.reference import SnapKV
from conformance.report import terminal
from conformance.runner.client import Client
from conformance.runner.run import RunResult, run_suite
from conformance.spec import resources
from conformance.suite.discovery import is_generated
from conformance.suite.stream import load_checks, plan_suite
from conformance.suite.vectors import Vector, load_suite
from conformance.transport.in_process import InProcessAdapter
from tests.heldout.ports import PORTS as HELDOUT
from tests.heldout.real_ports import PORTS as REAL_PORTS
from tests.support.numpy_dispatch import portable_numpy_argv
from tests.support.paths import TESTS

pytest_plugins = ["pytester"]


@cache
def suite() -> tuple[Vector, ...]:
    return tuple(load_suite([str(resources.suite_dir())]))


def run_policy(factory: Callable[..., Any], name: str = "port", vectors: Any = None) -> RunResult:
    implementation = {"name": name, "language": "python", "version": "0"}
    return run_suite(
        list(vectors if vectors is not None else suite()),
        adapter_factory=lambda: InProcessAdapter(factory, implementation),
    )


def triage_of(run: RunResult, **options: Any) -> triage.Triage:
    return triage.triage(list(suite()), run.results, **options)


def mutant_policy(*names: str) -> Any:
    policy = compose([mutants.lookup(name) for name in names])
    assert policy is not None
    return policy


def first_line(result: triage.Triage) -> str:
    return result.lines()[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "float32-accumulation",
        "forward-only-pooling",
        "ties-to-higher-position",
        "negative-weights-accepted",
        "null-advances-ring",
        "recent-by-calls",
    ],
)
def test_a_single_catalogued_mistake_is_named_first(name: str) -> None:
    run = run_policy(mutants.lookup(name).policy)
    assert not run.ok
    result = triage_of(run)
    top = result.likely[0]
    assert top.names == (name,)
    assert top.exact, top.evidence()
    assert result.headline().startswith(f"likely cause: {name} (")
    failing = sum(not r.passed for r in run.results)
    assert top.explains == top.of == failing
    assert top.agrees == top.passing == len(run.results) - failing
    assert not result.alike


def test_two_mistakes_on_different_steps_are_named_together() -> None:
    run = run_policy(mutant_policy("float32-accumulation", "forward-only-pooling"))
    result = triage_of(run)
    top = result.likely[0]
    assert set(top.names) == {"float32-accumulation", "forward-only-pooling"}
    assert top.exact, top.evidence()
    assert result.combinations > 0
    assert "float32-accumulation" in first_line(result)
    assert "forward-only-pooling" in first_line(result)
    # neither part alone explains every failure, or the combination would not be needed
    singles = {item.names[0]: item for item in result.likely if len(item.names) == 1}
    assert singles["forward-only-pooling"].explains < top.explains
    # each part is written out with the rule it breaks
    lines = result.lines()
    assert any(
        line.startswith("  - float32-accumulation: ") and "SPEC.md §2.4" in line for line in lines
    )


@cache
def simd_ftz_ties() -> tuple[RunResult, triage.Triage]:
    """The C template's fast-math habits with a tie broken upwards: three choices that each
    change sums or ties, made together (SPEC.md §2.3, §2.4)."""
    run = run_policy(mutant_policy("simd-lanes-8", "flush-subnormals", "ties-to-higher-position"))
    return run, triage_of(run)


def replays_exactly(run: RunResult, names: tuple[str, ...]) -> bool:
    """Whether the choices made together answer every vector of ``run`` as the port did (its
    victims and refusal kinds call for call, or pass where the port passed), replayed here on
    the whole suite, each vector in full."""
    policy = mutant_policy(*names)
    by_id = {vector.id: vector for vector in suite()}
    for result in run.results:
        vector = by_id[result.vector_id]
        answers = play(policy, vector).outcomes
        if result.passed:
            if answers != expected_outcomes(vector):
                return False
        elif answers != tuple(result.answers):
            return False
    return True


@pytest.mark.slow
def test_three_choices_that_answer_alike_are_all_named_and_only_replayed_ones_claimed() -> None:
    """SPEC.md §2.4: SIMD partial sums, flushed subnormals and ties to the higher position
    together. Several summation orders answer the whole suite alike with the other two; the
    first line names the planted one among them, says which were replayed in full and which
    were not, and every one it gives as found alike does reproduce the run."""
    run, result = simd_ftz_ties()
    line = first_line(result)
    top = result.likely[0]
    assert top.exact, line
    assert {"flush-subnormals", "ties-to-higher-position"} <= set(top.choices)
    named = [top, *result.alike, *(item.likely for item in result.unconfirmed)]
    assert any(
        set(item.choices) == {"simd-lanes-8", "flush-subnormals", "ties-to-higher-position"}
        for item in named
    ), line
    for item in named:
        assert item.label() in line
    for item in [top, *result.alike]:
        assert replays_exactly(run, item.choices), item.label()
    if result.unconfirmed:
        assert f"{len(result.unconfirmed)} more combination" in line
        assert "not ruled out, not replayed in full" in line
        # those not replayed in full may differ on the run's own vectors: only the vectors
        # outside the run were looked at, and the line says no more than that
        if not result.tells_apart:
            assert line.endswith("; no committed vector outside the run tells them apart")
    for item in result.unconfirmed:
        assert item.checked + item.unchecked > 0
        assert item.by in item.likely.choices and item.replaces not in item.likely.choices


def test_full_replays_of_alike_candidates_are_a_fixed_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """How many alternatives are replayed in full is a count, so the lines are the same on a
    slow machine as on a fast one: with none allowed (the default), every alternative the
    screen lets through and the search did not itself replay in full is named as not ruled
    out; with one, the first of those is replayed on every vector, found alike (and it does
    reproduce the run), and the rest stay not ruled out, at the cost of more replays."""
    run, default = simd_ftz_ties()
    assert search.CONFIRMED == 0
    assert default.unconfirmed
    monkeypatch.setattr(search, "CONFIRMED", 1)
    one = triage_of(run)
    assert one.likely[0].mistake == default.likely[0].mistake
    assert one.replayed > default.replayed
    assert len(one.alike) == len(default.alike) + 1
    assert len(one.unconfirmed) == len(default.unconfirmed) - 1
    (added,) = {item.mistake for item in one.alike} - {item.mistake for item in default.alike}
    assert added == default.unconfirmed[0].likely.mistake
    assert replays_exactly(run, next(i for i in one.alike if i.mistake == added).choices)
    assert f"one of {len(one.alike) + 1} found to answer alike" in first_line(one)
    monkeypatch.setattr(search, "CONFIRMED", 0)
    assert default.to_json() == triage_of(run).to_json()  # deterministic
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(default.to_json(), {"$defs": schema["$defs"], "$ref": "#/$defs/triage"})


def reproduced(run: RunResult, names: tuple[str, ...]) -> tuple[int, int]:
    """How many failing vectors of ``run`` the choices made together answer as the port did,
    and how many passing ones they pass, replayed here on every vector in full."""
    policy = mutant_policy(*names)
    by_id = {vector.id: vector for vector in suite()}
    explains = agrees = 0
    for result in run.results:
        vector = by_id[result.vector_id]
        answers = play(policy, vector).outcomes
        if result.passed:
            agrees += answers == expected_outcomes(vector)
        else:
            explains += answers == tuple(result.answers)
    return explains, agrees


@cache
def ties_left_out() -> RunResult:
    return run_policy(mutants.lookup("ties-to-higher-position").policy)


@pytest.mark.slow
def test_the_search_for_the_closest_stops_at_a_fixed_budget_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search for a partial explanation (SPEC.md §2.5: a tie broken upwards, left out of
    the catalogue) replays at most a count of evict calls, so its lines are the same on any
    machine: twice the same, the first line says "closest found" and that the search stopped
    at its budget, every figure shown is exact, and the JSON report carries the cut. With no
    budget the search replays more and finds nothing closer than it could have."""
    run = ties_left_out()
    without = triage.catalogue(exclude=["ties-to-higher-position"])
    cut = triage_of(run, mistakes=without)
    assert cut.to_json() == triage_of(run, mistakes=without).to_json()  # deterministic
    assert cut.cut_short > 0 and cut.confidence == "closest"
    line = first_line(cut)
    assert line.startswith("triage: closest found: "), line
    assert re.search(r"reproduces \d+ of \d+ failing vectors", line), line
    assert f"stopped at its budget of {search.SEARCH_BUDGET:,} replayed evict calls" in line
    assert f"{cut.cut_short} more combination" in line
    # every figure listed is a replay's, not an estimate, and each explains a failure
    for item in cut.likely[:3]:
        assert (item.explains, item.agrees) == reproduced(run, item.names), item.mistake
    assert all(entry["explains"] > 0 for entry in cut.to_json()["likely"])
    report = cut.to_json()
    assert report["cut_short"] == {"budget": search.SEARCH_BUDGET, "combinations": cut.cut_short}
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(report, {"$defs": schema["$defs"], "$ref": "#/$defs/triage"})

    monkeypatch.setattr(search, "SEARCH_BUDGET", 10**9)
    whole = triage_of(run, mistakes=without)
    assert whole.cut_short == 0 and whole.to_json()["cut_short"] is None
    assert "budget" not in " ".join(whole.lines())
    assert first_line(whole).startswith("triage: closest: ")
    assert whole.replayed > cut.replayed
    assert whole.likely[0].total >= cut.likely[0].total


@pytest.mark.slow
def test_a_likely_cause_is_confirmed_in_full_whatever_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC.md §2.4, §2.5: past the budget a candidate is replayed until it misses a vector,
    and one that reproduces the whole run never does; with no budget at all the combination
    is still named the likely cause, and it does reproduce every vector."""
    run = run_policy(mutant_policy("float32-accumulation", "forward-only-pooling"))
    monkeypatch.setattr(search, "SEARCH_BUDGET", 0)
    result = triage_of(run)
    top = result.likely[0]
    assert set(top.choices) == {"float32-accumulation", "forward-only-pooling"}
    assert top.exact and first_line(result).startswith("triage: likely cause: ")
    assert "budget" not in first_line(result)
    assert replays_exactly(run, top.choices)


@pytest.mark.numpy_dispatch
@pytest.mark.slow
def test_a_choice_whose_only_effect_one_other_part_hides_is_added_after_the_beam() -> None:
    """SPEC.md §2.1, §2.3, §2.6: a Java port's habits (names matched case-insensitively, a
    null attn read as empty) and `Float.parseFloat` (one rounding straight to float32). The
    last changes only attention/float32-rounding-midpoint's answers once null-as-empty has
    refused its other vectors, so no beam estimate proposes it from their figures; it is named
    all the same (by the completion after the beam, or by the beam from the one vector it
    reproduces on its own)."""
    run = run_policy(mutant_policy("null-as-empty", "case-insensitive-names", "single-rounding"))
    result = triage_of(run)
    top = result.likely[0]
    assert set(top.choices) == {"null-as-empty", "case-insensitive-names", "single-rounding"}
    assert top.exact, top.evidence()
    assert first_line(result).startswith("triage: likely cause: ")
    assert replays_exactly(run, top.choices)
    without = [
        item
        for item in result.likely
        if set(item.choices) == {"null-as-empty", "case-insensitive-names"}
    ]
    assert all(item.explains == top.explains - 1 for item in without)


def test_compose_refuses_choices_on_the_same_step() -> None:
    lookup = mutants.lookup
    assert compose([lookup("kahan-summation"), lookup("reversed-slot-order")]) is None
    assert compose([lookup("kvpress-snapkv"), lookup("pairwise-summation")]) is None
    both = compose([lookup("kahan-summation"), lookup("float32-accumulation")])
    assert both is not None
    assert both.sum_ring is lookup("kahan-summation").policy.sum_ring
    assert both.ACCUMULATOR is lookup("float32-accumulation").policy.ACCUMULATOR


@pytest.mark.slow
def test_ranking_is_deterministic() -> None:
    run = run_policy(mutants.lookup("kahan-summation").policy)
    first = triage_of(run).to_json()
    second = triage_of(run).to_json()
    assert first == second
    assert first["likely"][0]["mistake"] == "kahan-summation"


@pytest.mark.slow
def test_a_mistake_left_out_of_the_catalogue_is_never_the_likely_cause() -> None:
    run = run_policy(mutants.lookup("ties-to-higher-position").policy)
    result = triage_of(run, mistakes=triage.catalogue(exclude=["ties-to-higher-position"]))
    headline = result.headline()
    assert not headline.startswith("likely cause")
    assert result.confidence in ("closest", "none")
    if result.confidence == "closest":
        # both fractions, since neither is whole
        top = result.likely[0]
        assert re.search(r"reproduces \d+ of \d+ failing vectors", headline), headline
        assert not top.exact
    # nothing listed explains no failure
    assert all(item["explains"] > 0 for item in result.to_json()["likely"])
    close = (
        result.lines()[result.lines().index("  also close:") + 1 :]
        if "  also close:" in result.lines()
        else []
    )
    for line in close:
        if line.startswith("  failures by"):
            break
        assert "reproduces 0 of" not in line
    groups = {group.kind: group for group in result.groups}
    assert "ties" in groups


def test_alike_candidates_are_named_together_with_a_vector_that_tells_them_apart() -> None:
    one = [vector for vector in suite() if vector.id == "params/budget-boolean"]
    run = run_policy(mutants.lookup("boolean-param-accepted").policy, vectors=one)
    result = triage.triage(one, run.results)
    names = {result.likely[0].mistake, *(item.mistake for item in result.alike)}
    assert {"boolean-param-accepted", "bool-as-integer"} <= names
    headline = result.headline()
    assert headline.startswith(f"likely cause, one of {len(names)} that answer alike: ")
    assert result.tells_apart is not None and result.tells_apart in headline
    apart = next(vector for vector in suite() if vector.id == result.tells_apart)
    answers = {play(mutants.lookup(name).policy, apart).outcomes for name in names}
    assert len(answers) > 1


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
    run = run_policy(mutants.lookup("float32-accumulation").policy)
    run.triage = triage_of(run)
    data = terminal.json_report(run)
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["triage"]["likely"][0]["mistake"] == "float32-accumulation"
    assert data["triage"]["likely"][0]["explains"] == data["summary"]["failed"]
    assert data["triage"]["confidence"] == "likely"
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

    run = run_policy(mutants.lookup("float32-accumulation").policy)
    run.triage = triage_of(run)
    root = ET.fromstring(terminal.junit_xml(run))
    suite_element = root.find("testsuite")
    assert suite_element is not None
    properties = {p.get("name"): p.get("value") for p in suite_element.iter("property")}
    assert properties["triage"].startswith("likely cause: float32-accumulation ")
    system_out = suite_element.find("system-out")
    assert system_out is not None and system_out.text is not None
    assert system_out.text.startswith("triage: likely cause: float32-accumulation ")


def test_matrix_pages_carry_each_failing_ports_triage() -> None:
    from conformance.tools.matrix import Column, Matrix, Port, to_html, to_markdown

    run = run_policy(mutants.lookup("float32-accumulation").policy)
    column = Column(Port("f32", ("f32-adapter",)), run.handshake)
    column.results = {result.vector_id: result for result in run.results}
    column.triage = triage_of(run)
    matrix = Matrix(list(suite()), [column])
    assert "**f32**: likely cause: float32-accumulation " in to_markdown(matrix)
    assert "<b>f32</b>: likely cause: float32-accumulation " in to_html(matrix)


@pytest.mark.slow
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
    assert "triage: likely cause" in section
    assert "ties-to-higher-position" in section


def test_fuzz_accept_finds_the_next_different_mistake() -> None:
    from conformance.tools import fuzz
    from conformance.tools.scenarios import scenario_of

    both = mutant_policy("ties-to-higher-position", "recent-made-candidates")
    adapter = Client(InProcessAdapter(both, {"name": "both", "language": "python", "version": "0"}))
    adapter.start()
    accepted = fuzz.accepting(["ties-to-higher-position"])
    result = fuzz.fuzz(adapter, seed=1, reference=accepted)
    assert result.finding is not None
    calls = result.finding.scenario.calls
    port = scenario_of(calls, both).expected
    # the difference is not the accepted mistake: with it accepted the answers still differ...
    assert scenario_of(calls, accepted).expected != port
    # ...and it is the other one: with both accepted the port's answers are reproduced
    two = fuzz.accepting(["ties-to-higher-position", "recent-made-candidates"])
    assert scenario_of(calls, two).expected == port


def test_fuzz_accept_refuses_unknown_and_clashing_mistakes() -> None:
    from conformance.tools import fuzz

    with pytest.raises(ValueError, match="unknown mutant"):
        fuzz.accepting(["no-such-mistake"])
    with pytest.raises(ValueError, match="same step"):
        fuzz.accepting(["reversed-slot-order", "kahan-summation"])


# -- every FAIL line tells the truth -----------------------------------------------------------


@pytest.mark.slow
def test_catches_only_when_the_failure_is_what_the_vector_pins() -> None:
    run = run_policy(mutants.lookup("ties-to-higher-position").policy)
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
            assert "tie" in result.catches.lower() or "topk" in result.catches.lower()
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


@pytest.mark.slow
def test_a_tie_broken_the_wrong_way_names_the_tied_positions() -> None:
    from conformance.explain import diagnosis

    run = run_policy(mutants.lookup("ties-to-higher-position").policy)
    ties = next(r for r in run.results if r.vector_id == "ties/lower-position-first")
    assert ties.divergence == "ties"
    assert ties.diagnosis is not None
    assert "Its scores equal the reference's at every kept position." in ties.diagnosis
    assert "are tied at pooled score" in ties.diagnosis
    assert "the port's tie went to the higher position" in ties.diagnosis
    # A consistent reversal is named as such, not as an unstable selection's accident.
    assert "ties-to-higher-position" in ties.diagnosis and "no fixed order" not in ties.diagnosis
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
    assert result.verdict == verdicts.BROKEN_INVARIANT and result.rule == verdicts.NOT_INTEGERS
    assert not diagnosis.wants_diagnosis(result)
    assert "null" in result.message and "None" not in result.message


def test_designed_vectors_are_listed_before_random_and_workload_ones() -> None:
    run = run_policy(mutants.lookup("float32-accumulation").policy)
    lines = [line for line in terminal.format_summary(run).splitlines() if line.startswith("FAIL ")]
    generated = [is_generated(line.split()[1].rstrip(":")) for line in lines]
    assert generated == sorted(generated)
    assert not generated[0] and generated[-1]


# -- ports written outside the kit -------------------------------------------------------------


def process_run(argv: list[str]) -> tuple[RunResult, triage.Triage]:
    run = run_suite(list(suite()), argv, jobs=2)
    entries = plan_suite([str(resources.suite_dir())]).vectors
    return run, triage.triage(entries, run.results)


@pytest.mark.numpy_dispatch
@pytest.mark.slow
def test_the_spec_ports_pass_so_the_planted_bugs_are_the_only_differences() -> None:
    assert run_suite(list(suite()), heldout_argv("spec"), jobs=2).ok
    assert run_suite(list(suite()), real_argv("numpy-spec"), jobs=2).ok


def heldout_argv(name: str) -> list[str]:
    """A held-out port's command, numpy's SIMD dispatch switched off: the ports that rank with
    numpy's unstable sorts then answer as the catalogue models them on any CPU."""
    return portable_numpy_argv([sys.executable, str(TESTS / "heldout" / "ports.py"), name])


def real_argv(name: str) -> list[str]:
    """A realistic port's command, numpy's SIMD dispatch switched off (see heldout_argv)."""
    return portable_numpy_argv([sys.executable, str(TESTS / "heldout" / "real_ports.py"), name])


@pytest.mark.numpy_dispatch
@pytest.mark.slow
@pytest.mark.parametrize(
    "port", [name for name, (_, expected) in HELDOUT.items() if expected], ids=str
)
def test_a_held_out_port_is_triaged_to_its_planted_bug(port: str) -> None:
    expected = HELDOUT[port][1]
    run, result = process_run(heldout_argv(port))
    assert not run.ok
    top = result.likely[0]
    assert top.mistake in expected, result.headline()
    assert top.exact, top.evidence()
    assert result.headline().startswith(f"likely cause: {top.mistake}")


def test_the_openvino_transcription_is_named_with_its_parts() -> None:
    run, result = process_run(heldout_argv("openvino-sum"))
    line = first_line(result)
    assert line.startswith("triage: likely cause: openvino-sum (= ")
    for part in ("cumulative-sums", "pool-rows-on-arrival", "forward-only-pooling"):
        assert part in line
    failing = sum(not r.passed for r in run.results)
    passing = len(run.results) - failing
    assert f"reproduces all {failing} failing vectors and agrees on the {passing} passing" in line


@pytest.mark.numpy_dispatch
@pytest.mark.slow
@pytest.mark.parametrize("port", [name for name, (_, expected) in REAL_PORTS.items() if expected])
def test_a_realistic_port_gets_every_real_difference_named_in_the_first_line(port: str) -> None:
    expected = REAL_PORTS[port][1]
    run, result = process_run(real_argv(port))
    assert not run.ok
    line = first_line(result)
    assert line.startswith("triage: likely cause: "), line
    assert not result.alike, line
    named = set(result.likely[0].choices)
    assert named == set(expected), line
    for choice in expected:
        assert choice in line


def test_the_c_template_built_with_fast_math_is_named(tmp_path: Path) -> None:
    """gcc -O3 -ffast-math (what a porter builds for speed): the loop that re-sums a wrapped ring
    is vectorised and subnormals are flushed to zero. The vector width decides the order gcc adds
    in, and the catalogue models 256-bit lanes: where the CPU has AVX2 the build targets
    x86-64-v3 (AVX2, whatever wider units the CPU has), elsewhere the baseline."""
    from tests.support.toolchains import require_tools

    gcc = require_tools("gcc")["gcc"]
    sources = resources.checkout_root() / "adapters" / "c"  # type: ignore[operator]
    binary = tmp_path / "snapkv-fast-math"
    files = [str(sources / name) for name in ("adapter.c", "json.c", "decimal.c", "snapkv.c")]
    flags = ["-std=c99", "-O3", "-ffast-math", "-march=x86-64-v3" if _avx2() else "-O3"]
    subprocess.run([gcc, *flags, "-o", str(binary), *files, "-lm"], check=True)
    _, result = process_run([str(binary)])
    line = first_line(result)
    assert "flush-subnormals" in line, line
    if _avx2():  # the vector width decides the order gcc adds in: modelled for 256-bit lanes
        assert line.startswith("triage: likely cause: c-template-fast-math (= "), line
        assert "fast-math-vectorised-sums" in line
    else:
        assert any(step in line for step in ("simd-lanes", "pairwise", "vectorised")), line


def _avx2() -> bool:
    try:
        return " avx2 " in Path("/proc/cpuinfo").read_text() + " "
    except OSError:
        return False


# -- the shipped outcomes --------------------------------------------------------------------

SHARDS = 8


@pytest.mark.numpy_dispatch
@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_shipped_outcomes_are_the_catalogue_replayed_on_the_committed_suite(shard: int) -> None:
    """Every catalogued mistake's entries, recomputed (a shard of the catalogue at a time)."""
    every = (*mutants.CATALOGUE, *mutants.PROTOCOL)
    names = [m.name for i, m in enumerate(every) if i % SHARDS == shard]
    shipped = json.loads(known_kills.PATH.read_text(encoding="utf-8"))
    checks = load_checks([str(resources.suite_dir())])
    assert set(shipped) == {item.id for item in (*suite(), *checks)}, (
        "conformance/data/kills.json is stale: run python -m conformance.tools.generate.kills"
    )
    for vector in (*suite(), *checks):
        fresh = known_kills.entry(vector, names)
        entry = shipped[vector.id]
        assert entry["digest"] == fresh["digest"], (
            f"{vector.id}: python -m conformance.tools.generate.kills"
        )
        for name in names:
            assert entry["kills"].get(name) == fresh["kills"].get(name), (vector.id, name)
            assert (name in entry["moved"]) == (name in fresh["moved"]), (vector.id, name)


@pytest.mark.slow
@pytest.mark.parametrize(
    "names", [("refused-step-still-admits",), ("forward-only-pooling", "float32-accumulation")]
)
def test_the_shipped_outcomes_change_no_ranking(
    names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looked up or replayed, every single mistake has the same figures (on the vectors short
    enough to replay every catalogued mistake on quickly); the file only makes the search for
    combinations better informed (a mistake it knows to be inert on a vector leaves it out)."""
    short = [vector for vector in suite() if len(vector.calls) < 60]
    run = run_policy(mutant_policy(*names), vectors=short)
    shipped = triage.triage(short, run.results)
    monkeypatch.setattr(known_kills, "load", lambda vectors: {})
    replayed = triage.triage(short, run.results)

    def singles(result: triage.Triage) -> list[dict[str, Any]]:
        return [item.to_json() for item in result.likely if len(item.names) == 1]

    assert singles(shipped) == singles(replayed)
    assert shipped.likely[0].total >= replayed.likely[0].total
    assert set(shipped.likely[0].names) == set(names) and shipped.likely[0].exact
    assert replayed.replayed > shipped.replayed


def test_an_edited_vector_is_replayed_not_looked_up() -> None:
    from dataclasses import replace

    vector = next(v for v in suite() if v.id == "ties/lower-position-first")
    assert known_kills.load([vector]) != {}
    edited = replace(vector, description=vector.description + " (edited)")
    assert known_kills.load([edited]) == {}


def test_candidates_are_compared_announcing_only_what_the_port_announced() -> None:
    """A port that does not announce scores passes protocol/scores-kept-positions whatever it
    keeps (each scores line is answered unsupported). Compared announcing scores, the masked
    cache would break that check and count against a port that makes exactly that mistake;
    compared announcing what the port announced, it does not."""
    check = next(
        c
        for c in load_checks([str(resources.suite_dir())])
        if c.id == "protocol/scores-kept-positions"
    )
    passed = SimpleNamespace(vector_id=check.id, passed=True)
    masked = [mutants.lookup("masked-holes-stale")]

    def breaks(capabilities: tuple[str, ...] | None) -> int:
        return search.Engine([], [passed], masked, [check], capabilities).singles[0].breaks

    assert (breaks(None), breaks(("scores",)), breaks(())) == (1, 1, 0)

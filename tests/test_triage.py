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

from conformance import mutants, report, resources, triage
from conformance.driver import InProcessAdapter
from conformance.mutants.pooling import ForwardOnlyPooling
from conformance.mutants.summation import Float32Accumulation, KahanSummation, ReversedSlotOrder
from conformance.policy import SnapKV
from conformance.runner import RunResult, run_suite
from conformance.vectors import Vector, load_suite


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
    data = report.json_report(run)
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["triage"]["likely"][0]["mistake"] == "float32-accumulation"
    assert data["triage"]["likely"][0]["explains"] == data["summary"]["failed"]
    text = report.format_summary(run)
    lines = text.splitlines()
    fails = [i for i, line in enumerate(lines) if line.startswith("FAIL ")]
    at = next(i for i, line in enumerate(lines) if line.startswith("triage: likely cause:"))
    assert fails and at > max(fails)


def test_a_passing_run_has_no_triage_in_its_report() -> None:
    run = run_policy(SnapKV)
    assert run.ok
    data = report.json_report(run)
    assert data["triage"] is None

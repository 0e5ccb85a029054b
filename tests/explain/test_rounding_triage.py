"""The triage's rounding step: when a numerics profile explains every failure of an exact run,
the first triage line says which; a semantic mistake gets no such line."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explain.rounding_triage import Rounding, rounding, with_rounding
from conformance.numerics.profiles import profile_named
from conformance.runner.run import Run
from conformance.spec import resources
from conformance.suite.vectors import Vector, load_suite
from conformance.transport.in_process import InProcessAdapter
from tests.support.precision_ports import PORTS


@pytest.fixture(scope="module")
def vectors() -> list[Vector]:
    chosen = ("summation/", "ring/", "lifecycle/", "mutant-traps/per-position-cursor")
    return [v for v in load_suite([resources.suite_dir()]) if v.id.startswith(chosen)]


def exact_results(vectors: list[Vector], factory: Any) -> list[Any]:
    ran = Run(vectors, adapter_factory=lambda: InProcessAdapter(factory)).execute()
    return ran.results


@pytest.mark.parametrize(("port", "profile"), [("f64-tree", "float64"), ("f32-tree", "float32")])
def test_the_tightest_profile_that_explains_every_failure(
    vectors: list[Vector], port: str, profile: str
) -> None:
    results = exact_results(vectors, PORTS[port])
    failures = sum(not r.passed for r in results)
    found = rounding(vectors, results)
    assert found is not None and found.profile.name == profile
    assert found.failures == failures and found.not_applicable == 0
    assert found.line().startswith(
        f"all {failures} failures are rounding within {found.profile.arithmetic}: "
        f"rerun with --numerics {profile} (also within: "
    )
    assert [name for name, _ in found.others][:1] == (
        ["float32"] if port == "f64-tree" else ["bfloat16"]
    )


def test_a_semantic_mistake_is_not_rounding(vectors: list[Vector]) -> None:
    from conformance.mutants import lookup

    results = exact_results(vectors, lookup("per-position-cursor").factory)
    assert any(not r.passed for r in results)
    assert rounding(vectors, results) is None


def test_nothing_failed_nothing_to_say(vectors: list[Vector]) -> None:
    assert rounding(vectors, exact_results(vectors[:3], PORTS["f64-tree"])) is None


class Stub:
    def headline(self) -> str:
        return "likely cause: something"

    def lines(self) -> list[str]:
        return ["triage: likely cause: something", "  - detail"]

    def to_json(self) -> dict[str, Any]:
        return {"headline": "likely cause: something"}


def test_the_rounding_line_comes_first() -> None:
    found = Rounding(profile_named("float32"), 22, 2, (("bfloat16", 2),))
    assert found.line() == (
        "20 of the 22 failures are rounding within float32 accumulation in any order, and the "
        "other 2 lie outside its range (not judged): rerun with --numerics float32 "
        "(also within: bfloat16, 2 n/a)"
    )
    led = with_rounding(Stub(), [], [])  # nothing failed: the triage as it was
    assert isinstance(led, Stub)
    from conformance.explain.rounding_triage import WithRounding

    both = WithRounding(Stub(), found)
    assert both.lines()[0] == f"triage: {found.line()}"
    assert both.lines()[1:] == Stub().lines()
    assert both.to_json()["headline"] == found.line()
    assert both.to_json()["rounding"]["profile"] == "float32"


def test_an_exact_run_is_told_which_profile(vectors: list[Vector]) -> None:
    ran = Run(
        vectors, adapter_factory=lambda: InProcessAdapter(PORTS["rolled"]), triage=True
    ).execute()
    assert ran.triage is not None
    assert ran.triage.headline().endswith("rerun with --numerics float64") or (
        "rerun with --numerics float64 (" in ran.triage.headline()
    )
    assert ran.triage.lines()[0].startswith("triage: all ")

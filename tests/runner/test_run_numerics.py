"""The one Run under a numerics profile: each failed vector judged again when it settles, the
rounding a profile admits failing nothing, everything else failing as before, and the counts
keeping exact passes apart."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.numerics.verdict import FAIL, NOT_APPLICABLE, WITHIN
from conformance.runner.run import Run, RunResult
from conformance.spec import resources
from conformance.suite.vectors import Vector, load_suite
from conformance.transport.in_process import InProcessAdapter
from tests.support.precision_ports import PORTS


@pytest.fixture(scope="module")
def vectors() -> list[Vector]:
    """The summation and weight themes: where float32 accumulation shows, and overflows."""
    chosen = ("summation/", "weights/", "ring/")
    return [v for v in load_suite([resources.suite_dir()]) if v.id.startswith(chosen)]


def run(vectors: list[Vector], factory: Any, numerics: str) -> RunResult:
    return Run(
        vectors, adapter_factory=lambda: InProcessAdapter(factory), numerics=numerics
    ).execute()


def test_a_float32_port_passes_under_float32_and_says_where(vectors: list[Vector]) -> None:
    result = run(vectors, PORTS["f32-tree"], "float32")
    assert result.ok and result.numerics == "float32"
    counts = result.counts
    statuses = {r.vector_id: r.numerics.status for r in result.results if r.numerics}
    assert counts["within"] == sum(s == WITHIN for s in statuses.values()) > 0
    assert counts["not_applicable"] == sum(s == NOT_APPLICABLE for s in statuses.values()) > 0
    assert statuses["weights/sums-beyond-float32"] == NOT_APPLICABLE
    assert counts["passed"] + counts["within"] + counts["not_applicable"] == counts["total"]
    tolerated = [r for r in result.results if r.tolerated]
    assert all(not r.passed and not r.fails_run for r in tolerated)  # exact stays exact
    within = next(r for r in tolerated if r.numerics.status == WITHIN)
    assert within.describe().startswith(f"{within.vector_id}: within float32 (")


@pytest.mark.parametrize("numerics", ["exact", "float64"])
def test_the_same_port_fails_under_a_tighter_profile(vectors: list[Vector], numerics: str) -> None:
    result = run(vectors, PORTS["f32-tree"], numerics)
    assert not result.ok
    if numerics == "exact":
        assert all(r.numerics is None for r in result.results)
        assert "within" not in result.counts
    else:
        failed = [r for r in result.results if r.fails_run]
        assert failed and all(r.numerics is not None for r in failed)
        assert all(r.numerics.status == FAIL for r in failed)


def test_a_semantic_mistake_fails_under_the_loosest_profile(vectors: list[Vector]) -> None:
    from conformance.mutants import lookup

    mistake = lookup("running-sum").factory
    result = run(vectors, mistake, "bfloat16")
    assert not result.ok
    assert any(r.numerics is not None and r.numerics.status == FAIL for r in result.results)


def test_a_listed_failure_within_the_profile_is_stale(vectors: list[Vector]) -> None:
    within = run(vectors, PORTS["f32-tree"], "float32")
    listed = next(r.vector_id for r in within.results if r.tolerated)
    again = Run(
        vectors,
        adapter_factory=lambda: InProcessAdapter(PORTS["f32-tree"]),
        numerics="float32",
        known_failures=[listed],
    ).execute()
    (stale,) = [r for r in again.results if r.vector_id == listed]
    assert stale.fails_run and "remove it from the list" in stale.describe()
    assert again.counts["stale_known_failures"] == 1


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown numerics profile 'float8'"):
        Run([], adapter_factory=InProcessAdapter, numerics="float8")

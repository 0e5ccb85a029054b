"""Reports of a run under a numerics profile: the summary keeps exact passes apart and lists
each vector within the profile or not applicable; JUnit skips n/a and says within."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from conformance.report import terminal
from conformance.runner.run import Run, RunResult
from conformance.spec import resources
from conformance.suite.vectors import load_suite
from conformance.transport.in_process import InProcessAdapter
from tests.support.precision_ports import PORTS


@pytest.fixture(scope="module")
def under_float32() -> RunResult:
    chosen = ("summation/float32", "weights/sums-beyond-float32", "ring/wrap-around")
    vectors = [v for v in load_suite([resources.suite_dir()]) if v.id.startswith(chosen)]
    factory = PORTS["f32-tree"]
    return Run(
        vectors, adapter_factory=lambda: InProcessAdapter(factory), numerics="float32"
    ).execute()


def test_the_summary_keeps_exact_apart(under_float32: RunResult) -> None:
    text = terminal.format_summary(under_float32)
    lines = text.splitlines()
    assert lines[-1] == "1 exact, 2 within float32, 1 n/a, 0 failed"
    assert "summation/float32-accumulation-trap: within float32 (1 evict(s) differ" in text
    assert any(
        line.startswith("weights/sums-beyond-float32: call 5 (evict): n/a for float32: ")
        for line in lines
    )
    assert "FAIL" not in text


def test_an_exact_run_keeps_its_last_line(under_float32: RunResult) -> None:
    exact = RunResult(under_float32.results[:1], None)
    assert terminal.summary_line(exact) == "1 passed, 0 failed"


def test_junit_skips_what_the_profile_cannot_judge(under_float32: RunResult) -> None:
    root = ET.fromstring(terminal.junit_xml(under_float32))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    beyond = cases["weights/sums-beyond-float32"]
    assert beyond.find("skipped") is not None
    assert "n/a for float32" in beyond.find("skipped").get("message")
    within = cases["summation/float32-accumulation-trap"]
    assert within.find("failure") is None and within.find("skipped") is None
    assert "within float32" in within.find("system-out").text
    assert root.get("failures") == "0"


def test_the_report_schema_names_every_profile_and_status() -> None:
    """The JSON report's schema lists exactly the profiles ``--numerics`` takes and the
    statuses a vector can have under one, so a report never carries a value it refuses."""
    import json

    from conformance.numerics.profiles import PROFILE_NAMES
    from conformance.numerics.verdict import STATUSES

    schema = json.loads(
        (resources.suite_dir().parent / "schema" / "report.schema.json").read_text()
    )
    assert tuple(schema["$defs"]["profile"]["enum"]) == PROFILE_NAMES
    assert tuple(schema["$defs"]["numerics"]["properties"]["status"]["enum"]) == STATUSES

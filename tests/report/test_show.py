"""``conformance.report.show``: windows of calls, the command a FAIL line names, and what a
vector built in memory shows. The whole command's behaviour is ``tests/cli/test_show.py``'s."""

from __future__ import annotations

import pytest

from conformance.judge.verdicts import PASS, WRONG_VICTIMS, Verdict
from conformance.report import show, terminal
from conformance.runner.results import VectorResult
from conformance.runner.run import RunResult
from conformance.spec import resources


@pytest.mark.parametrize(
    ("text", "start", "stop"),
    [("2:5", 2, 5), ("7:", 7, None), (":3", 0, 3), ("4", 4, 5), (" 1 : 2 ", 1, 2)],
)
def test_a_window_is_a_to_b_minus_1_in_call_numbers(text: str, start: int, stop: int) -> None:
    assert show.parse_window(text) == show.Window(start, stop)


@pytest.mark.parametrize("text", ["", "a:b", "3:3", "5:2", "-1:", "1:2:3", "1.5"])
def test_a_window_that_holds_no_call_is_refused_with_the_reason(text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        show.parse_window(text)


def test_a_window_is_clamped_to_the_calls_there_are() -> None:
    assert show.Window(5, 50).bounds(10) == (5, 10)
    assert show.Window(20, None).bounds(10) == (10, 10)
    assert show.Window().bounds(0) == (0, 0)


def test_the_command_names_paths_only_when_they_are_not_the_committed_suite(tmp_path) -> None:
    assert show.show_command("ties/a") == "snapkv-conformance show ties/a"
    assert show.show_command("ties/a", [str(resources.suite_dir())]) == (
        "snapkv-conformance show ties/a"
    )
    spaced = tmp_path / "my suite"
    assert show.show_command("fuzz/x", [str(spaced), "b"]) == (
        f"snapkv-conformance show fuzz/x '{spaced}' b"
    )


def failing(vector_id: str) -> VectorResult:
    return VectorResult(
        Verdict(vector_id, WRONG_VICTIMS, 5, "evict", "evicted [2], expected [1]", [1], [2])
    )


def test_a_fail_line_s_last_detail_is_the_command_that_shows_the_vector() -> None:
    text = terminal.format_result(failing("ties/lower-position-first"))
    assert text.splitlines()[-1] == (
        "    its calls and the answers due: snapkv-conformance show ties/lower-position-first"
    )


def test_the_summary_names_the_suite_run_when_it_is_not_the_committed_one(tmp_path) -> None:
    run = RunResult([failing("fuzz/found")], None, None)
    context = terminal.RunContext(paths=[str(tmp_path)])
    text = terminal.format_summary(run, context)
    assert f"its calls and the answers due: snapkv-conformance show fuzz/found {tmp_path}\n" in text
    xml = terminal.junit_xml(run, context).decode()
    assert f"snapkv-conformance show fuzz/found {tmp_path}" in xml


def test_a_stale_known_failure_s_line_is_its_one_line() -> None:
    stale = VectorResult(Verdict("ties/a", PASS), known_failure=True)
    assert terminal.format_result(stale) == (
        "FAIL ties/a: pass (listed as a known failure, but it passes: remove it from the list)"
    )

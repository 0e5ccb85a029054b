"""``snapkv-conformance run`` end to end: output, exit codes, JSON report, JUnit XML."""

from __future__ import annotations

import fcntl
import io
import json
import os
import shlex
import stat
import struct
import sys
import termios
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from conformance.cli import main
from conformance.judge import checker, verdicts
from conformance.report import terminal
from conformance.runner.client import Handshake
from conformance.runner.run import RunResult
from conformance.spec import resources
from tests.support.records import record
from tests.support.runner_support import (
    broken,
    params,
    plain_vector,
    reference_vector,
    trigger_vector,
    write_suite,
)

SCHEMA = json.loads((resources.schema_dir() / "report.schema.json").read_text())


def validate(document: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    return write_suite(
        tmp_path / "vectors",
        [plain_vector("cli/a-plain"), trigger_vector("cli/trigger"), plain_vector("cli/z", 2)],
    )


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def adapter(name: str) -> str:
    return " ".join(broken(name))


def test_all_pass_exits_0_with_the_summary_last(capsys, suite_dir):
    code, out, err = cli(capsys, str(suite_dir))
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "3 passed, 0 failed"
    assert lines[0].startswith("adapter: snapkv-conformance reference (python) ")
    assert err == ""  # no progress when stderr is not a terminal


def test_failures_exit_1_with_one_line_each_and_details(capsys, suite_dir):
    code, out, _ = cli(capsys, str(suite_dir), "--adapter", adapter("descending_victims"))
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "2 passed, 1 failed"
    fail = next(line for line in lines if line.startswith("FAIL "))
    assert fail.startswith("FAIL cli/trigger: call ")
    assert "(evict): broken-invariant: victims must be strictly ascending" in fail
    assert any(line.startswith("    expected: [") for line in lines)
    assert any(line.startswith("    diagnosis: Its victims are the ") for line in lines)
    assert any("but not in ascending order" in line for line in lines)


def test_crash_shows_the_stderr_tail_and_exits_1(capsys, suite_dir):
    code, out, _ = cli(
        capsys, str(suite_dir), "--adapter", adapter("crash_mid_vector"), "--timeout", "2"
    )
    assert code == 1
    assert "crash: the adapter exited (killed by signal SIGSEGV)" in out
    assert "      | about to dereference a dangling pointer at pos 5" in out
    assert out.splitlines()[-1] == "2 passed, 1 failed"


def test_timeout_exits_1(capsys, suite_dir):
    code, out, _ = cli(capsys, str(suite_dir), "--adapter", adapter("hang"), "--timeout", "1")
    assert code == 1 and "timeout: no answer within 1 s" in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--shard", "3/2"], "--shard"),
        (["--shard", "a/b"], "--shard"),
        (["-k", "nothing-matches"], "no vector id matches -k 'nothing-matches'"),
        (["--adapter", ""], "--adapter is empty"),
        (["--adapter", "'unclosed"], "cannot split"),
        (["--adapter", "/nonexistent/port"], "cannot run the adapter /nonexistent/port"),
        (["--known-failures", "/"], "cannot read the known-failures file"),
    ],
)
def test_usage_errors_exit_2(capsys, suite_dir, argv, words):
    code, out, err = cli(capsys, str(suite_dir), *argv)
    assert code == 2 and words in err and out == ""


@pytest.mark.parametrize("argv", [["--timeout", "0"], ["--timeout", "x"], ["--jobs", "0"]])
def test_bad_numbers_are_argparse_usage_errors(capsys, suite_dir, argv):
    with pytest.raises(SystemExit) as caught:
        cli(capsys, str(suite_dir), *argv)
    assert caught.value.code == 2


def test_an_adapter_that_cannot_start_exits_2(capsys, suite_dir):
    code, out, err = cli(capsys, str(suite_dir), "--adapter", adapter("crash_at_start"))
    assert code == 2 and out == ""
    assert "exit status 3" in err and "cannot open model weights" in err


def test_invalid_vectors_exit_2(capsys, tmp_path, suite_dir):
    (suite_dir / "broken.json").write_text("{not json")
    code, _, err = cli(capsys, str(suite_dir))
    assert code == 2 and "broken.json" in err and "not valid JSON" in err
    code, _, err = cli(capsys, str(tmp_path / "missing"))
    assert code == 2 and "no such file or directory" in err


def test_duplicate_ids_exit_2(capsys, suite_dir):
    (suite_dir / "copy.json").write_text((suite_dir / "cli" / "z.json").read_text())
    code, _, err = cli(capsys, str(suite_dir))
    assert code == 2 and "duplicate id 'cli/z'" in err


def test_default_suite_and_adapter(capsys, monkeypatch, suite_dir):
    monkeypatch.setattr(resources, "suite_dir", lambda: suite_dir)
    code, out, _ = cli(capsys)
    assert code == 0 and out.splitlines()[-1] == "3 passed, 0 failed"


def test_k_and_shard_select(capsys, suite_dir, tmp_path):
    code, out, _ = cli(capsys, str(suite_dir), "-k", "cli/*-plain", "-k", "/z")
    assert code == 0 and out.splitlines()[-1] == "2 passed, 0 failed"
    reports = []
    for index in (1, 2):
        path = tmp_path / f"shard{index}.json"
        code, out, _ = cli(capsys, str(suite_dir), "--shard", f"{index}/2", "--report", str(path))
        assert f"shard {index}/2: " in out
        reports.append(json.loads(path.read_text()))
    ids = [[r["id"] for r in rep["results"]] for rep in reports]
    assert ids == [["cli/a-plain", "cli/z"], ["cli/trigger"]]
    assert [rep["shard"] for rep in reports] == [{"index": 1, "count": 2}, {"index": 2, "count": 2}]


def test_known_failures_round_trip(capsys, suite_dir, tmp_path):
    known = tmp_path / "known.txt"
    bad = adapter("descending_victims")
    code, _, _ = cli(capsys, str(suite_dir), "--adapter", bad, "--write-known-failures", str(known))
    assert code == 1
    assert [ln for ln in known.read_text().splitlines() if not ln.startswith("#")] == [
        "cli/trigger"
    ]
    code, out, _ = cli(capsys, str(suite_dir), "--adapter", bad, "--known-failures", str(known))
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "2 passed, 0 failed"
    assert f"known failures ({known}): 1 still failing, 0 now passing" in lines
    assert any(line.startswith("known failure: cli/trigger: call ") for line in lines)
    # The port is fixed: the stale entry now fails the run.
    code, out, _ = cli(capsys, str(suite_dir), "--known-failures", str(known))
    assert code == 1
    assert "FAIL cli/trigger: pass (listed as a known failure, but it passes" in out
    assert out.splitlines()[-1] == "2 passed, 1 failed"


def test_a_known_failures_file_not_written_yet_lists_none(capsys, suite_dir, tmp_path):
    """A port's first CI run has no list yet: a missing file (or an empty path) allows no
    failure, with a note saying how to start one; the run goes on and its outputs are
    written."""
    junit = tmp_path / "junit.xml"
    missing = tmp_path / "conformance-known-failures.txt"
    bad = adapter("descending_victims")
    argv = [str(suite_dir), "--adapter", bad, "--junit", str(junit)]
    code, out, err = cli(capsys, *argv, "--known-failures", str(missing))
    assert code == 1 and out.splitlines()[-1] == "2 passed, 1 failed"
    assert f"--known-failures {missing} does not exist yet" in err
    assert "--write-known-failures" in err
    assert len(list(ET.parse(junit).getroot().iter("testcase"))) == 3
    code, out, err = cli(capsys, str(suite_dir), "--known-failures", "")
    assert code == 0 and out.splitlines()[-1] == "3 passed, 0 failed" and err == ""


def test_a_run_that_cannot_start_still_writes_its_junit_file(capsys, suite_dir, tmp_path):
    """Exit 2 (here: an adapter that cannot start) leaves a JUnit file naming the reason, so
    that a CI job's artifact step finds one."""
    junit = tmp_path / "junit.xml"
    code, out, err = cli(
        capsys, str(suite_dir), "--adapter", "/nonexistent/port", "--junit", str(junit)
    )
    assert code == 2 and out == "" and "cannot run the adapter /nonexistent/port" in err
    root = ET.parse(junit).getroot()
    (case,) = root.iter("testcase")
    (error,) = case.iter("error")
    assert "cannot run the adapter /nonexistent/port" in error.get("message")
    assert (root.get("tests"), root.get("errors")) == ("1", "1")
    for element in root.iter():
        assert set(element.attrib) <= JUNIT_ATTRIBUTES[element.tag], element.tag


def test_unknown_ids_in_known_failures_warn(capsys, suite_dir, tmp_path):
    known = tmp_path / "known.txt"
    known.write_text("gone/vector\n")
    code, _, err = cli(capsys, str(suite_dir), "--known-failures", str(known))
    assert code == 0 and "lists 'gone/vector', which is not in the suite" in err


# -- JSON report ---------------------------------------------------------------------------------


def test_json_report_validates_for_a_passing_run(capsys, suite_dir, tmp_path):
    path = tmp_path / "report.json"
    assert cli(capsys, str(suite_dir), "--report", str(path))[0] == 0
    document = json.loads(path.read_text())
    validate(document)
    assert document["adapter"]["implementation"]["name"] == "snapkv-conformance reference"
    assert document["adapter"]["capabilities"] == ["scores"]
    assert document["summary"]["passed"] == 3 and document["ok"] is True
    assert document["shard"] is None


@pytest.mark.parametrize("name", ["crash_mid_vector", "descending_victims", "two_answers"])
def test_json_report_validates_for_failures(capsys, suite_dir, tmp_path, name):
    path = tmp_path / "report.json"
    code, _, _ = cli(capsys, str(suite_dir), "--adapter", adapter(name), "--report", str(path))
    assert code == 1
    document = json.loads(path.read_text())
    validate(document)
    failed = [r for r in document["results"] if not r["passed"]]
    assert [r["id"] for r in failed] == ["cli/trigger"]
    assert failed[0]["fails_run"] and failed[0]["message"]
    assert document["adapter"]["argv"] == broken(name)
    assert document["summary"]["verdicts"][failed[0]["verdict"]] == 1


def test_schema_rejects_a_broken_report(capsys, suite_dir, tmp_path):
    path = tmp_path / "report.json"
    cli(capsys, str(suite_dir), "--report", str(path))
    document = json.loads(path.read_text())
    document["results"][0]["verdict"] = "mostly-fine"
    with pytest.raises(jsonschema.ValidationError):
        validate(document)
    del document["results"][0]
    document["adapter"]["protocol"] = 2
    with pytest.raises(jsonschema.ValidationError):
        validate(document)


# -- JUnit ---------------------------------------------------------------------------------------


def test_junit_is_well_formed_with_failures_errors_and_skips(capsys, suite_dir, tmp_path):
    known = tmp_path / "known.txt"
    known.write_text("cli/z\n")  # passes: a stale entry, reported as a failure
    path = tmp_path / "junit.xml"
    code, _, _ = cli(
        capsys,
        str(suite_dir),
        "--adapter",
        adapter("crash_mid_vector"),
        "--junit",
        str(path),
        "--known-failures",
        str(known),
    )
    assert code == 1
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["cli/trigger"].find("error").get("type") == "crash"
    assert "dangling pointer" in cases["cli/trigger"].find("system-err").text
    assert cases["cli/z"].find("failure").get("type") == "stale-known-failure"
    assert cases["cli/a-plain"].get("classname") == "cli"
    names = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert names["adapter.name"] == "broken adapter: crash mid-vector"


def synthetic_run(results: list[checker.VectorResult]) -> RunResult:
    handshake = Handshake("port", "c", "1.0", 1, ("scores",))
    return RunResult(results=results, handshake=handshake, shard=(1, 1), adapter_argv=["./a"])


def test_junit_survives_control_characters_in_stderr():
    result = record(
        "x/y",
        verdicts.CRASH,
        call_index=0,
        op="new",
        message="died \x07",
        stderr_tail="\x00\x1b[31m",
    )
    root = ET.fromstring(terminal.junit_xml(synthetic_run([result])))
    assert root.find("testsuite/testcase/system-err").text == "\\x00\\e[31m"
    assert root.find("testsuite/testcase/error").get("message").endswith("died \\x07")


def test_known_failures_are_skipped_in_junit():
    result = record(
        "x/y", verdicts.WRONG_VICTIMS, 3, "evict", "wrong", [1], [2], known_failure=True
    )
    root = ET.fromstring(terminal.junit_xml(synthetic_run([result])))
    assert root.find("testsuite").get("skipped") == "1"
    skipped = root.find("testsuite/testcase/skipped")
    assert skipped.attrib == {"message": "x/y: call 3 (evict): wrong-victims: wrong"}


def test_report_of_a_synthetic_run_validates():
    results = [
        record("a", verdicts.PASS),
        record("b", verdicts.TIMEOUT, 2, "step", "no answer within 1 s"),
        record(
            "c",
            verdicts.BROKEN_INVARIANT,
            4,
            "evict",
            "m",
            [1],
            [1, 1],
            rule=verdicts.NOT_ASCENDING,
        ),
        record("d", verdicts.CRASH, message="not run", exit_status=-9),
    ]
    document = terminal.json_report(synthetic_run(results))
    validate(document)
    assert document["summary"]["failed"] == 3


# -- progress ------------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal():
    quiet = io.StringIO()
    progress = terminal.ProgressLine(quiet)
    progress(record("a", verdicts.PASS), 1, 2)
    progress.finish()
    assert quiet.getvalue() == ""
    tty = FakeTerminal()
    progress = terminal.ProgressLine(tty, interval=0.0)
    progress(record("a", verdicts.PASS), 1, 2)
    progress(record("b", verdicts.CRASH, message="x"), 2, 2)
    assert "\r[1/2] 1 passed, 0 failed  a" in tty.getvalue()
    assert "\r[2/2] 1 passed, 1 failed  b" in tty.getvalue()
    progress.finish()
    assert tty.getvalue().endswith("\r")


def test_summary_last_line_is_exact_with_warnings_after_details():
    results = [
        record("a", verdicts.PASS),
        record("b", verdicts.WRONG_VICTIMS, 3, "evict", "m", [1], [2]),
    ]
    run = synthetic_run(results)
    run.warnings = ["the adapter did not exit within 1 s after bye; killed it"]
    text = terminal.format_summary(run)
    assert text.splitlines()[-1] == "1 passed, 1 failed"
    assert "warning: the adapter did not exit" in text
    assert text.startswith("FAIL b: call 3 (evict): wrong-victims: m\n    expected: [1]\n")


def test_vectors_with_refusals_pass_through_the_cli(capsys, tmp_path):
    refused = reference_vector(
        "cli/refusals",
        [
            {"op": "new", "params": params(2, 0, 2, 1), "seed": 0},
            {"op": "step", "pos": 1, "attn": None},
            {"op": "step", "pos": 1, "attn": None},
            {"op": "step", "pos": 2, "attn": [float("1e39")]},
            {"op": "evict"},
        ],
    )
    directory = write_suite(tmp_path / "v", [refused])
    code, out, _ = cli(capsys, str(directory))
    assert code == 0, out


# -- hostile adapters ----------------------------------------------------------------------------


def strict_json(text: str):
    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_hostile_text_is_printed_and_written_escaped(capsys, suite_dir, tmp_path):
    report_path, junit_path = tmp_path / "r.json", tmp_path / "j.xml"
    code, out, err = cli(
        capsys,
        str(suite_dir),
        "--adapter",
        adapter("hostile_text"),
        "--report",
        str(report_path),
        "--junit",
        str(junit_path),
    )
    assert code == 1, err
    for raw in ("\x1b", "\x00", "\x07", "\ud800"):
        assert raw not in out and raw not in err
    assert "adapter: hostile \\e[2J\\e]0;pwned\\x07\\x00\\ud800 (python)" in out
    assert "      | stderr \\e[31mred\\x00" in out
    assert out.splitlines()[-1] == "2 passed, 1 failed"
    document = strict_json(report_path.read_bytes().decode("utf-8"))
    validate(document)
    assert (
        document["adapter"]["implementation"]["name"] == "hostile \x1b[2J\x1b]0;pwned\x07\x00\ud800"
    )
    failed = next(r for r in document["results"] if not r["passed"])
    assert failed["actual"]["message"].endswith("\x00\ud800")
    suite = ET.parse(junit_path).getroot().find("testsuite")
    assert "\\e[2J" in suite.get("name")


def test_the_report_is_strict_json_when_an_answer_overflows_float64(capsys, suite_dir, tmp_path):
    report_path = tmp_path / "r.json"
    code, out, _ = cli(
        capsys,
        str(suite_dir),
        "--adapter",
        adapter("overflowing_victims"),
        "--report",
        str(report_path),
    )
    assert code == 1
    assert "    actual:   [1e999]" in out
    text = report_path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    document = strict_json(text)
    validate(document)
    failed = next(r for r in document["results"] if not r["passed"])
    assert failed["actual"] == [float("inf")]  # 1e999 reads back as what 1e400 became


def test_control_characters_in_ids_and_messages_are_shown_escaped():
    results = [record("a/\x1b[2Jb\x00", verdicts.WRONG_VICTIMS, 3, "evict", "m\x1b", [1], [2])]
    run = synthetic_run(results)
    run.warnings = ["adapter said \x1b]0;x\x07"]
    text = terminal.format_summary(run)
    assert "\x1b" not in text and "\x00" not in text and "\x07" not in text
    assert text.startswith("FAIL a/\\e[2Jb\\x00: call 3 (evict): wrong-victims: m\\e\n")
    progress = terminal.ProgressLine(FakeTerminal(), interval=0.0)
    progress(results[0], 1, 1)
    assert "\x1b" not in progress.stream.getvalue()


# -- JUnit against its consumers' schema -------------------------------------------------------

# From Jenkins' junit-10.xsd (the strictest of the common consumers; GitLab and the usual GitHub
# reporters read a subset): the attributes each element may carry, and the time pattern.
JUNIT_ATTRIBUTES = {
    "testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
    "testsuite": {
        "name",
        "tests",
        "failures",
        "errors",
        "time",
        "disabled",
        "skipped",
        "timestamp",
        "hostname",
        "id",
        "package",
        "file",
        "log",
        "url",
        "version",
    },
    "properties": set(),
    "property": {"name", "value"},
    "testcase": {"name", "assertions", "time", "classname", "status", "class", "file", "line"},
    "skipped": {"message"},
    "error": {"message", "type"},
    "failure": {"message", "type"},
    "system-out": set(),
    "system-err": set(),
}
SUREFIRE_TIME = r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?"
CASE_CHILD_ORDER = ["skipped", "error", "failure", "system-out", "system-err"]


def test_junit_fits_jenkins_junit_10_xsd():
    import re

    stale = record("s/stale", verdicts.PASS, duration=0.1234567, known_failure=True)
    known = record("k/known", verdicts.WRONG_VICTIMS, 3, "evict", "w", [1], [2], known_failure=True)
    results = [
        record("p/pass", verdicts.PASS, duration=12.3456789),
        record("c/crash", verdicts.CRASH, 1, "step", "died", stderr_tail="boom"),
        record("w/wrong", verdicts.WRONG_VICTIMS, 3, "evict", "w", [1], [2]),
        stale,
        known,
    ]
    run = synthetic_run(results)
    run.duration = 1234.56789
    root = ET.fromstring(terminal.junit_xml(run))
    assert root.tag == "testsuites"
    for element in root.iter():
        assert set(element.attrib) <= JUNIT_ATTRIBUTES[element.tag], element.tag
        if "time" in element.attrib:
            assert re.fullmatch(SUREFIRE_TIME, element.get("time")), element.get("time")
    suite = root.find("testsuite")
    assert {"name", "tests"} <= set(suite.attrib)
    children = [child.tag for child in suite]
    assert children == ["properties"] + ["testcase"] * 5
    assert len(suite.find("properties")) >= 1
    for case in suite.iter("testcase"):
        tags = [child.tag for child in case]
        assert tags == sorted(tags, key=CASE_CHILD_ORDER.index)
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("2", "1", "1")


def test_junit_leaves_out_empty_properties():
    run = RunResult(results=[record("a", verdicts.PASS)], handshake=None)
    suite = ET.fromstring(terminal.junit_xml(run)).find("testsuite")
    assert suite.find("properties") is None


def test_outputs_write_through_links_and_devices(capsys, suite_dir, tmp_path):
    target = tmp_path / "runs" / "1.json"
    target.parent.mkdir()
    target.write_text("old")
    latest = tmp_path / "latest.json"
    latest.symlink_to(target)
    null_before = Path(os.devnull).stat()
    code, _, err = cli(capsys, str(suite_dir), "--report", str(latest), "--junit", os.devnull)
    assert code == 0, err
    assert latest.is_symlink() and json.loads(target.read_text())["ok"] is True
    null_after = Path(os.devnull).stat()
    assert stat.S_ISCHR(null_after.st_mode) and null_after.st_ino == null_before.st_ino


def test_a_status_line_is_escaped_cut_to_the_terminal_and_erased():
    tty = FakeTerminal()
    line = terminal.StatusLine(tty)
    line.show("mutant \x1b[2J" + "x" * 500)
    shown = tty.getvalue()
    assert "\x1b" not in shown and shown.startswith("\rmutant \\e[2J")
    assert len(shown) == 1 + terminal.terminal_width(tty)
    line.finish()
    assert tty.getvalue().endswith("\r")
    quiet = io.StringIO()
    terminal.StatusLine(quiet).show("nothing")
    assert quiet.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_count_progress_is_a_line_every_few_seconds_off_a_terminal(monkeypatch):
    """In CI or a pipe long work still shows it moves: a plain line at most every ``every``
    seconds (and at the end) with done, total, rate and time left."""
    clock = iter([0.0, 1.0, 2.0, 6.0, 7.0, 12.0])
    monkeypatch.setattr(terminal.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    progress = terminal.CountProgress("record", "tokens", 10, stream, every=5.0)
    for done in (1, 2, 6, 7, 10):
        progress(done)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "record: 6/10 tokens, 1.0/s, 4 s left",
        "record: 10/10 tokens, 0.8/s",
    ]


def test_count_progress_is_a_bar_on_a_terminal(monkeypatch):
    monkeypatch.setattr(terminal, "terminal_width", lambda stream: 79)
    stream = _Terminal()
    progress = terminal.CountProgress("record", "tokens", 4, stream)
    progress(1)
    progress.finish()
    shown = stream.getvalue()
    assert "\rrecord: [#####...............] 1/4 tokens, " in shown and "\n" not in shown


def test_a_run_of_protocol_checks_alone_writes_a_report_the_schema_accepts(capsys, tmp_path):
    """No vector ran, so there was no handshake: the adapter's description is null, not
    missing; a check's verdict names the op its request line sends (hello here), which is not
    one of a vector's ops; and with no failing vector there is no triage to report."""
    report = tmp_path / "report.json"
    crashing = shlex.join([sys.executable, "-c", "import sys; sys.exit(1)"])
    code, out, _ = cli(capsys, "-k", "protocol/", "--adapter", crashing, "--report", str(report))
    assert code == 1
    document = json.loads(report.read_text())
    validate(document)
    assert document["adapter"]["implementation"] is None
    assert {result["op"] for result in document["results"]} == {"hello"}
    assert "triage" not in document or document["triage"] is None
    assert "triage:" not in out


def test_progress_fits_the_terminal_of_its_own_stream():
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    with open(follower, "w", encoding="utf-8") as stream:
        assert terminal.terminal_width(stream) == 49
        progress = terminal.ProgressLine(stream)
        assert progress.enabled
        vector = plain_vector("a/very/long/vector/id/that/would/wrap/a/fifty/column/terminal")
        from conformance.judge.verdicts import PASS, Verdict
        from conformance.runner.results import VectorResult

        progress(VectorResult(Verdict(vector.id, PASS)), 1, 2)
        stream.flush()
        text = os.read(leader, 4096).decode()
    os.close(leader)
    assert text.startswith("\r")
    assert len(text) - 1 <= 49

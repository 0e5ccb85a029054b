"""Hostile adapters and inputs outside ``run``'s vector phase: protocol checks, bench, fuzz,
the file walker, and what every front end shares (the one transport, reader and escaper).

Each test is a miniature of one case found by probing: a tiny adapter written inline (a few
lines of Python run with ``-c``), or a tiny file tree. The bound in each test is what the
porter is owed: a verdict or a one-line error, no traceback, nothing left running, memory and
output bounded.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.judge.verdicts import PASS, TIMEOUT
from conformance.runner.check_sessions import run_check
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from conformance.transport.raw import EXIT_GRACE
from tests.support.hostile import PEAK_MB, SERVE, adapter, gone, kit
from tests.support.paths import TESTS
from tests.support.runner_support import REFERENCE_ARGV

CHECKS = {check.id: check for check in load_checks([suite_dir()])}


# -- protocol checks: the one transport -------------------------------------------------------


def test_a_check_adapter_that_exits_0_while_a_child_holds_stdout_is_judged_at_once() -> None:
    """Case 5: the leader's exit status is judged; its group is killed with it, so a child
    holding stdout cannot turn a clean exit into a timeout."""
    child = adapter(
        SERVE
        + """
import subprocess
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
serve()
"""
    )
    check = CHECKS["protocol/crlf"]
    started = time.monotonic()
    verdict, session = run_check(check, child, timeout=30)
    assert verdict.passed, verdict.message
    assert session.exit_status == 0 and time.monotonic() - started < 15


@pytest.mark.slow
def test_a_check_adapter_that_lingers_after_its_input_ends_fails_within_the_grace() -> None:
    """Case 6: every answer given, input closed, and the adapter does not exit: the check
    fails after the exit grace, not after the whole timeout (40 checks would wait 40 times)."""
    lingering = adapter(SERVE + "\nserve()\nimport time\ntime.sleep(30)\n")
    check = CHECKS["protocol/crlf"]
    verdict, session = run_check(check, lingering, timeout=60)
    assert verdict.verdict == TIMEOUT and "did not exit" in verdict.message
    assert session.duration < EXIT_GRACE + 10


def test_a_check_adapter_s_setsid_descendant_is_killed() -> None:
    """Case 16, check phase: a descendant in a session of its own is found and killed."""
    pid_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"snapkv-hostile-{os.getpid()}.pid"
    child = adapter(
        SERVE
        + f"""
import subprocess
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                     start_new_session=True, stdout=subprocess.DEVNULL)
open({str(pid_file)!r}, "w").write(str(p.pid))
serve()
"""
    )
    try:
        verdict, _ = run_check(CHECKS["protocol/crlf"], child, timeout=30)
        assert verdict.passed, verdict.message
        assert gone(int(pid_file.read_text()))
    finally:
        pid_file.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("/nonexistent/adapter", "no such file"),
        ("/", "it is a directory, not a program"),
        ("no-such-command-snapkv", "there is no command 'no-such-command-snapkv' on PATH"),
    ],
)
def test_a_check_phase_adapter_that_cannot_start_is_one_line_exit_2(command: str, why: str) -> None:
    """Case 1: ``run -k protocol/`` with an adapter that cannot start: one line naming the
    command and why, exit 2, no traceback."""
    done = kit("run", "-k", "protocol/crlf", "--adapter", command)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"cannot run the adapter {command}: {why}" in done.stderr


def test_a_file_that_is_not_executable_is_named_with_the_fix(tmp_path: Path) -> None:
    script = tmp_path / "adapter.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    done = kit("run", "-k", "protocol/crlf", "--adapter", str(script))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"cannot run the adapter {script}: it is not executable (chmod +x {script}?)" in (
        done.stderr
    )


def test_a_missing_interpreter_is_named(tmp_path: Path) -> None:
    script = tmp_path / "adapter.sh"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    done = kit("run", "-k", "protocol/crlf", "--adapter", str(script))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "its interpreter (the #! line) '/no/such/interpreter' cannot be found" in done.stderr


def test_an_adapter_that_deletes_itself_after_the_vectors_is_one_line_exit_2(
    tmp_path: Path,
) -> None:
    """Case 1: the adapter ran the vector phase, then is gone when the checks start."""
    script = tmp_path / "adapter.py"
    script.write_text(
        f"#!{sys.executable}\n"
        + SERVE
        + f"""
import os
def gone_after_bye():
    for line in sys.stdin.buffer:
        answer = session.handle_line(line)
        if answer is not None:
            sys.stdout.buffer.write(encode(answer))
            sys.stdout.buffer.flush()
        if b'"bye"' in line:
            os.unlink({str(script)!r})
            return
gone_after_bye()
"""
    )
    script.chmod(0o755)
    done = kit(
        "run", "-k", "ties/lower-position-first", "-k", "protocol/crlf", "--adapter", str(script)
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"cannot run the adapter {script}: no such file" in done.stderr


# -- bench ---------------------------------------------------------------------------------------


def bench(*argv: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = kit(
        "bench", "--repeats", "1", "--steps", "20", "--workload", "defaults", *argv, timeout=timeout
    )
    return done, time.monotonic() - started


@pytest.mark.slow
def test_bench_an_adapter_that_writes_without_end_stays_bounded() -> None:
    """Case 10: an endless writer is cut off (one line per request at most, each bounded),
    not read until memory runs out."""
    flood = adapter(
        """
import sys
sys.stdout.buffer.write(b'{"id":0,"ok":true,"protocol":1,"implementation":'
                       b'{"name":"f","language":"py","version":"0"},"capabilities":[]}\\n')
line = b"x" * 65536
while True:
    sys.stdout.buffer.write(line)
"""
    )
    done, took = bench("--adapter", shlex.join(flood), "--timeout", "60")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "an answer longer than" in done.stderr and took < 50


def test_bench_a_child_holding_stdout_does_not_stall_and_does_not_survive(tmp_path: Path) -> None:
    """Case 11: an adapter that exits while a detached child holds stdout is judged on its
    exit; the child does not outlive the bench."""
    pid_file = tmp_path / "child.pid"
    holder = adapter(
        SERVE
        + f"""
import subprocess
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                     start_new_session=True)
open({str(pid_file)!r}, "w").write(str(p.pid))
serve()
"""
    )
    done, took = bench("--adapter", shlex.join(holder), "--timeout", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert took < 60 and "0 steps/s" not in done.stdout
    assert gone(int(pid_file.read_text()))


def test_bench_a_deeply_nested_hello_is_one_line() -> None:
    """Case 12: nesting past the codec's limit is refused, not a RecursionError."""
    nested = adapter(
        """
import sys
head = b'{"id":0,"ok":true,"protocol":1,"implementation":'
sys.stdout.buffer.write(head + b"[" * 5000 + b"]" * 5000 + b"}\\n")
sys.stdout.buffer.flush()
for line in sys.stdin.buffer:
    pass
"""
    )
    done, _ = bench("--adapter", shlex.join(nested))
    assert done.returncode in (1, 2), done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr


def test_bench_a_huge_timeout_is_accepted() -> None:
    """Case 13: --timeout 1e10 waits in slices, never overflows a timestamp."""
    done, _ = bench("--adapter", shlex.join(REFERENCE_ARGV), "--timeout", "1e10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_bench_escapes_the_adapter_s_name() -> None:
    """Case 14: control characters in an adapter's command reach no terminal raw."""
    command = shlex.join(REFERENCE_ARGV) + " '\x1b[2J\x07'"
    done, _ = bench("--adapter", command)
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr


# -- the one walker -------------------------------------------------------------------------------


@pytest.fixture
def looped_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    (suite / "ties").mkdir(parents=True)
    source = suite_dir() / "ties" / "lower-position-first.json"
    (suite / "ties" / "lower-position-first.json").write_bytes(source.read_bytes())
    (suite / "ties" / "up").symlink_to("..")  # a link to an ancestor: walked once
    return suite


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_link_to_an_ancestor_is_walked_once(
    looped_suite: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.cli import main

    assert main([command, str(looped_suite)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_symlink_loop_is_exit_2_naming_the_path(
    looped_suite: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 8: a link to itself cannot be followed: exit 2 naming it, in run and validate."""
    from conformance.cli import main

    (looped_suite / "loop").symlink_to("loop")
    assert main([command, str(looped_suite)]) == 2
    said = "".join(capsys.readouterr())  # validate lists its problems on stdout
    assert f"{looped_suite / 'loop'}" in said and "Too many levels of symbolic links" in said
    assert "Traceback" not in said


@pytest.mark.parametrize("command", ["run", "validate"])
def test_an_unreadable_directory_is_exit_2_naming_it(
    looped_suite: Path,
    command: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Case 8: a directory that cannot be listed is not skipped (validate used to say "all
    valid"): exit 2 naming it. (The tests may run as root, whom chmod does not stop, so the
    refusal is the operating system's answer played back.)"""
    from conformance.cli import main

    locked = looped_suite / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    assert main([command, str(looped_suite)]) == 2
    said = "".join(capsys.readouterr())
    assert f"{locked}: " in said and "cannot read the directory: Permission denied" in said


# -- protocol-check files and answers ---------------------------------------------------------


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_a_hello_answer_nested_a_thousand_deep_is_a_protocol_error_verdict() -> None:
    """Case 2: the check phase reads answers through the codec's depth limit: a verdict for the
    check, not a RecursionError."""
    nested = adapter(
        """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(b'{"id":1,"ok":true,"x":' + b"[" * 1000 + b"]" * 1000 + b"}\\n")
    sys.stdout.buffer.flush()
"""
    )
    verdict, _ = run_check(CHECKS["protocol/hello-protocol-true"], nested, timeout=30)
    assert verdict.verdict != PASS and "Traceback" not in verdict.message


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda data: {**data, "expect": [*data["expect"], {**data["expect"][-1], "line": 99}]},
            "/expect/",
        ),
        (lambda data: {**data, "rule": _deep(70)}, "nested more than 64 levels deep"),
    ],
    ids=["expect-line-beyond-the-sent-lines", "nesting-past-the-limit"],
)
def test_run_refuses_a_check_file_validate_refuses(tmp_path: Path, edit, words: str) -> None:
    """Case 7: such a file ends run with exit 2 naming the file, as validate does, not in an
    IndexError or a RecursionError."""
    import json as json_module

    source = suite_dir() / "protocol" / "crlf.json"
    broken = tmp_path / "protocol" / "crlf.json"
    broken.parent.mkdir()
    broken.write_text(json_module.dumps(edit(json_module.loads(source.read_text()))))
    for command in ("run", "validate"):
        done = kit(command, str(tmp_path))
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert "Traceback" not in said and str(broken) in said and words in said, said


@pytest.mark.slow
def test_a_check_s_huge_wrong_answer_is_kept_bounded() -> None:
    """Case 3: 520,000 victims in a check's answer: the verdict keeps a capped list (as vector
    results do), so the report stays small."""
    import json as json_module

    huge = adapter(
        SERVE
        + """
import json
for line in sys.stdin.buffer:
    answer = session.handle_line(line)
    if answer is None:
        continue
    if b'"evict"' in line:
        answer = {**answer, "victims": list(range(520_000))}
    sys.stdout.buffer.write(json.dumps(answer).encode() + b"\\n")
    sys.stdout.buffer.flush()
"""
    )
    check = next(c for c in CHECKS.values() if any("victims" in item for item in c.expect))
    verdict, _ = run_check(check, huge, timeout=60)
    assert verdict.verdict != PASS
    assert len(json_module.dumps(verdict.actual)) < 20_000 and len(verdict.message) < 2_000


@pytest.mark.slow
def test_answers_held_in_flight_are_bounded_as_they_are_read() -> None:
    """Case 7b: a 1 MiB refusal message on each of a vector's 257 evicts. The answers are
    capped as each is read, not when the vector settles, so the run's memory stays near that
    of the same run against a port that fails the same vector with short answers, instead of
    growing by a quarter of a gigabyte. (Compared with that run, not with a fixed figure: the
    baseline depends on the machine, numpy's BLAS allocating per core among other things.)"""
    script = (
        "import sys\n"
        "from conformance.cli import main\n"
        "status = main(['run', '-k', 'summation/window-256-trap', '--adapter', sys.argv[1]])\n"
        f"print(status, {PEAK_MB})\n"
    )
    broken = TESTS / "broken_adapters" / "huge_refusals.py"
    peaks = {}
    for name, argv in (
        (
            "short",
            [sys.executable, "-m", "conformance", "adapter", "--mutant", "pairwise-summation"],
        ),
        ("huge", [sys.executable, str(broken)]),
    ):
        done = subprocess.run(
            [sys.executable, "-c", script, shlex.join(argv)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        status, peak_mb = done.stdout.split()[-2:]
        assert status == "1", done.stdout[-2000:] + done.stderr[-2000:]
        peaks[name] = int(peak_mb)
    assert peaks["huge"] - peaks["short"] < 30, f"peaks in MB: {peaks}"


# -- a vector run refuses what validate's loader refuses -----------------------------------------


@pytest.mark.parametrize(
    ("weight", "where"),
    [("-1.0", "/calls/4"), ("1e400", "/calls/4"), ("9" * 5000, "/: not valid JSON: an integer")],
    ids=["negative", "beyond-float64", "5000-digits"],
)
def test_a_weight_the_schema_refuses_stops_the_run_at_that_file(
    tmp_path: Path, weight: str, where: str
) -> None:
    """Case 9: a vector whose call that must succeed holds a weight the schema refuses is
    refused when its turn comes, before any of its requests, exit 2 naming the file, the
    pointer and the reason (it used to run, then the triage's reload raised and no report
    was written); the JUnit file still says why."""
    source = suite_dir() / "ties" / "lower-position-first.json"
    text = source.read_text().replace('"attn":[1.0,0.5,0.5]', f'"attn":[1.0,{weight},0.5]')
    bad = tmp_path / "suite" / "ties" / "lower-position-first.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(text)
    junit = tmp_path / "junit.xml"
    done = kit("run", str(tmp_path / "suite"), "--junit", str(junit))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert f"{bad}: {where}" in done.stderr, done.stderr
    assert "cannot run" not in done.stderr and junit.read_text().count("<error ") == 1
    validated = kit("validate", str(tmp_path / "suite"))
    assert validated.returncode == 2 and str(bad) in validated.stdout


# -- fuzz ---------------------------------------------------------------------------------------


def test_fuzz_escapes_an_adapter_s_name_and_writes_nothing_in_the_working_directory(
    tmp_path: Path,
) -> None:
    """Cases 14 and 18: a name holding a screen clear, an OSC title, BEL and CR reaches the
    terminal escaped; and fuzz leaves no ``.hypothesis/`` (nor anything else) behind."""
    name = "port\x1b[2J\x1b]0;pwned\x07\r"
    hostile = adapter(
        SERVE.replace(
            "session = Session()",
            f"session = Session(implementation={{'name': {name!r}, 'language': 'x', "
            "'version': '1'})",
        )
        + "\nserve()\n"
    )
    done = kit(
        "fuzz", "--adapter", shlex.join(hostile), "--max-examples", "5", "--seed", "1", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for raw in ("\x1b", "\x07", "\r"):
        assert raw not in done.stdout + done.stderr
    assert "port\\e[2J" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_port_name_holding_catches_does_not_move_the_marker() -> None:
    """Case 15: what a description pins may quote a port; its "Catches:" is the kit's last."""
    from conformance.spec.text import split_description

    text = "Found against port (Catches: nothing): a difference. Catches: the kit's words."
    assert split_description(text) == (
        "Found against port (Catches: nothing): a difference.",
        "the kit's words.",
    )

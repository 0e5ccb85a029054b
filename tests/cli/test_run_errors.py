"""``snapkv-conformance run`` at the command line: bad input and rough handling get a clear
error naming the option, file and reason, the documented exit status, nothing changed, no
traceback, no process left behind.

Each test pins one fault found by driving the subcommands as a demanding port maintainer would.
Subprocess tests wait for a marker file (bounded), never for a fixed time.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conformance import cli
from conformance.report import terminal
from conformance.runner import run
from conformance.runner.client import parse_handshake
from conformance.transport.failures import AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from tests.support.paths import ROOT
from tests.support.runner_support import (
    REFERENCE_ARGV,
    broken,
    plain_vector,
    trigger_vector,
    write_suite,
)

BOUND = 20.0  # seconds allowed for any wait on a subprocess here (a loaded 2-core machine)


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "conformance", *args]


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie (a killed orphan this sandbox's init may not
    reap at once, which signal 0 would still find)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stuck_adapter(tmp_path: Path) -> tuple[list[str], Path]:
    """An adapter that leaves ``started-<pid>`` in a marker directory, shakes hands, and on
    ``new`` leaves ``hung-<pid>`` and never answers again (ignoring SIGINT, as a wedged port
    would)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    script = tmp_path / "stuck.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, os, signal, sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from conformance.adapter.server import Session, encode
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            session = Session()
            def mark(state):
                open(os.path.join({str(markers)!r}, f"{{state}}-{{os.getpid()}}"), "w").close()
            for line in sys.stdin.buffer:
                request = json.loads(line)
                mark("started")
                if request.get("op") == "new":
                    mark("hung")
                    time.sleep(3600)
                sys.stdout.buffer.write(encode(session.handle(request)))
                sys.stdout.buffer.flush()
            """
        )
    )
    return [sys.executable, str(script)], markers


def interrupt(args: list[str], tmp_path: Path, markers: Path, sig: int):
    """Start the CLI, wait until an adapter hangs, send ``sig``; return the finished process,
    its output and the pids of every adapter it started."""
    proc = subprocess.Popen(
        args,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A job started in the background by a non-interactive shell (as CI may start this
        # test run) inherits SIGINT ignored, and Python then keeps ignoring it; a user's
        # terminal delivers it, so give the CLI the default disposition a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_for(lambda: any(markers.glob("hung-*")), "an adapter to hang")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=BOUND)
    finally:
        proc.kill()
    pids = [int(path.name.split("-")[1]) for path in markers.glob("started-*")]
    return proc, out, err, pids


# -- interruption ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sig", "status", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_interrupting_run_kills_the_adapters_without_a_traceback(
    tmp_path, suite_dir, sig, status, word
):
    argv, markers = stuck_adapter(tmp_path)
    command = cli_argv(
        "run", str(suite_dir), "--adapter", " ".join(argv), "--jobs", "2", "--timeout", "60"
    )
    proc, out, err, pids = interrupt(command, tmp_path, markers, sig)
    assert proc.returncode == status
    assert err == f"snapkv-conformance run: {word}\n"
    assert out == ""
    wait_for(lambda: not any(alive(pid) for pid in pids), "the adapters to be killed")


def test_interrupting_the_protocol_checks_writes_what_finished_within_moments(tmp_path):
    """The signal policy in the check phase: every adapter is killed at once (the checks in
    flight end with them, and no new one starts), the vectors and checks that finished are
    written to --report and --junit, and the exit status is 130."""
    markers = tmp_path / "markers"
    markers.mkdir()
    script = tmp_path / "hangs-on-crlf.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from conformance.adapter.server import Session, encode
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            session = Session()
            open(os.path.join({str(markers)!r}, f"started-{{os.getpid()}}"), "w").close()
            for line in sys.stdin.buffer:
                if b"\\r" in line:
                    open(os.path.join({str(markers)!r}, f"hung-{{os.getpid()}}"), "w").close()
                    time.sleep(3600)
                answer = session.handle_line(line)
                if answer is not None:
                    sys.stdout.buffer.write(encode(answer))
                    sys.stdout.buffer.flush()
            """
        )
    )
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    command = cli_argv(
        "run", "-k", "ties/", "-k", "protocol/", "--adapter", f"{sys.executable} {script}",
        "--timeout", "60", "--report", str(report), "--junit", str(junit),
    )  # fmt: skip
    started = time.monotonic()
    proc, _, err, pids = interrupt(command, tmp_path, markers, signal.SIGINT)
    assert proc.returncode == 130, err
    assert err.endswith("snapkv-conformance run: interrupted\n") and "Traceback" not in err
    assert time.monotonic() - started < BOUND
    wait_for(lambda: not any(alive(pid) for pid in pids), "the adapters to be killed")
    written = json.loads(report.read_text())
    assert written["interrupted"] is True and written["ok"] is False
    ids = [result["id"] for result in written["results"]]
    assert sum(i.startswith("ties/") for i in ids) == 16 and "protocol/crlf" not in ids
    assert junit.read_text().count("<testcase ") == len(ids)


def test_interrupting_fuzz_kills_the_adapter_without_a_traceback(tmp_path):
    argv, markers = stuck_adapter(tmp_path)
    command = cli_argv("fuzz", "--adapter", " ".join(argv), "--seed", "1", "--timeout", "60")
    proc, out, err, pids = interrupt(command, tmp_path, markers, signal.SIGINT)
    assert proc.returncode == 130
    assert err == "snapkv-conformance fuzz: interrupted\n"
    assert out.startswith("fuzzing ")
    wait_for(lambda: not any(alive(pid) for pid in pids), "the adapter to be killed")


# -- the runner's own faults are raised, not lost ----------------------------------------------


def test_an_unexpected_error_while_starting_is_raised_in_the_caller(suite_dir):
    from conformance.suite.vectors import load_suite

    class Broken(InProcessAdapter):
        def start(self):
            raise RuntimeError("bug in an adapter class")

    with pytest.raises(RuntimeError, match="bug in an adapter class"):
        run.run_suite(load_suite([suite_dir]), adapter_factory=Broken)


def test_an_unexpected_error_in_a_worker_is_raised_in_the_caller(suite_dir):
    from conformance.suite.vectors import load_suite

    class Broken(InProcessAdapter):
        def receive(self, ticket, into=None, read=None, **kw):
            raise RuntimeError("bug while receiving")

    with pytest.raises(RuntimeError, match="bug while receiving"):
        run.run_suite(load_suite([suite_dir]), adapter_factory=Broken)


# -- adapters that are not adapters ------------------------------------------------------------


def test_a_program_echoing_hello_is_not_called_a_refusal():
    with pytest.raises(AdapterStartError, match="no boolean ok") as caught:
        parse_handshake({"id": 1, "op": "hello", "protocol": 1})
    assert "refused" not in str(caught.value)


def test_run_with_cat_as_the_adapter_says_it_is_not_an_adapter(suite_dir, capsys):
    assert cli.main(["run", str(suite_dir), "--adapter", "cat"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "the answer to hello has no boolean ok (is the program an adapter?)" in captured.err


def test_a_huge_timeout_waits_in_slices_instead_of_overflowing(suite_dir, capsys):
    argv = " ".join(REFERENCE_ARGV)
    assert cli.main(["run", str(suite_dir), "--adapter", argv, "--timeout", "1e300"]) == 0
    assert capsys.readouterr().out.endswith("2 passed, 0 failed\n")


# -- output files: checked before the run, each written whole or not at all --------------------


def test_run_refuses_an_unwritable_output_before_running(tmp_path, suite_dir, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for option, path, reason in [
        ("--report", str(blocker / "r.json"), f"{blocker} is not a directory"),
        ("--junit", str(tmp_path), "is a directory"),
        ("--write-known-failures", str(blocker / "k.txt"), "is not a directory"),
    ]:
        assert cli.main(["run", str(suite_dir), option, path]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""  # nothing ran
        assert captured.err.startswith(f"snapkv-conformance run: error: {option} {path}: ")
        assert reason in captured.err
    assert blocker.read_text() == "x"


def test_run_writes_every_output_it_can_and_prints_the_results(
    monkeypatch, tmp_path, suite_dir, capsys
):
    def full_disk(path, *args):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(terminal, "write_json_report", full_disk)
    junit = tmp_path / "new" / "dir" / "junit.xml"  # missing directories are created
    known = tmp_path / "known.txt"
    status = cli.main(
        [
            "run",
            str(suite_dir),
            "--report",
            str(tmp_path / "r.json"),
            "--junit",
            str(junit),
            "--write-known-failures",
            str(known),
        ]
    )
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out.endswith("2 passed, 0 failed\n")
    assert f"--report {tmp_path / 'r.json'}: cannot write: No space left on device" in captured.err
    assert junit.read_bytes().startswith(b"<?xml")
    assert known.read_text().startswith("# snapkv-conformance known failures")


# -- streams and terminals ---------------------------------------------------------------------


def test_a_closed_stdout_ends_the_printing_and_nothing_else(tmp_path):
    proc = subprocess.Popen(
        cli_argv("generate", "--list"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(BOUND) == 0
    assert err == b""


def test_run_writes_its_outputs_and_tells_fail_from_pass_with_stdout_closed(tmp_path):
    suite = write_suite(tmp_path / "suite", [plain_vector("cli/a"), trigger_vector("cli/t")])
    files = {name: tmp_path / name for name in ("r.json", "j.xml", "known.txt")}
    for adapter, expected in ((broken("descending_victims"), 1), (REFERENCE_ARGV, 0)):
        for path in files.values():
            path.unlink(missing_ok=True)
        argv = cli_argv(
            "run",
            str(suite),
            "--adapter",
            shlex.join(adapter),
            "--report",
            str(files["r.json"]),
            "--junit",
            str(files["j.xml"]),
            "--write-known-failures",
            str(files["known.txt"]),
        )
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first line (``| head -0``)
        try:
            done = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, timeout=BOUND * 3)
        finally:
            os.close(write)
        assert done.returncode == expected, done.stderr
        assert b"Traceback" not in done.stderr
        assert json.loads(files["r.json"].read_text())["ok"] is (expected == 0)
        assert files["j.xml"].read_bytes().startswith(b"<?xml")
        assert ("cli/t" in files["known.txt"].read_text()) is (expected == 1)


def test_run_with_stdout_on_a_full_device_has_no_traceback(suite_dir, tmp_path):
    report_path = tmp_path / "r.json"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            cli_argv("run", str(suite_dir), "--report", str(report_path)),
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=BOUND * 3,
        )
    assert (done.returncode, done.stderr) == (0, b"")
    assert json.loads(report_path.read_text())["ok"] is True

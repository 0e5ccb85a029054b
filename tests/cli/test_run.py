"""``snapkv-conformance run`` against hostile files, hostile adapters and interruptions: a
verdict or one error line, bounded output, and a finished run's outputs written at every stage;
and the known-failures file: a run whose only faults are stale entries (listed vectors that now
pass) prints those lines and the summary, no triage.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.explain import triage as triage_module
from conformance.spec.resources import suite_dir
from conformance.suite.discovery import read_known_failures
from tests.support.hostile import SERVE, adapter, kit
from tests.support.runner_support import mutant_argv
from tests.support.small_suite import write_small_suite

TIES = shlex.join(mutant_argv("ties-to-higher-position"))  # fails tiny/ties


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_small_suite(tmp_path / "vectors")


def outputs(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    return report, junit, ["--report", str(report), "--junit", str(junit)]


# -- interrupted or disturbed after the run -------------------------------------------------------


def test_sigint_during_the_triage_writes_the_finished_run(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Case 5: Ctrl-C while the triage runs (most of a failing run's time) used to lose the
    whole finished run; now its summary and outputs are written, then it exits 130."""

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGINT)  # as Ctrl-C would, while the triage replays
        raise AssertionError("the signal policy did not stop the triage")

    monkeypatch.setattr(triage_module, "triage", interrupted)
    report, junit, options = outputs(tmp_path)
    assert main(["run", str(suite), "--adapter", TIES, *options]) == 130
    written = json.loads(report.read_text())
    assert (written["summary"]["passed"], written["summary"]["failed"]) == (2, 2)
    assert "the triage was interrupted: none is reported" in written["warnings"]
    assert junit.read_text().count("<failure ") == 2
    said = capsys.readouterr()
    assert "2 passed, 2 failed" in said.out
    assert said.err.strip().endswith("snapkv-conformance run: interrupted")


@pytest.mark.parametrize("change", ["deleted", "rewritten", "fifo"])
def test_a_vector_changed_before_the_triage_costs_only_the_triage(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Case 6: the failing vector's file removed, rewritten or swapped for a FIFO after it ran,
    before the triage reads it again: the run's verdicts and outputs stand (exit 1), and the
    report says why there is no triage; no traceback, no hang."""
    real = triage_module.triage
    vector = suite / "tiny" / "ties.json"

    def after_the_run(*args: Any, **kwargs: Any) -> Any:
        vector.unlink()
        if change == "rewritten":
            vector.write_text('{"format": "snapkv-vector/1", "id": "tiny/ties"')
        elif change == "fifo":
            os.mkfifo(vector)
        return real(*args, **kwargs)

    monkeypatch.setattr(triage_module, "triage", after_the_run)
    report, junit, options = outputs(tmp_path)
    assert main(["run", str(suite), "--adapter", TIES, *options]) == 1
    written = json.loads(report.read_text())
    assert written["summary"]["failed"] == 2 and written["triage"] is None
    (why,) = [w for w in written["warnings"] if w.startswith("no triage: ")]
    assert str(vector) in why and "changed or removed during the run" in why
    assert junit.read_text().count("<failure ") == 2


# -- output paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("--report", "--junit"),
        ("--report", "--write-known-failures"),
        ("--junit", "--write-known-failures"),
    ],
)
@pytest.mark.parametrize("how", ["same", "link"])
def test_two_outputs_naming_one_file_are_refused_before_the_run(
    tmp_path: Path, first: str, second: str, how: str, capsys: pytest.CaptureFixture
) -> None:
    """Case 17: ``--report out --junit out`` used to exit 0 with the report silently replaced
    by the JUnit file; now it is a usage error before anything runs (a symlink too)."""
    target = tmp_path / "out"
    other = target if how == "same" else tmp_path / "link"
    if how == "link":
        target.write_text("")
        other.symlink_to(target)
    status = main(
        ["run", "-k", "ties/lower-position-first", first, str(target), second, str(other)]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert err == (
        f"snapkv-conformance run: error: {first} {target} and {second} {other} name the same "
        "file: the second would replace the first; give each its own path\n"
    )


def test_two_outputs_to_dev_null_are_fine(capsys: pytest.CaptureFixture) -> None:
    assert main(["run", "-k", "ties/lower-position-first", "--report", os.devnull,
                 "--junit", os.devnull]) == 0  # fmt: skip


# -- input files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "long-line", "long-id"])
def test_a_hostile_known_failures_file_is_one_short_line(tmp_path: Path, kind: str) -> None:
    """Case 10: a FIFO used to block for good, /dev/zero to end in a MemoryError, a 20 MiB
    line to be printed whole; each is now one short line naming the file, exit 2."""
    path = tmp_path / "known-failures.txt"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "long-line":
        path.write_text("ties/x " + "y" * (20 << 20) + "\n")
    else:
        path.write_text("ties/" + "y" * (10 << 20) + "\n")
    done = kit("run", "-k", "ties/lower", "--known-failures", str(path), timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[:2000]
    assert str(path) in done.stderr and len(done.stderr) < 1_000
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["named", "link.json", "in-the-suite"])
def test_dev_zero_as_a_vector_is_one_line(tmp_path: Path, kind: str) -> None:
    """Case 8: /dev/zero named as a vector, or a ``*.json`` link to it (named, or in a suite
    directory), used to be read without bound; now one line names it, exit 2."""
    if kind == "named":
        path = Path("/dev/zero")
        target = str(path)
    else:
        (tmp_path / "ties").mkdir()
        path = tmp_path / "ties" / "zero.json"
        path.symlink_to("/dev/zero")
        target = str(path) if kind == "link.json" else str(tmp_path)
    done = kit("run", target, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"snapkv-conformance run: error: invalid vectors: {path}: /: is a character device, "
        "not a regular file: a suite file must be one\n"
    )


@pytest.mark.slow
def test_a_2_gib_sparse_vector_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """Case 18: a 2 GiB sparse ``*.json`` beside a vector used to be read whole before its
    first byte was judged; now its size refuses it, in a moment and a few MB."""
    suite = tmp_path / "suite"
    (suite / "ties").mkdir(parents=True)
    source = suite_dir() / "ties" / "lower-position-first.json"
    (suite / "ties" / "lower-position-first.json").write_bytes(source.read_bytes())
    sparse = suite / "ties" / "huge.json"
    try:
        with open(sparse, "wb") as handle:
            handle.truncate(2 << 30)
        script = (
            "import resource, sys\n"
            "from conformance.cli import main\n"
            "status = main(['run', sys.argv[1]])\n"
            "print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(suite)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        status, peak_mb = done.stdout.split()[-2:]
        assert status == "2" and int(peak_mb) < 300, done.stdout + done.stderr
        assert done.stderr == (
            f"snapkv-conformance run: error: invalid vectors: {sparse}: /: is 2 GiB, over the "
            "1 GiB a suite file may hold; is it the file you meant?\n"
        )
    finally:
        sparse.unlink(missing_ok=True)


def test_a_file_judged_by_its_first_byte(tmp_path: Path) -> None:
    """A file that is not JSON from its first byte is refused on its head alone."""
    (tmp_path / "ties").mkdir()
    (tmp_path / "ties" / "nul.json").write_bytes(b"\0" * (4 << 20))
    done = kit("run", str(tmp_path), timeout=60)
    assert done.returncode == 2 and done.stderr.endswith(
        "nul.json: /: not valid JSON: expected '{' at byte 0\n"
    ), done.stderr


@pytest.mark.slow
def test_a_vector_with_a_million_extra_params_is_one_short_line(tmp_path: Path) -> None:
    """Case 9: the schema's message quoted every one of 10^6 names (a 10.9 MB "one-line"
    error, a 21.8 MB JUnit file); now the line and the JUnit file are a few KB."""
    source = json.loads((suite_dir() / "ties" / "lower-position-first.json").read_text())
    source["params"] = {**source["params"], **{f"x{index}": 0 for index in range(1_000_000)}}
    (tmp_path / "ties").mkdir()
    (tmp_path / "ties" / "lower-position-first.json").write_text(json.dumps(source))
    junit = tmp_path / "junit.xml"
    done = kit("run", str(tmp_path), "--junit", str(junit), timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert len(done.stderr) < 2_000 and "more characters)" in done.stderr
    assert junit.stat().st_size < 10_000
    validated = kit("validate", str(tmp_path), timeout=120)
    assert validated.returncode == 2 and len(validated.stdout) < 5_000


# -- hostile adapters -----------------------------------------------------------------------------


def sizes(tmp_path: Path, done: Any) -> dict[str, int]:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    return {
        "stdout": len(done.stdout),
        "stderr": len(done.stderr),
        "report": report.stat().st_size,
        "junit": junit.stat().st_size,
    }


@pytest.mark.slow
def test_answers_of_500000_members_make_a_short_fail_line(tmp_path: Path) -> None:
    """Case 11: with --validate-protocol, an evict answered with 500,000 extra members used to
    make a 5.4 MB FAIL line, a 5.4 MB report and a 10.8 MB JUnit file."""
    wide = adapter(
        SERVE
        + """
import json
for line in sys.stdin.buffer:
    got = answer(line)
    if got is None:
        continue
    if b'"evict"' in line:
        got = {**got, **{f"extra{index}": 0 for index in range(500_000)}}
    sys.stdout.buffer.write(json.dumps(got).encode() + b"\\n")
    sys.stdout.buffer.flush()
"""
    )
    _, _, options = outputs(tmp_path)
    done = kit("run", "-k", "ties/lower-position-first", "--validate-protocol",
               "--adapter", shlex.join(wide), *options, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    (fail,) = [line for line in done.stderr.splitlines() if line.startswith("FAIL ")]
    assert "does not validate against schema" in fail and len(fail) < 2_000
    assert all(size < 50_000 for size in sizes(tmp_path, done).values()), sizes(tmp_path, done)


@pytest.mark.parametrize("what", ["name", "capabilities"])
def test_a_hello_of_10_mib_or_a_million_capabilities_keeps_the_outputs_small(
    tmp_path: Path, what: str
) -> None:
    """Case 19: a port naming itself with 10 MiB, or announcing 10^6 capabilities, used to be
    printed whole (a report of 10 to 18 MB, a JUnit file of 30 MB)."""
    implementation = (
        "{'name': 'n' * (10 << 20), 'language': 'py', 'version': '1'}"
        if what == "name"
        else "{'name': 'port', 'language': 'py', 'version': '1'}"
    )
    capabilities = "[f'cap{i}' for i in range(1_000_000)]" if what == "capabilities" else "()"
    loud = adapter(
        SERVE.replace(
            "session = Session()",
            f"session = Session(implementation={implementation}, capabilities={capabilities})",
        )
        + "\nserve()\n"
    )
    _, _, options = outputs(tmp_path)
    done = kit("run", "-k", "ties/lower-position-first", "--adapter", shlex.join(loud),
               *options, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(size < 20_000 for size in sizes(tmp_path, done).values()), sizes(tmp_path, done)


# -- a closed or full stderr --------------------------------------------------------------------


@pytest.mark.parametrize("stderr", ["closed-pipe", "full-disk"])
def test_a_closed_or_full_stderr_loses_no_output(tmp_path: Path, stderr: str) -> None:
    """Case 2: ``2>&1 | head -1`` (a reader gone) or ``2>/dev/full``: the kit used to exit
    141 or hide an OSError traceback, writing neither report nor JUnit; now it writes both
    and exits with the run's own status (1: a failing port)."""
    report, junit, options = outputs(tmp_path)
    suite = write_small_suite(tmp_path / "vectors")
    command = [sys.executable, "-m", "conformance", "run", str(suite), "--adapter", TIES, *options]
    if stderr == "closed-pipe":
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first line: every write fails
        try:
            done = subprocess.run(command, stdout=write, stderr=write, timeout=120, check=False)
        finally:
            os.close(write)
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                command, stdout=subprocess.DEVNULL, stderr=full, timeout=120, check=False
            )
    assert done.returncode == 1
    assert json.loads(report.read_text())["summary"]["failed"] == 2
    assert junit.read_text().count("<failure ") == 2


# -- known failures ----------------------------------------------------------------------------

PASSING = "ties/lower-position-first"
STALE_LINE = (
    f"FAIL {PASSING}: pass (listed as a known failure, but it passes: remove it from the list)"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "run", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_a_run_whose_only_failures_are_stale_entries_prints_only_the_stale_lines(
    tmp_path: Path,
) -> None:
    known = tmp_path / "known.txt"
    known.write_text(f"{PASSING}\n")
    rewritten = tmp_path / "rewritten.txt"
    done = run(
        "-k", PASSING, "--known-failures", str(known), "--write-known-failures", str(rewritten)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    head, _, summary = done.stdout.partition("\n\n")
    assert head.splitlines() == [STALE_LINE]
    assert "triage" not in done.stdout and "failures by first divergence" not in done.stdout
    assert summary.splitlines()[-2:] == [
        f"known failures ({known}): 0 still failing, 1 now passing",
        "0 passed, 1 failed",
    ]
    assert read_known_failures(rewritten) == set()


def test_a_run_with_a_real_failure_beside_a_stale_entry_is_still_triaged(tmp_path: Path) -> None:
    """The contrast: the mutant fails a vector that it did not fail before, so the triage has
    evidence and runs."""
    failing = "ties/pooled-not-raw"
    known = tmp_path / "known.txt"
    known.write_text("order/victims-ascending\n")
    adapter = shlex.join(mutant_argv("ties-to-higher-position"))
    done = run(
        "-k", failing, "-k", "order/victims-ascending", "--adapter", adapter,
        "--known-failures", str(known),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL {failing}: call " in done.stdout
    assert "FAIL order/victims-ascending: pass (listed as a known failure" in done.stdout
    assert "\ntriage: " in done.stdout and "failures by first divergence:" in done.stdout

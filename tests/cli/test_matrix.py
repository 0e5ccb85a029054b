"""`snapkv-conformance matrix` at the command line: its outputs checked before the ports run, the
summary printed when writing fails, and an unknown option reported with its usage.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli
from tests.support.hostile import gone, hanging_adapter, kit, wait_for_text
from tests.support.runner_support import REFERENCE_ARGV
from tests.support.small_suite import write_small_suite


def test_matrix_checks_out_first_and_prints_the_summary_when_writing_fails(
    monkeypatch, tmp_path, suite_dir, capsys
):
    (tmp_path / "table.md").mkdir()
    port = "ref=" + " ".join(REFERENCE_ARGV)
    assert (
        cli.main(["matrix", str(suite_dir), "--adapter", port, "--out", str(tmp_path / "table")])
        == 2
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"--out {tmp_path / 'table.md'}: is a directory" in captured.err

    def full_disk(result, out):
        raise OSError(28, "No space left on device", str(out) + ".md")

    monkeypatch.setattr("conformance.tools.matrix.write_matrix", full_disk)
    assert (
        cli.main(["matrix", str(suite_dir), "--adapter", port, "--out", str(tmp_path / "m")]) == 2
    )
    captured = capsys.readouterr()
    assert captured.out.startswith("ref: 2/2 passed")
    assert "cannot write: No space left on device" in captured.err


def test_an_unknown_option_is_reported_with_the_subcommand_usage(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["matrix", "--adapter", "a=b", "-k", "x"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: snapkv-conformance matrix")
    assert "snapkv-conformance matrix: error: unrecognized arguments: -k\n" in err


# -- interrupted, and against special files ----------------------------------------------------
REFERENCE = shlex.join(REFERENCE_ARGV)


@pytest.mark.slow
def test_interrupted_while_the_third_port_hangs_writes_the_two_that_finished(
    tmp_path: Path,
) -> None:
    """Case 7: two ports finished, the third hangs, Ctrl-C: the tables used to be lost; now
    they hold the two finished ports and say the matrix was interrupted, exit 130."""
    suite = write_small_suite(tmp_path / "vectors")
    pid_file = tmp_path / "hung.pid"
    out = tmp_path / "matrix"
    command = [
        sys.executable, "-m", "conformance", "matrix", str(suite), "--out", str(out),
        "--adapter", f"one={REFERENCE}", "--adapter", f"two={REFERENCE}",
        "--adapter", f"three={shlex.join(hanging_adapter(pid_file))}", "--timeout", "300",
    ]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as matrix:
        hung = int(wait_for_text(pid_file, within=120))
        matrix.send_signal(signal.SIGINT)
        stdout, stderr = matrix.communicate(timeout=60)
    assert matrix.returncode == 130, stdout + stderr
    assert stderr.strip().endswith("snapkv-conformance matrix: interrupted")
    markdown = out.with_suffix(".md").read_text()
    assert "against 2 port(s)" in markdown and "Interrupted: only the ports listed ran" in markdown
    assert "| one |" in markdown and "| two |" in markdown and "three" not in markdown
    assert "Interrupted" in out.with_suffix(".html").read_text()
    assert gone(hung)


def test_dev_zero_as_a_vector_is_one_line(tmp_path: Path) -> None:
    """Case 8 in matrix."""
    done = kit("matrix", "/dev/zero", "--adapter", f"ref={REFERENCE}", "--out",
               str(tmp_path / "m"), timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "/dev/zero: /: is a character device, not a regular file" in done.stderr

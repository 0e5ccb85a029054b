"""`snapkv-conformance fuzz` at the command line: a finding is never lost to a path it cannot
write.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from conformance import cli
from conformance.tools import fuzz
from tests.support.hostile import kit
from tests.support.runner_support import REFERENCE_ARGV, mutant_argv


def test_fuzz_refuses_a_save_path_that_is_a_file_before_fuzzing(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    argv = " ".join(REFERENCE_ARGV)
    assert cli.main(["fuzz", "--adapter", argv, "--save", str(blocker)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"--save {blocker}: exists and is not a directory" in captured.err


def test_fuzz_prints_the_vector_when_it_cannot_be_saved(monkeypatch, tmp_path, capsys):
    def full_disk(vector, directory):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fuzz, "save_vector", full_disk)
    argv = shlex.join(mutant_argv("ties-to-higher-position"))
    args = ["fuzz", "--adapter", argv, "--seed", "1", "--max-shrinks", "20"]
    assert cli.main([*args, "--save", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    text = captured.out.split("\n", 2)[2]  # after the banner and the difference line
    vector = json.loads(text)
    assert vector["format"] == "snapkv-vector/1"
    assert "cannot write the vector (printed above)" in captured.err


# -- against a hostile example database, and the seed that found a bug of the kit's own --------
REFERENCE = shlex.join(REFERENCE_ARGV)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_database_holding_a_special_file_is_one_line(tmp_path: Path, kind: str) -> None:
    """Case 12: a FIFO in ``--database`` used to hang past any timeout, a link to /dev/zero
    to end in a traceback; now one line names the entry, before the adapter starts."""
    database = tmp_path / "db"
    (database / "0123456789abcdef").mkdir(parents=True)
    entry = database / "0123456789abcdef" / "fedcba9876543210"
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to("/dev/zero")
    for protocol in ([], ["--protocol"]):
        done = kit("fuzz", *protocol, "--adapter", REFERENCE, "--database", str(database),
                   "--max-examples", "2", "--seed", "1", timeout=60)  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"snapkv-conformance fuzz: error: --database: {entry}: is a")
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_seed_that_drew_a_line_without_members_finds_no_difference() -> None:
    """Left-over 3, the probe itself: the reference against itself, seed 4242794193, used to
    die of ZeroDivisionError and exit 1 (a difference found, the port blamed)."""
    done = kit("fuzz", "--protocol", "--adapter", REFERENCE, "--seed", "4242794193",
               timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no difference in " in done.stdout

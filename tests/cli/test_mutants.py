"""`snapkv-conformance mutants` at the command line: its outputs checked before the replay."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance import cli
from tests.support.hostile import kit


def test_mutants_checks_its_outputs_before_the_replay(tmp_path, suite_dir, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("no generated block here\n")
    args = ["mutants", str(suite_dir), "--mutant", "running-sum"]
    assert cli.main([*args, "--json", str(tmp_path)]) == 2
    assert cli.main([*args, "--update-readme", str(readme)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no kill matrix: nothing was replayed
    assert f"--json {tmp_path}: is a directory" in captured.err
    assert f"--update-readme {readme}: no <!-- mutants:begin -->" in captured.err
    assert readme.read_text() == "no generated block here\n"


# -- against hostile files: one line naming the file, no hang, colliding outputs refused -------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_update_readme_naming_a_special_file_is_one_line(tmp_path: Path, kind: str) -> None:
    """Case 13: a FIFO used to hang, /dev/zero to end in a traceback."""
    readme = tmp_path / "README.md"
    if kind == "fifo":
        os.mkfifo(readme)
    else:
        readme.symlink_to("/dev/zero")
    done = kit("mutants", "--mutant", "running-sum", "--update-readme", str(readme), timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(
        f"snapkv-conformance mutants: error: --update-readme {readme}: is a"
    )


def test_dev_zero_as_a_vector_is_one_line() -> None:
    """Case 8 in mutants."""
    done = kit("mutants", "/dev/zero", "--mutant", "running-sum", timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "/dev/zero: /: is a character device, not a regular file" in done.stderr


def test_json_and_update_readme_naming_one_file_are_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("<!-- mutants:begin -->\n<!-- mutants:end -->\n")
    done = kit("mutants", "--mutant", "running-sum", "--update-readme", str(readme),
               "--json", str(readme), timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert "name the same file" in done.stderr
    assert readme.read_text() == "<!-- mutants:begin -->\n<!-- mutants:end -->\n"

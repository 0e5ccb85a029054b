"""`snapkv-conformance fuzz` at the command line: a finding is never lost to a path it cannot
write.
"""

from __future__ import annotations

import json
import shlex

from conformance import cli
from conformance.tools import fuzz
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

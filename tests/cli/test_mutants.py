"""`snapkv-conformance mutants` at the command line: its outputs checked before the replay."""

from __future__ import annotations

from conformance import cli


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

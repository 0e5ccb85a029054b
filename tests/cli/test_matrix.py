"""`snapkv-conformance matrix` at the command line: its outputs checked before the ports run, the
summary printed when writing fails, and an unknown option reported with its usage.
"""

from __future__ import annotations

import pytest

from conformance import cli
from tests.support.runner_support import REFERENCE_ARGV


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

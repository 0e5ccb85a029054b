"""The dispatcher's promises for every subcommand: the kit's own fault never looks like a
port's failure, and a stage's one-line error is one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.cli.commands import validate
from conformance.spec.errors import EXIT_INTERNAL, VectorError


def test_a_bug_of_the_kit_exits_70_with_one_line_and_the_traceback_saved(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Left-over 3: a bug (fuzz's ZeroDivisionError was one) used to end in a traceback and
    exit 1, the status that means a port failed: CI blamed the port for the kit's bug."""

    def buggy(args: object) -> int:
        members: list[str] = []
        return 1 % len(members)

    monkeypatch.setattr(validate, "run", buggy)
    assert main(["validate"]) == EXIT_INTERNAL == 70
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1 and "Traceback" not in said.err
    assert said.err.startswith(
        "snapkv-conformance validate: internal error: ZeroDivisionError: integer modulo by "
        "zero: this is a bug in snapkv-conformance, not in the port under test"
    )
    saved = Path(re.search(r"saved in (\S+);", said.err).group(1))  # type: ignore[union-attr]
    try:
        assert "1 % len(members)" in saved.read_text()
    finally:
        saved.unlink()


def test_a_stage_s_error_let_through_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def refusing(args: object) -> int:
        raise VectorError("v.json", "/calls/0", "not a call")

    monkeypatch.setattr(validate, "run", refusing)
    assert main(["validate"]) == 2
    assert (
        capsys.readouterr().err
        == "snapkv-conformance validate: error: v.json: /calls/0: not a call\n"
    )

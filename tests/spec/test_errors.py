"""Every stage's error derives from KitError and is named in its map; one-line errors."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from conformance.report.outputs import OutputError
from conformance.spec import errors
from conformance.spec.errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_STATUSES,
    EXIT_USAGE,
    GenerationError,
    KitError,
    VectorError,
    print_error,
    report_internal_error,
)
from conformance.suite.discovery import KnownFailuresError
from conformance.suite.protocol_checks import CheckError
from conformance.transport.failures import AdapterStartError
from conformance.transport.process import CommandError, StartError


@pytest.mark.parametrize(
    "error",
    [
        VectorError,
        KnownFailuresError,
        GenerationError,
        AdapterStartError,
        OutputError,
        CommandError,
        StartError,
        CheckError,
    ],
)
def test_each_stage_error_is_a_kit_error_named_in_the_map(error):
    assert issubclass(error, KitError)
    assert f":class:`{error.__module__}.{error.__name__}`" in errors.__doc__


def test_an_error_is_one_escaped_line_and_exit_2():
    stream = io.StringIO()
    assert print_error("run", "bad \x1b[2J name", stream) == EXIT_USAGE
    assert stream.getvalue() == "snapkv-conformance run: error: bad \\e[2J name\n"


def test_an_error_on_a_closed_stream_does_not_raise():
    stream = io.StringIO()
    stream.close()
    assert print_error("run", "lost", stream) == EXIT_USAGE


# -- the exit statuses, and the kit's own faults never reported as a port's --------------------
def test_an_internal_error_is_one_line_its_own_status_and_a_saved_traceback() -> None:
    """A bug of the kit exits with a status that is neither a port's failure (1) nor a usage
    error (2), says in one line that the kit is at fault, and saves the whole traceback."""

    def buggy() -> int:
        members: list[str] = []
        return 3 % len(members)

    try:
        buggy()
    except ZeroDivisionError as error:
        stream = io.StringIO()
        status = report_internal_error("fuzz", error, ["fuzz", "--protocol"], stream)
    assert status == EXIT_INTERNAL and status not in (EXIT_FAILED, EXIT_USAGE, 0)
    line = stream.getvalue()
    assert line.count("\n") == 1 and line.startswith(
        "snapkv-conformance fuzz: internal error: ZeroDivisionError: integer modulo by zero: "
        "this is a bug in snapkv-conformance, not in the port under test; the full traceback "
        "is saved in "
    )
    saved = Path(re.search(r"saved in (\S+);", line).group(1))  # type: ignore[union-attr]
    try:
        text = saved.read_text()
        assert "Traceback (most recent call last)" in text and "in buggy" in text
        assert "3 % len(members)" in text and "arguments: fuzz --protocol" in text
    finally:
        saved.unlink()


def test_the_exit_status_table_documents_every_status() -> None:
    """The module docstring's table (which the CLI reference is generated from) names every
    status constant with its value, the kit's fault included."""
    table = errors.__doc__ or ""
    assert EXIT_STATUSES["EXIT_INTERNAL"] == EXIT_INTERNAL == 70
    for name, value in EXIT_STATUSES.items():
        assert re.search(rf"^{value}\s+:data:`{name}`", table, re.MULTILINE), name
    assert len(set(EXIT_STATUSES.values())) == len(EXIT_STATUSES)


def test_a_vector_error_s_reason_is_capped() -> None:
    """A schema's message quoting a million names stays a line a person can read."""
    names = ", ".join(f"'x{index}'" for index in range(1_000_000))
    error = VectorError("v.json", "/params", f"Additional properties ({names}) were unexpected")
    assert len(str(error)) < 1_200 and "more characters)" in str(error)

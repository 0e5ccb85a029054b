"""Every stage's error derives from KitError and is named in its map; one-line errors."""

from __future__ import annotations

import io

import pytest

from conformance.report.outputs import OutputError
from conformance.spec import errors
from conformance.spec.errors import EXIT_USAGE, GenerationError, KitError, VectorError, print_error
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

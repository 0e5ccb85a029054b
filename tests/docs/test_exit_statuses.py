"""The exit statuses are read from the constants of conformance/spec/errors.py."""

from __future__ import annotations

from pathlib import Path

from conformance.docs import exit_statuses
from conformance.spec import errors


def test_every_exit_constant_is_in_the_table_with_its_value() -> None:
    table = exit_statuses.table(Path("."))
    constants = {
        name: value
        for name, value in vars(errors).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    assert constants == errors.EXIT_STATUSES  # the module's own list of them
    for name, value in constants.items():
        assert f"| {value} | `{name}` |" in table


def test_only_plain_top_level_constants_count_with_their_comments() -> None:
    source = (
        "EXIT_A = 3  # the a case\n"
        "EXIT_B = 4\n"
        "EXIT_C = EXIT_A + 1  # an expression\n"
        "OTHER = 5  # not an exit status\n"
        "def f():\n"
        "    EXIT_D = 6  # inside a function\n"
    )
    assert exit_statuses.statuses(source) == [(3, "EXIT_A", "the a case"), (4, "EXIT_B", "")]

"""The examples cut the triage section out of run's output as run prints it."""

from __future__ import annotations

from conformance.docs import examples


def test_the_triage_section_runs_from_its_first_line_to_the_blank_line() -> None:
    printed = "FAIL a: ...\n    expected: [1]\n\ntriage: likely cause: x\n  - x: y\n\nadapter: p\n"
    assert examples.triage_section(printed) == "triage: likely cause: x\n  - x: y"


def test_the_command_is_the_one_a_porter_types_from_the_checkout() -> None:
    assert examples.command("kvpress") == (
        'snapkv-conformance run --adapter "python3 tests/heldout/real_ports.py kvpress"'
    )

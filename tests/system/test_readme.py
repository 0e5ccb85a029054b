"""README's counts are the kit's: each one a reader can check is derived here from the thing
it counts, so that README cannot drift from the suite, the catalogue or the commands.

Benchmark tables are not checked here: each states the day and the suite it was measured on,
and the script that printed it (its figures are re-measured, not derived).
"""

from __future__ import annotations

import re

from conformance import mutants
from conformance.spec import resources
from conformance.suite.stream import plan_suite
from conformance.tools.generate.generator import is_recorded
from tests.support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _suite() -> tuple[int, int, int]:
    plan = plan_suite([resources.suite_dir()])
    recorded = sum(is_recorded(entry.id) for entry in plan.vectors)
    return len(plan.vectors), len(plan.checks), recorded


def test_the_opening_and_the_kit_table_count_the_committed_suite() -> None:
    vectors, checks, recorded = _suite()
    opening = f"`{vectors + checks} passed, 0 failed` ({vectors} vectors, {checks} protocol checks)"
    assert opening in README
    assert f"| {vectors} vectors ({recorded} of them recorded from a real model)" in README
    assert f"and {checks} protocol checks under `vectors/protocol/`" in README


def test_the_kit_table_counts_the_catalogued_mistakes() -> None:
    count = len(mutants.names())
    row = re.search(r"^\| the mutants \| .*? \| (\d+) plausible wrong ports", README, re.M)
    assert row is not None and int(row[1]) == count, (row and row[1], count)


def test_the_test_command_s_time_is_the_script_s() -> None:
    """The test command's wall time is quoted with the script that measures it."""
    assert "benchmarks/readme_commands.py" in README
    assert "about 6 minutes" not in README

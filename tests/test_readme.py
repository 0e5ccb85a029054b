"""README and the docs' counts are the kit's: each one a reader can check is derived here from
the thing it counts, so that neither can drift from the suite, the catalogue or the commands.
README stays a front door: at most 200 lines, its two fresh-machine commands first, and every
link it holds leads to a file and heading that exist (the site's pages are checked by
``mkdocs build --strict``; README is not one of them).

Benchmark tables are not checked here: each states the day and the suite it was measured on,
and the script that printed it (its figures are re-measured, not derived).
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance import mutants
from conformance.spec import resources
from conformance.suite.stream import plan_suite
from conformance.tools.generate.generator import is_recorded

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: Where the README's opening lands in the site, and the kit's table.
GETTING_STARTED = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
KIT = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
MAX_LINES = 200
_FENCED = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")


def _suite() -> tuple[int, int, int]:
    plan = plan_suite([resources.suite_dir()])
    recorded = sum(is_recorded(entry.id) for entry in plan.vectors)
    return len(plan.vectors), len(plan.checks), recorded


def test_the_opening_and_the_kit_table_count_the_committed_suite() -> None:
    vectors, checks, recorded = _suite()
    opening = f"`{vectors + checks} passed, 0 failed` ({vectors} vectors, {checks} protocol checks)"
    assert opening in README
    assert opening in GETTING_STARTED
    assert f"| {vectors} vectors ({recorded} of them recorded from a real model)" in KIT
    assert f"and {checks} protocol checks under `vectors/protocol/`" in KIT


def test_the_kit_table_counts_the_catalogued_mistakes() -> None:
    count = len(mutants.names())
    row = re.search(r"^\| the mutants \| .*? \| (\d+) plausible wrong ports", KIT, re.M)
    assert row is not None and int(row[1]) == count, (row and row[1], count)


def test_the_test_command_s_time_is_the_script_s() -> None:
    """The test command's wall time is quoted with the script that measures it."""
    assert "benchmarks/readme_commands.py" in README
    assert "about 6 minutes" not in README


def test_readme_is_a_front_door_with_its_two_commands_first() -> None:
    assert len(README.splitlines()) <= MAX_LINES
    language, body = _FENCED.findall(README)[0]
    assert language == "sh"
    commands = [line for line in body.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("pip install -e . && snapkv-conformance run")
    assert "python3 -m pytest" in commands[1]


def test_getting_started_shows_readme_s_commands_as_they_are() -> None:
    """The page repeats README's block; both change together or the page is stale."""
    assert _FENCED.findall(GETTING_STARTED)[0] == _FENCED.findall(README)[0]


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and the site (``mkdocs.yml``'s slugify) both make it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    outside_code = _FENCED.sub("", markdown)
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", outside_code, re.M)}


def test_every_link_in_readme_leads_to_a_file_and_heading_that_exist() -> None:
    assert _slug("Campaigns over CI: `--database` and `--shard`") == (
        "campaigns-over-ci---database-and---shard"
    )
    broken = []
    for target in _LINK.findall(_FENCED.sub("", README)):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else ROOT / "README.md"
        found = file.exists() and (
            not anchor or anchor in _anchors(file.read_text(encoding="utf-8"))
        )
        if not found:
            broken.append(target)
    assert broken == []

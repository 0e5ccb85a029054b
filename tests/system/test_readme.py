"""README and the docs' counts are the kit's: each one a reader can check is derived here from
the thing it counts, so that neither can drift from the suite, the catalogue or the commands.
README stays a front door: at most 200 lines, its two fresh-machine commands first, and every
link it holds leads to a file and heading that exist (the site's pages are checked by
``mkdocs build --strict``; README is not one of them).

Benchmark tables are not checked here: each states the day and the suite it was measured on,
and the script that printed it (its figures are re-measured, not derived).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conformance import mutants
from conformance.spec import resources
from conformance.suite.stream import plan_suite
from conformance.tools.generate.generator import is_recorded
from tests.support.paths import ROOT

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
    assert opening in README, f"README.md's opening should quote {opening}"
    assert opening in GETTING_STARTED, f"docs/getting-started.md should quote {opening}"
    assert f"| {vectors} vectors ({recorded} of them recorded from a real model)" in KIT
    assert f"and {checks} protocol checks under `vectors/protocol/`" in KIT


def _readme_commands() -> ModuleType:
    """benchmarks/readme_commands.py, which pastes its run into docs/getting-started.md."""
    path = ROOT / "benchmarks" / "readme_commands.py"
    spec = importlib.util.spec_from_file_location("readme_commands", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFRESH = "refresh with: python3 benchmarks/readme_commands.py --record"


def test_the_pasted_run_of_readme_s_commands_counts_the_committed_suite() -> None:
    """The first command's last line, as the pasted run printed it, is what the opening
    quotes: a vector added or removed since the run shows here, before CI's --check."""
    script = _readme_commands()
    vectors, checks, _ = _suite()
    first, second = script.pasted_lasts()
    assert script.counts(first) == {"passed": vectors + checks, "failed": 0}, REFRESH
    # Whether the pasted run passed is .ci/run's `readme_commands.py --check` (against a run of
    # its own); held here too, --record could never paste over a failing run's figures.
    assert script.counts(second)["passed"] > 0
    ran = re.findall(r"^\[1/1\] (.*)$", script.pasted(), re.M)
    assert ran == script.readme_commands(), REFRESH


def _page(tmp_path: Path, lasts: tuple[str, str]) -> Path:
    page = tmp_path / "page.md"
    script = _readme_commands()
    run = [f"[1/1] cmd\n    exit 0 after 9 s: {last}" for last in lasts]
    page.write_text(f"prose\n{script.BEGIN}\n{script.block(run)}\n{script.END}\nmore\n")
    return page


def test_the_check_compares_counts_and_not_times(tmp_path: Path) -> None:
    script = _readme_commands()
    page = _page(tmp_path, ("223 passed, 0 failed", "1816 passed, 11 skipped in 78.94s"))
    same = ["223 passed, 0 failed", "1816 passed, 11 skipped in 120.00s (0:02:00)"]
    assert script.differences(same, page) == []
    moved = ["223 passed, 0 failed", "1830 passed, 11 skipped in 80.00s"]
    [line] = script.differences(moved, page)
    assert "'1816 passed, 11 skipped in 78.94s'" in line
    assert "'1830 passed, 11 skipped in 80.00s'" in line
    assert script.differences(["224 passed, 0 failed", same[1]], page) != []
    assert script.differences(["223 passed, 1 failed", same[1]], page) != []


def test_recording_rewrites_only_the_block(tmp_path: Path) -> None:
    script = _readme_commands()
    page = _page(tmp_path, ("1 passed, 0 failed", "2 passed"))
    script.record(["[1/1] cmd", "    exit 0 after 5 s: 7 passed, 0 failed"], page)
    text = page.read_text()
    assert text.startswith(f"prose\n{script.BEGIN}\n```console\n")
    assert text.endswith(f"```\n{script.END}\nmore\n")
    assert script.pasted_lasts(page) == ["7 passed, 0 failed"]


def test_a_page_without_the_block_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("no block\n")
    with pytest.raises(SystemExit, match="no <!-- docs:readme-commands:begin -->"):
        _readme_commands().pasted(page)


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


def test_record_then_check_end_to_end_with_the_commands_stubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--record pastes what the run printed; --check then passes on the same counts and fails,
    naming --record, on others."""
    script = _readme_commands()
    page = _page(tmp_path, ("1 passed, 0 failed", "2 passed"))
    lasts = iter(["223 passed, 0 failed", "1816 passed, 11 skipped in 80.00s"] * 2)
    monkeypatch.setattr(script, "PAGE", page)
    monkeypatch.setattr(script, "readme_commands", lambda: ["first", "second"])
    monkeypatch.setattr(script.subprocess, "run", lambda *args, **kwargs: None)
    monkeypatch.setattr(script, "run_in_venv", lambda command, venv, env: (0, 3.0, next(lasts)))
    for flag in ("--record", "--check"):
        monkeypatch.setattr(
            sys, "argv", ["readme_commands.py", flag, "--venv", str(tmp_path / flag)]
        )
        assert script.main() == 0
    assert script.pasted_lasts(page) == [
        "223 passed, 0 failed",
        "1816 passed, 11 skipped in 80.00s",
    ]
    assert "[1/1] second\n    exit 0 after 3 s: 1816 passed" in script.pasted(page)
    capsys.readouterr()
    monkeypatch.setattr(script, "run_in_venv", lambda command, venv, env: (0, 3.0, "9 passed"))
    monkeypatch.setattr(
        sys, "argv", ["readme_commands.py", "--check", "--venv", str(tmp_path / "v")]
    )
    assert script.main() == 1
    assert capsys.readouterr().out.endswith(
        "refresh the docs' figures with: python3 benchmarks/readme_commands.py --record\n"
    )

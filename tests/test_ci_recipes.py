"""The CI recipes of docs/ci run as written: their shell steps, in order, with the kit
installed from a wheel into a fresh virtual environment and the Go template port as the port.

Only ``SNAPKV_KIT`` is changed (the recipes' git URL is a placeholder): it names the wheel
built from this checkout. Creating the virtual environment installs the kit's dependencies
from the package index, as the recipes do. Without go and make the tests skip, or fail when
``CI`` is set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.toolchains import build_lock, require_tools
from tests.support.wheel import build_wheel

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "ci"
COMMITTED = len(list((ROOT / "vectors").rglob("*.json")))


def github_steps(text: str) -> tuple[dict[str, str], list[str]]:
    """The job's env and its ``run:`` commands, in order."""
    env = dict(re.findall(r'^      ([A-Z_]+): "(.*)"$', text, re.M))
    return env, re.findall(r"^      - run: (.+)$", text, re.M)


def gitlab_steps(text: str) -> tuple[dict[str, str], list[str]]:
    """The job's variables and its ``before_script`` then ``script`` commands."""
    env = dict(re.findall(r'^    ([A-Z_]+): "(.*)"$', text, re.M))
    commands = []
    for section in ("before_script", "script"):
        block = re.search(rf"^  {section}:\n((?:    - .+\n)+)", text, re.M)
        assert block is not None, section
        commands += re.findall(r"^    - (.+)$", block[1], re.M)
    return env, commands


RECIPE_PARSERS = {"github-actions.yml": github_steps, "gitlab-ci.yml": gitlab_steps}


@pytest.fixture(scope="module")
def fresh_kit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A wheel built from this checkout, and a fresh virtual environment's bin directory."""
    require_tools("go", "make")
    base = tmp_path_factory.mktemp("ci")
    wheel = build_wheel(base)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    return wheel, base / "venv" / "bin"


def run_recipe(
    name: str, kit: tuple[Path, Path], workdir: Path, **overrides: str
) -> subprocess.CompletedProcess[str]:
    """Run the recipe's commands with bash, stopping at the first that fails."""
    env_values, commands = RECIPE_PARSERS[name]((RECIPES / name).read_text())
    assert set(env_values) == {"SNAPKV_KIT", "BUILD", "ADAPTER", "KNOWN_FAILURES"}, env_values
    assert len(commands) == 3 and "pip install" in commands[0], commands
    wheel, venv_bin = kit
    env = dict(os.environ, **env_values)
    env.update(SNAPKV_KIT=str(wheel), KNOWN_FAILURES=str(workdir / "known-failures.txt"))
    env.update(overrides)
    env["PATH"] = f"{venv_bin}{os.pathsep}{os.environ['PATH']}"
    env.pop("PYTHONPATH", None)
    # The recipes run from the port's checkout: here a directory whose adapters/ is this
    # repository's, so the Go template is the port and the reports stay in workdir.
    (workdir / "adapters").unlink(missing_ok=True)
    (workdir / "adapters").symlink_to(ROOT / "adapters")
    with build_lock("go"):
        return subprocess.run(
            ["bash", "-c", "set -e\n" + "\n".join(commands)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )


@pytest.mark.parametrize("name", sorted(RECIPE_PARSERS))
def test_recipe_runs_green_with_a_junit_report(
    name: str, fresh_kit: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "known-failures.txt").write_text("# none\n")
    done = run_recipe(name, fresh_kit, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith(f"{COMMITTED} passed, 0 failed"), done.stdout[-500:]
    assert "snapkv-go" in done.stdout
    cases = ET.parse(tmp_path / "conformance-junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == COMMITTED


def test_exit_codes_as_documented(fresh_kit: tuple[Path, Path], tmp_path: Path) -> None:
    """1 for a failing port, 0 once its failures are listed, 1 when a listed one passes, 2 for
    an adapter that cannot start (the recipes' comments)."""
    known = tmp_path / "known-failures.txt"
    mutant = "snapkv-conformance adapter --mutant ties-to-higher-position"
    known.write_text("")
    failing = run_recipe("github-actions.yml", fresh_kit, tmp_path, ADAPTER=mutant)
    assert failing.returncode == 1, failing.stdout[-2000:] + failing.stderr[-2000:]
    ids = re.findall(r"^FAIL (\S+):", failing.stdout, re.M)
    assert "ties/lower-position-first" in ids, failing.stdout[-2000:]

    known.write_text("\n".join(ids) + "\n")
    listed = run_recipe("github-actions.yml", fresh_kit, tmp_path, ADAPTER=mutant)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]

    stale = run_recipe("github-actions.yml", fresh_kit, tmp_path)  # the Go port passes all
    assert stale.returncode == 1, stale.stdout[-2000:]

    missing = run_recipe("gitlab-ci.yml", fresh_kit, tmp_path, ADAPTER="/nonexistent/adapter")
    assert missing.returncode == 2, missing.stdout[-2000:] + missing.stderr[-2000:]

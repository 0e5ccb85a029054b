"""The CI recipes of docs/ci run as written, as a port's first run would: in a repository of
its own (a fresh git repository holding a small Go port, a copy of the template), with no
known-failures file, the kit installed from a wheel into a fresh virtual environment.

Only ``SNAPKV_KIT`` is changed (the recipes' git URL is a placeholder): it names the wheel
built from this checkout. The image or runner set-up (``actions/setup-python``, the GitLab
image) is what this machine already has; the recipes' own commands, including the line that
installs Python where an image has none, run exactly as written. Creating the virtual
environment installs the kit's dependencies from the package index, as the recipes do.
Without go and make the tests skip, or fail when ``CI`` is set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.toolchains import require_tools
from tests.support.wheel import build_wheel

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

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


@pytest.fixture
def port_repo(tmp_path: Path) -> Path:
    """A port's repository on its first CI run: a Go port under adapters/go (the template's
    sources, not its build), committed, and nothing else."""
    repo = tmp_path / "my-port"
    shutil.copytree(
        ROOT / "adapters" / "go", repo / "adapters" / "go", ignore=shutil.ignore_patterns("build")
    )
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        [
            "git",
            "-c",
            "user.name=port",
            "-c",
            "user.email=port@example.org",
            "commit",
            "-qm",
            "port",
        ],
    ):
        subprocess.run(command, cwd=repo, check=True, capture_output=True)
    return repo


def run_recipe(
    name: str, kit: tuple[Path, Path], workdir: Path, **overrides: str
) -> subprocess.CompletedProcess[str]:
    """Run the recipe's commands with bash in ``workdir``, stopping at the first that fails."""
    env_values, commands = RECIPE_PARSERS[name]((RECIPES / name).read_text())
    assert set(env_values) == {"SNAPKV_KIT", "BUILD", "ADAPTER", "KNOWN_FAILURES"}, env_values
    assert any("pip install" in command for command in commands), commands
    wheel, venv_bin = kit
    env = dict(os.environ, **env_values)
    env.update(SNAPKV_KIT=str(wheel))
    env.update(overrides)
    env["PATH"] = f"{venv_bin}{os.pathsep}{os.environ['PATH']}"
    for variable in ("PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(variable, None)
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
def test_a_port_s_first_run_is_green_with_a_junit_report(
    name: str, fresh_kit: tuple[Path, Path], port_repo: Path
) -> None:
    """No known-failures file yet: the run says so and allows no failure; the Go port passes
    everything and the JUnit file has one case per vector and check."""
    done = run_recipe(name, fresh_kit, port_repo)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith(f"{COMMITTED} passed, 0 failed"), done.stdout[-500:]
    assert "snapkv-go" in done.stdout
    assert "conformance-known-failures.txt does not exist yet" in done.stderr
    cases = ET.parse(port_repo / "conformance-junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == COMMITTED


def test_exit_codes_as_documented(fresh_kit: tuple[Path, Path], port_repo: Path) -> None:
    """1 for a failing port, 0 once its failures are listed, 1 when a listed one passes, 2 for
    an adapter that cannot start (the recipes' comments); the JUnit file is there each time."""
    junit = port_repo / "conformance-junit.xml"
    known = port_repo / "conformance-known-failures.txt"
    mutant = "snapkv-conformance adapter --mutant ties-to-higher-position"
    failing = run_recipe("github-actions.yml", fresh_kit, port_repo, ADAPTER=mutant)
    assert failing.returncode == 1, failing.stdout[-2000:] + failing.stderr[-2000:]
    ids = re.findall(r"^FAIL (\S+):", failing.stdout, re.M)
    assert "ties/lower-position-first" in ids, failing.stdout[-2000:]
    assert junit.is_file()

    known.write_text("\n".join(ids) + "\n")
    listed = run_recipe("github-actions.yml", fresh_kit, port_repo, ADAPTER=mutant)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]

    stale = run_recipe("github-actions.yml", fresh_kit, port_repo)  # the Go port passes all
    assert stale.returncode == 1, stale.stdout[-2000:]

    junit.unlink()
    missing = run_recipe("gitlab-ci.yml", fresh_kit, port_repo, ADAPTER="/nonexistent/adapter")
    assert missing.returncode == 2, missing.stdout[-2000:] + missing.stderr[-2000:]
    (error,) = ET.parse(junit).getroot().iter("error")
    assert "cannot run the adapter /nonexistent/adapter" in error.get("message", "")


def test_the_gitlab_image_has_the_default_build_s_toolchain() -> None:
    """The GitLab job runs in one image: it must be the default build's (Go); Python, which
    golang images lack, is installed by the recipe's first line when missing."""
    text = (RECIPES / "gitlab-ci.yml").read_text()
    env_values, commands = gitlab_steps(text)
    assert env_values["BUILD"].startswith("make -C adapters/go")
    assert re.search(r"^  image: golang:", text, re.M), "the image must carry Go"
    assert "python3-venv" in commands[0] and commands[0].startswith("python3 -m venv --help")

"""The install README.md gives: a wheel built from the checkout works from any directory, and
building it leaves ``git status`` as it was.

The wheel is built without build isolation and installed with ``--no-deps`` into a target
directory, so the test needs no package index (the dependencies are the test environment's
own). ``.ci/run`` does the same with a fresh virtual environment and a real install.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.wheel import build_wheel

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow


#: What building from a checkout writes into it (setuptools' build tree and metadata).
BUILD_PRODUCTS = ("build", "snapkv_conformance.egg-info")


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kit built into a wheel from this checkout and unpacked into a directory of its own."""
    if shutil.which("git") is None or _git("rev-parse").returncode != 0:
        pytest.skip("not a git checkout")
    base = tmp_path_factory.mktemp("install")
    # A file left in the build tree by an earlier build (a vector since removed) must not
    # ride along in the wheel.
    stale = ROOT / "build" / "lib" / "conformance" / "data" / "vectors" / "gone" / "stale.json"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{}")
    wheel = build_wheel(base / "dist")
    # Building wrote its products into the checkout; git status must not show them.
    assert all((ROOT / name).is_dir() for name in BUILD_PRODUCTS), list(ROOT.iterdir())
    shown = _git("status", "--porcelain", "--untracked-files=all", "--", *BUILD_PRODUCTS)
    assert shown.returncode == 0 and shown.stdout == "", shown.stdout[:2000]
    assert all(_git("check-ignore", "-q", name).returncode == 0 for name in BUILD_PRODUCTS)
    target = base / "site"
    pip_install = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet"]
    subprocess.run(
        [*pip_install, "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


def _kit(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(target))
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_wheel_is_what_runs(installed: Path, tmp_path: Path) -> None:
    """The unpacked wheel, not the checkout, is imported (an editable install would hide a
    wheel that lacks the suite)."""
    done = _kit(installed, tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    env = dict(os.environ, PYTHONPATH=str(installed))
    where = subprocess.run(
        [sys.executable, "-c", "import conformance; print(conformance.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(installed), where


def test_run_validate_and_fuzz_from_another_directory(installed: Path, tmp_path: Path) -> None:
    run = _kit(installed, tmp_path, "run")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.rstrip().endswith(" 0 failed"), run.stdout[-500:]
    passed = int(run.stdout.rstrip().splitlines()[-1].split()[0])
    committed = len(list((ROOT / "vectors").rglob("*.json")))
    assert passed == committed, (passed, committed)
    assert not list(installed.rglob("stale.json"))

    validate = _kit(installed, tmp_path, "validate")
    assert validate.returncode == 0, validate.stdout[-2000:] + validate.stderr[-2000:]

    reference = f"{shlex.quote(sys.executable)} -m conformance adapter"
    fuzz = _kit(installed, tmp_path, "fuzz", "--adapter", reference, "--max-examples", "20")
    assert fuzz.returncode == 0, fuzz.stdout[-2000:] + fuzz.stderr[-2000:]
    assert not (tmp_path / "snapkv-fuzz-failures").exists()

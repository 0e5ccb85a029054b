"""The CI recipes of docs/ci run as written, as a port's first, second and third runs would: in
a repository of its own (a fresh git repository holding a small Go port, a copy of the
template), with no known-failures file at first, the kit installed from a wheel into a fresh
virtual environment.

Only ``SNAPKV_KIT`` is changed (the recipes' git URL is a placeholder): it names the wheel
built from this checkout. The image or runner set-up (``actions/setup-python``, the GitLab
image) is what this machine already has; the recipes' own commands, including the line that
installs Python where an image has none, run exactly as written, under the CI's rules for
which run when (:func:`run_recipe`: GitHub's ``if:`` conditions, GitLab's ``after_script``
and ``artifacts``), with the variables the CI sets (a run's URL). Creating the virtual
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
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance.suite.discovery import read_known_failures
from tests.support.paths import ROOT
from tests.support.toolchains import require_tools
from tests.support.wheel import build_wheel

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

RECIPES = ROOT / "docs" / "ci"
COMMITTED = len(list((ROOT / "vectors").rglob("*.json")))


@dataclass(frozen=True)
class Step:
    """A step of a CI job: a shell command, or an action (``uses``) with its inputs; ``when``
    is GitHub's ``if:`` (``success()`` unless it says otherwise)."""

    run: str | None = None
    uses: str | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    when: str = "success()"


def github_steps(text: str) -> tuple[dict[str, str], list[Step]]:
    """The job's env and its steps, in order (the YAML the recipe holds: a step opens with
    ``      - ``, its keys are indented by eight spaces, the inputs under ``with:`` by ten)."""
    env = dict(re.findall(r'^      ([A-Z_]+): "(.*)"$', text, re.M))
    block = text.split("\n    steps:\n", 1)[1]
    steps = []
    for chunk in re.split(r"^      - ", block, flags=re.M)[1:]:
        keys = dict(re.findall(r"^(?:        )?(run|uses|if): (.+)$", chunk, re.M))
        inputs = dict(re.findall(r"^          ([\w-]+): (.+)$", chunk, re.M))
        steps.append(Step(keys.get("run"), keys.get("uses"), inputs, keys.get("if", "success()")))
    return env, steps


def gitlab_steps(text: str) -> tuple[dict[str, str], list[Step]]:
    """The job's variables and its ``before_script`` then ``script`` commands, then its
    ``after_script`` (``when``: ``always()``) and its artifacts (``uses``: ``artifacts``, the
    inputs ``when``, each path and the JUnit report)."""
    env = dict(re.findall(r'^    ([A-Z_]+): "(.*)"$', text, re.M))
    steps = []
    for section in ("before_script", "script", "after_script"):
        block = re.search(rf"^  {section}:\n((?:    - .+\n)+)", text, re.M)
        assert block is not None, section
        when = "always()" if section == "after_script" else "success()"
        steps += [Step(run, when=when) for run in re.findall(r"^    - (.+)$", block[1], re.M)]
    artifacts = re.search(r"^  artifacts:\n((?:    .+\n)+)", text, re.M)
    assert artifacts is not None
    inputs = {f"path {path}": path for path in re.findall(r"^      - (.+)$", artifacts[1], re.M)}
    inputs.update(re.findall(r"^ {4,6}(when|junit|expose_as): (.+)$", artifacts[1], re.M))
    return env, [*steps, Step(uses="artifacts", inputs=inputs)]


RECIPE_PARSERS = {"github-actions.yml": github_steps, "gitlab-ci.yml": gitlab_steps}
#: What each CI sets that a recipe's log line names: the run's or the job's URL.
CI_VARIABLES = {
    "github-actions.yml": {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "owner/my-port",
        "GITHUB_RUN_ID": "7",
    },
    "gitlab-ci.yml": {"CI_JOB_URL": "https://gitlab.example/owner/my-port/-/jobs/7"},
}
#: The line a red run's log gives the maintainer, as each recipe writes it once expanded.
COMMIT_LINES = {
    "github-actions.yml": "::notice title=conformance known failures::to accept this run's "
    "failures, commit the file of the artifact conformance-known-failures "
    "(https://github.com/owner/my-port/actions/runs/7) as conformance-known-failures.txt",
    "gitlab-ci.yml": "conformance known failures - to accept this run's failures, commit "
    "https://gitlab.example/owner/my-port/-/jobs/7/artifacts/raw/conformance-known-failures.txt "
    "as conformance-known-failures.txt",
}


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


@dataclass
class RecipeRun:
    """One CI job: its status (the first failing command's, else 0), its log, and the files
    its artifacts keep (by artifact name on GitHub, by path on GitLab, and ``junit``)."""

    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    artifacts: dict[str, Path] = field(default_factory=dict)

    def commit_lines(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if "to accept this run's" in line]

    def kit_output(self) -> str:
        """What ``snapkv-conformance run`` printed on stdout: its FAIL lines to its count."""
        summary = r"^(?:FAIL |adapter: ).*?^\d+ passed, \d+ failed$"
        found = re.search(summary, self.stdout, re.M | re.S)
        assert found is not None, self.stdout[-3000:]
        return found.group()


def run_recipe(name: str, kit: tuple[Path, Path], workdir: Path, **overrides: str) -> RecipeRun:
    """Run the recipe's job in ``workdir`` as its CI would: GitHub runs each step in a bash of
    its own (``bash -e``), a step only when its ``if:`` holds (``success()`` while nothing
    failed, ``failure()`` once something did, ``always()``), and uploads an artifact's file
    when its step runs; GitLab runs ``before_script`` and ``script`` in one shell, stopping at
    the first failure, then ``after_script`` in another with ``CI_JOB_STATUS`` set, and keeps
    its artifacts' paths when ``when:`` allows."""
    env_values, steps = RECIPE_PARSERS[name]((RECIPES / name).read_text())
    assert set(env_values) == {"SNAPKV_KIT", "BUILD", "ADAPTER", "KNOWN_FAILURES"}, env_values
    assert any("pip install" in (step.run or "") for step in steps), steps
    wheel, venv_bin = kit
    env = dict(os.environ, **env_values, **CI_VARIABLES[name])
    env.update(SNAPKV_KIT=str(wheel))
    env.update(overrides)
    env["PATH"] = f"{venv_bin}{os.pathsep}{os.environ['PATH']}"
    for variable in ("PYTHONPATH", "VIRTUAL_ENV", "CI_JOB_STATUS"):
        env.pop(variable, None)
    job = RecipeRun()

    def shell(script: str) -> int:
        done = subprocess.run(
            ["bash", "-c", "set -e\n" + script],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        job.stdout += done.stdout
        job.stderr += done.stderr
        return done.returncode

    def runs(when: str) -> bool:
        return {"success()": not job.returncode, "failure()": bool(job.returncode)}.get(
            when, when == "always()"
        )

    def keep(name: str, path: str) -> None:
        value = re.sub(r"\$\{\{ env\.(\w+) \}\}", lambda m: env[m[1]], path)
        job.artifacts[name] = workdir / value

    if name == "gitlab-ci.yml":
        script = [step.run for step in steps if step.run and step.when == "success()"]
        job.returncode = shell("\n".join(script))
        env["CI_JOB_STATUS"] = "failed" if job.returncode else "success"
        for step in steps:
            if step.run and step.when == "always()":
                shell(step.run)
        (artifacts,) = [step.inputs for step in steps if step.uses == "artifacts"]
        if runs(f"{artifacts['when']}()"):
            for key, value in artifacts.items():
                if key.startswith("path ") or key == "junit":
                    keep(value if key != "junit" else "junit", value)
        return job
    for step in steps:
        if not runs(step.when):
            continue
        if step.run is not None:
            status = shell(step.run)
            job.returncode = job.returncode or status
        elif step.uses and step.uses.startswith("actions/upload-artifact@"):
            keep(step.inputs["name"], step.inputs["path"])
        # checkout and the toolchains' set-up: this machine has them
    return job


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


#: A port with a mistake that fails a few vectors (a recentWindow not checked against the
#: budget): quick to triage, and numpy's dispatch plays no part in it.
FAILING_PORT = "snapkv-conformance adapter --mutant recent-window-unchecked"
KNOWN = "conformance-known-failures.txt"
#: The artifact that keeps the known-failures file: by name on GitHub, by path on GitLab.
KNOWN_ARTIFACT = {"github-actions.yml": "conformance-known-failures", "gitlab-ci.yml": KNOWN}


def fresh_checkout(repo: Path) -> None:
    """The repository as the next CI run checks it out: what the last run wrote is gone (the
    virtual environment and the port's build kept, as a CI cache would keep them)."""
    subprocess.run(
        ["git", "clean", "-fdxq", "-e", ".snapkv-venv", "-e", "build/"],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def commit(repo: Path, path: str, data: bytes) -> None:
    (repo / path).write_bytes(data)
    for command in (
        ["git", "add", path],
        ["git", "-c", "user.name=port", "-c", "user.email=port@example.org", "commit", "-qm", path],
    ):
        subprocess.run(command, cwd=repo, check=True, capture_output=True)


@pytest.mark.parametrize("name", sorted(RECIPE_PARSERS))
def test_a_port_s_first_second_and_third_runs_hand_the_maintainer_the_list(
    name: str, fresh_kit: tuple[Path, Path], port_repo: Path
) -> None:
    """First run, no list yet and a port that fails some vectors: red, the list of exactly
    those written and kept as an artifact, and one log line saying where to commit it. Second
    run, that file committed: green, nothing to commit. Third run, the port fixed (the Go
    port passes everything): red with the stale lines alone (no triage), and the rewritten
    list, now empty, kept and named the same way."""
    first = run_recipe(name, fresh_kit, port_repo, ADAPTER=FAILING_PORT)
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-3000:]
    failed = re.findall(r"^FAIL (\S+): call ", first.kit_output(), re.M)
    assert failed, first.kit_output()[-2000:]
    artifact = first.artifacts[KNOWN_ARTIFACT[name]]
    assert read_known_failures(artifact) == set(failed)
    assert first.commit_lines() == [COMMIT_LINES[name]]
    assert (port_repo / "conformance-junit.xml").is_file()

    listed = artifact.read_bytes()
    fresh_checkout(port_repo)
    commit(port_repo, KNOWN, listed)
    second = run_recipe(name, fresh_kit, port_repo, ADAPTER=FAILING_PORT)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert second.commit_lines() == []
    summary = second.kit_output().splitlines()
    assert f"known failures ({KNOWN}): {len(failed)} still failing, 0 now passing" in summary
    assert (port_repo / KNOWN).read_bytes() == listed  # rewritten as it was: nothing to commit

    fresh_checkout(port_repo)
    third = run_recipe(name, fresh_kit, port_repo)
    assert third.returncode == 1, third.stdout[-3000:] + third.stderr[-3000:]
    output = third.kit_output()
    stale = ": pass (listed as a known failure, but it passes: remove it from the list)"
    assert output.split("\n\n")[0].splitlines() == [f"FAIL {i}{stale}" for i in sorted(failed)]
    assert "triage" not in output and "failures by first divergence" not in output
    assert output.endswith(f"{COMMITTED - len(failed)} passed, {len(failed)} failed")
    rewritten = third.artifacts[KNOWN_ARTIFACT[name]]
    assert rewritten.is_file() and read_known_failures(rewritten) == set()
    assert third.commit_lines() == [COMMIT_LINES[name]]


def test_an_adapter_that_cannot_start_exits_2_with_the_reason_in_the_junit_file(
    fresh_kit: tuple[Path, Path], port_repo: Path
) -> None:
    """2 for an adapter that cannot start (the recipes' comments; 1 and 0 are the three runs'
    above): the JUnit file says why, and no list is written, so the log names none."""
    junit = port_repo / "conformance-junit.xml"
    missing = run_recipe("gitlab-ci.yml", fresh_kit, port_repo, ADAPTER="/nonexistent/adapter")
    assert missing.returncode == 2, missing.stdout[-2000:] + missing.stderr[-2000:]
    (error,) = ET.parse(junit).getroot().iter("error")
    assert "cannot run the adapter /nonexistent/adapter" in error.get("message", "")
    assert not (port_repo / KNOWN).exists() and missing.commit_lines() == []


def test_the_gitlab_image_has_the_default_build_s_toolchain() -> None:
    """The GitLab job runs in one image: it must be the default build's (Go); Python, which
    golang images lack, is installed by the recipe's first line when missing."""
    text = (RECIPES / "gitlab-ci.yml").read_text()
    env_values, steps = gitlab_steps(text)
    assert env_values["BUILD"].startswith("make -C adapters/go")
    assert re.search(r"^  image: golang:", text, re.M), "the image must carry Go"
    first = steps[0].run or ""
    assert "python3-venv" in first and first.startswith("python3 -m venv --help")


def test_each_recipe_keeps_the_file_its_run_writes_under_the_name_its_log_gives() -> None:
    """The run writes KNOWN_FAILURES; GitHub uploads that path (by the variable) as the
    artifact the log line names; GitLab keeps the path written out, which must be the
    variable's value (its comment says to keep them the same)."""
    env_values, steps = github_steps((RECIPES / "github-actions.yml").read_text())
    kit_run = next(step.run for step in steps if step.run and "snapkv-conformance run" in step.run)
    assert '--write-known-failures "$KNOWN_FAILURES"' in kit_run
    uploads = {step.inputs["name"]: step for step in steps if step.uses and "upload" in step.uses}
    known = uploads[KNOWN_ARTIFACT["github-actions.yml"]]
    assert known.inputs["path"] == "${{ env.KNOWN_FAILURES }}" and known.when == "failure()"
    env_values, steps = gitlab_steps((RECIPES / "gitlab-ci.yml").read_text())
    (artifacts,) = [step.inputs for step in steps if step.uses == "artifacts"]
    assert artifacts[f"path {env_values['KNOWN_FAILURES']}"] == KNOWN_ARTIFACT["gitlab-ci.yml"]
    assert artifacts["when"] == "always"

"""The nightly fuzz campaign of docs/ci/nightly-fuzz.yml runs as written: three nights of its
four shard jobs and its merge job, with the kit installed from a wheel into a fresh virtual
environment.

The workflow's ``run:`` steps run with bash, as written, in a directory of their own per job
(the port's checkout: ``adapters/`` is this repository's, so the Go template is the port).
Its ``uses:`` steps are GitHub's own actions; they are played here by copying directories: the
cache (``fuzz-db``, restored by the shards, saved by the merge job) and the artifacts (each
shard's ``findings`` and ``fuzz-db``, downloaded by the merge job to ``shards/<name>/``). Only
``SNAPKV_KIT`` (a placeholder URL) and the budgets are changed, and on the second and third
nights the port is a catalogued mutant, so that there are findings to merge.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.toolchains import build_lock, require_tools
from tests.support.wheel import build_wheel

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

RECIPE = ROOT / "docs" / "ci" / "nightly-fuzz.yml"
MUTANT = shlex.join(
    [sys.executable, "-m", "conformance", "adapter", "--mutant", "ties-to-higher-position"]
)


@dataclass
class Job:
    env: dict[str, str]
    #: ("run", command) or ("uses", action, {with: values}), in order.
    steps: list[tuple] = field(default_factory=list)


def parse(text: str) -> tuple[dict[str, str], dict[str, Job]]:
    """The workflow's env, and each job's env and steps."""
    top = text.split("\njobs:\n", 1)[0]
    env = dict(re.findall(r'^  ([A-Z_]+): "(.*)"$', top, re.M))
    jobs = {}
    jobs_text = text.split("\njobs:\n", 1)[1]
    for name, body in re.findall(r"^  (\w+):\n((?:    .*\n|\n)+)", jobs_text, re.M):
        job = Job(dict(re.findall(r'^      ([A-Z_]+): "(.*)"$', body, re.M)))
        for step in re.split(r"^      - ", body.split("    steps:\n", 1)[1], flags=re.M)[1:]:
            kind, _, rest = step.partition(": ")
            first, _, more = rest.partition("\n")
            if kind == "run":
                job.steps.append(("run", first))
            else:
                given = dict(re.findall(r"^          ([\w-]+): (.+)$", more, re.M))
                job.steps.append(("uses", first.split()[0], given))
        jobs[name] = job
    return env, jobs


@pytest.fixture(scope="module")
def fresh_kit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A wheel built from this checkout, and a fresh virtual environment's bin directory."""
    require_tools("go", "make")
    base = tmp_path_factory.mktemp("nightly")
    wheel = build_wheel(base)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    return wheel, base / "venv" / "bin"


class Campaign:
    """Nights of the workflow, sharing one cache, as GitHub would keep it."""

    def __init__(self, base: Path, kit: tuple[Path, Path]) -> None:
        self.base = base
        self.wheel, self.venv = kit
        self.cache = base / "cache"
        self.env, self.jobs = parse(RECIPE.read_text())

    def night(self, number: int, **overrides: str) -> dict[str, list[subprocess.CompletedProcess]]:
        night = self.base / f"night-{number}"
        artifacts = night / "artifacts"
        outputs: dict[str, list[subprocess.CompletedProcess]] = {}
        for shard in (1, 2, 3, 4):
            work = self.checkout(night / f"shard-{shard}")
            matrix = {"matrix.shard": str(shard), "github.run_number": str(number)}
            outputs[f"shard-{shard}"] = self.job("shard", work, matrix, artifacts, overrides)
        work = self.checkout(night / "merge")
        outputs["merge"] = self.job("merge", work, {}, artifacts, overrides)
        return outputs

    def checkout(self, work: Path) -> Path:
        work.mkdir(parents=True)
        (work / "adapters").symlink_to(ROOT / "adapters")
        return work

    def job(self, name, work, matrix, artifacts, overrides) -> list[subprocess.CompletedProcess]:
        job = self.jobs[name]
        env = dict(os.environ, **self.env, **job.env)
        env.update(SNAPKV_KIT=str(self.wheel), **overrides)
        for key, value in list(env.items()):
            env[key] = re.sub(r"\$\{\{ ([\w.]+) \}\}", lambda m: matrix[m[1]], value)
        env["PATH"] = f"{self.venv}{os.pathsep}{os.environ['PATH']}"
        env.pop("PYTHONPATH", None)
        done = []
        for step in job.steps:
            if step[0] == "uses":
                self.play(step[1], step[2], work, artifacts, matrix)
                continue
            with build_lock("go"):
                result = subprocess.run(
                    ["bash", "-c", "set -e\n" + step[1]], cwd=work, env=env,
                    capture_output=True, text=True, timeout=900, check=False,
                )  # fmt: skip
            done.append(result)
            if result.returncode:
                break
        return done

    def play(self, action, given, work, artifacts, matrix) -> None:
        """GitHub's actions, as directory copies."""
        if action.startswith("actions/cache/restore"):
            assert given["path"] == "fuzz-db"
            if self.cache.exists():
                shutil.copytree(self.cache, work / "fuzz-db")
        elif action.startswith("actions/cache/save"):
            shutil.rmtree(self.cache, ignore_errors=True)
            shutil.copytree(work / given["path"], self.cache)
        elif action.startswith("actions/upload-artifact") and "matrix.shard" in given["name"]:
            name = given["name"].replace("${{ matrix.shard }}", matrix["matrix.shard"])
            for part in ("findings", "fuzz-db"):  # the step's path: block
                if (work / part).exists():
                    shutil.copytree(work / part, artifacts / name / part)
        elif action.startswith("actions/download-artifact"):
            assert given["pattern"] == "fuzz-shard-*" and given["path"] == "shards"
            for each in sorted(artifacts.glob("fuzz-shard-*")):
                shutil.copytree(each, work / "shards" / each.name)


def test_a_campaign_of_three_nights_merges_its_findings_and_keeps_its_database(
    fresh_kit: tuple[Path, Path], tmp_path: Path
) -> None:
    campaign = Campaign(tmp_path, fresh_kit)
    assert set(campaign.jobs) == {"shard", "merge"}
    uses = {
        name: [step[1].split("@")[0] for step in job.steps if step[0] == "uses"]
        for name, job in campaign.jobs.items()
    }
    assert {"actions/cache/restore", "actions/upload-artifact"} <= set(uses["shard"])
    assert {"actions/download-artifact", "actions/cache/save"} <= set(uses["merge"])
    small = {"EXAMPLES": "30", "SESSIONS": "6", "SHRINKS": "30"}

    # Night 1: the Go port conforms. Every step passes; the merge finds nothing to report.
    first = campaign.night(1, **small)
    for name, steps in first.items():
        assert all(step.returncode == 0 for step in steps), (name, steps[-1].stderr[-2000:])
    assert "no findings" in first["merge"][-1].stdout
    assert "seed 1, shard 3/4 (search seed 6)" in first["shard-3"][2].stdout

    # Night 2: a port with a tie bug. Each shard finds it (and passes: the merge reports);
    # the merge job fails, listing the findings of every shard together.
    second = campaign.night(2, **small, BUILD="true", ADAPTER=MUTANT)
    for shard in (1, 2, 3, 4):
        steps = second[f"shard-{shard}"]
        assert all(step.returncode == 0 for step in steps), steps[-1].stderr[-2000:]
        assert "difference found" in steps[2].stdout
    merge = second["merge"][-1]
    assert merge.returncode == 1, merge.stdout + merge.stderr
    listed = re.findall(r"^findings/\S+\.json$", merge.stdout, re.M)
    assert len(listed) >= 2  # vectors from several shards, merged
    merged = tmp_path / "night-2" / "merge" / "findings"
    check = subprocess.run(
        [str(campaign.venv / "snapkv-conformance"), "run", str(merged), "--adapter", MUTANT],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert check.returncode == 1 and "wrong-victims" in check.stdout

    # Night 3: the cache carries the merged database; every shard replays a stored failure
    # before drawing anything of its own.
    third = campaign.night(3, **small, BUILD="true", ADAPTER=MUTANT)
    for shard in (1, 2, 3, 4):
        assert "difference found after 1 examples" in third[f"shard-{shard}"][2].stdout

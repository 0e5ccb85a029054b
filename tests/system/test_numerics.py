"""``--numerics P`` through real adapter processes: a precision-only port (bfloat16 history,
float32 warp reduction) fails the exact run and is told which profile in triage, passes under
that profile in ``run``, the pytest plugin and ``matrix``, and fails a tighter one; the report,
JUnit and matrix files name the profile."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from conformance.spec import resources

pytestmark = pytest.mark.slow
pytest_plugins = ["pytester"]

PORT = [sys.executable, str(Path(__file__).resolve().parents[1] / "support" / "precision_ports.py")]
THEMES = ("summation", "weights", "ring")
BOUND = 300.0


def paths() -> list[str]:
    return [str(resources.suite_dir() / theme) for theme in THEMES]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "conformance", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=BOUND)


def adapter(name: str) -> str:
    return " ".join([*PORT, name])


def test_run_passes_under_the_ports_profile_and_the_files_say_so(tmp_path: Path) -> None:
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    done = cli(
        "run", "--adapter", adapter("bf16-warp"), "--numerics", "bfloat16", "--jobs", "2",
        "--report", str(report), "--junit", str(junit), *paths(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"(\d+) exact, (\d+) within bfloat16, (\d+) n/a, 0 failed", last)
    assert match and int(match[2]) > 0, last
    assert re.search(r"^\S+: within bfloat16 \(1 evict\(s\) differ; widest", done.stdout, re.M)
    data = json.loads(report.read_text())
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["numerics"] == "bfloat16" and data["ok"]
    assert data["summary"]["within"] == int(match[2])
    statuses = {r["numerics"]["status"] for r in data["results"] if r["numerics"]}
    assert statuses <= {"within", "n/a"} and "within" in statuses
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert properties["numerics"] == "bfloat16"


def test_an_exact_run_fails_and_triage_names_the_profile() -> None:
    done = cli("run", "--adapter", adapter("bf16-warp"), "--jobs", "2", *paths())
    assert done.returncode == 1
    triage = [line for line in done.stdout.splitlines() if line.startswith("triage: ")]
    assert triage and "rounding within bfloat16 weights with float32 accumulation" in triage[0]
    assert "rerun with --numerics bfloat16" in triage[0]
    assert done.stdout.strip().splitlines()[-1].endswith("failed")


def test_a_tighter_profile_fails() -> None:
    done = cli("run", "--adapter", adapter("bf16-warp"), "--numerics", "float32", *paths())
    assert done.returncode == 1
    assert "    under float32: " in done.stdout


def test_the_pytest_plugin_takes_the_profile(pytester: pytest.Pytester) -> None:
    args = ["-p", "no:cacheprovider", "--snapkv-adapter", adapter("bf16-warp")]
    for path in paths():
        args += ["--snapkv-vectors", path]
    passed = pytester.runpytest(*args, "--snapkv-numerics", "bfloat16")
    assert passed.ret == pytest.ExitCode.OK
    assert any(
        re.fullmatch(r"snapkv --numerics bfloat16: \d+ exact, [1-9]\d* within bfloat16, .*", line)
        for line in passed.outlines
    )
    failed = pytester.runpytest(*args)
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    assert any("rerun with --numerics bfloat16" in line for line in failed.outlines)
    refused = pytester.runpytest(*args, "--snapkv-numerics", "float8")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR


def test_matrix_takes_the_profile(tmp_path: Path) -> None:
    out = tmp_path / "m"
    done = cli(
        "matrix", "--adapter", f"warp={adapter('bf16-warp')}", "--numerics", "bfloat16",
        "--out", str(out), *paths(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    markdown = (tmp_path / "m.md").read_text()
    assert "under the numerics profile bfloat16" in markdown
    assert "within bfloat16" in markdown
    assert 'class="within"' in (tmp_path / "m.html").read_text()
    exact = cli("matrix", "--adapter", f"warp={adapter('bf16-warp')}", "--out", str(out), *paths())
    assert exact.returncode == 1

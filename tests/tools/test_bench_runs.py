"""``snapkv-conformance bench``: it times a port beside the reference and checks that their
answers agree. Nothing here asserts a speed: only the shape of the output and the verdicts."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from conformance.tools import bench

REFERENCE = shlex.join(bench.REFERENCE_ARGV)


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "bench", "--repeats", "2", "--steps", "40", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_conforming_adapter_agrees_and_gets_a_ratio() -> None:
    done = _bench("--adapter", REFERENCE, "--workload", "defaults")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.finditer(r"^  .* ([\d,.]+) +([\d.]+) +([\d,.]+) +([\d.]+)  (.*)$", done.stdout, re.M)
    row = list(rows)[-1]  # the reference's row, then the port's
    # steps/s, x ref, CPU steps/s, x ref: two positive rates and two positive ratios.
    assert min(float(x.replace(",", "")) for x in row.groups()[:4]) > 0, done.stdout
    assert row[5] == "agree (byte for byte)", done.stdout
    assert "port: snapkv-conformance reference (python)" in done.stdout, done.stdout
    assert "load average" in done.stdout


def test_a_port_that_evicts_differently_fails_the_bench() -> None:
    mutant = f"{REFERENCE} --mutant ties-to-higher-position"
    done = _bench("--adapter", mutant, "--workload", "defaults", "--steps", "600")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "differs: reference" in done.stdout and "answers differ" in done.stdout, done.stdout


def test_an_adapter_that_cannot_start_is_a_usage_error() -> None:
    done = _bench("--adapter", "/nonexistent/snapkv-adapter")
    assert done.returncode == 2, done.stdout + done.stderr
    expected = "snapkv-conformance bench: error: cannot run the adapter"
    assert done.stderr.startswith(expected), done.stderr
    assert "Traceback" not in done.stderr


def test_answers_that_differ_only_in_spelling_agree_by_value() -> None:
    reference = b'{"id":1,"ok":true}\n{"id":2,"ok":true,"victims":[]}\n'
    assert bench.agreement(reference, reference) == "bytes"
    spelled = b'{"ok": true, "id": 1}\r\n{"victims":[],"id":2,"ok":true}\n'
    assert bench.agreement(reference, spelled) == "values"
    assert bench.agreement(reference, reference[:19]).startswith("2 answers")
    wrong = b'{"id":1,"ok":true}\n{"id":2,"ok":true,"victims":[1]}\n'
    assert bench.agreement(reference, wrong).startswith("the answer to request id 2 differs")


def test_workload_streams_are_deterministic_and_steady() -> None:
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=6)
    stream = workload.stream()
    assert stream == workload.stream()
    lines = stream.splitlines()
    assert len(lines) == 2 + 2 * 6 + 1
    # Once the cache is full every step carries budget weights.
    assert lines[-3].count(b",") == 3 + 3  # "id", "op", "pos" members, then 4 weights

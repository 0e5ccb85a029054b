"""The adapter programs the benchmark scripts compare, and one timed run of one.

The reference adapter is ``python -m conformance adapter``; the in-tree ports are found where
their builds put them (``make -C adapters/c``, ``cargo build --release`` and so on), and a port
that is not built is ``None``, which the scripts report as absent. Request streams come from
:class:`conformance.tools.bench.Workload`, as ``snapkv-conformance bench`` sends them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.tools.bench import REFERENCE_ARGV  # noqa: E402

PORTS = {
    "c": ROOT / "adapters" / "c" / "build" / "snapkv-adapter",
    "rust": ROOT / "adapters" / "rust" / "target" / "release" / "snapkv-adapter",
    "go": ROOT / "adapters" / "go" / "build" / "snapkv-adapter",
    "typescript": ROOT / "adapters" / "typescript" / "build" / "snapkv-adapter",
}


def adapters() -> dict[str, list[str] | None]:
    """The reference adapter's argv, then each port's (None where it is not built)."""
    found: dict[str, list[str] | None] = {"reference": list(REFERENCE_ARGV)}
    for name, path in PORTS.items():
        found[name] = [str(path)] if path.is_file() else None
    return found


def run_once(argv: list[str], stream: bytes) -> tuple[float, bytes]:
    """Pipe ``stream`` through one adapter process; its CPU seconds (user + system from
    ``wait4``, start-up included) and its answers. Exits naming the program if it fails."""
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(stream)
            process.stdin.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    answers = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    writer.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with status {process.returncode}")
    return usage.ru_utime + usage.ru_stime, answers


def victims(answers: bytes) -> list[object]:
    """The victims of each answer, in order (None for an answer without victims)."""
    return [json.loads(line).get("victims") for line in answers.splitlines()]

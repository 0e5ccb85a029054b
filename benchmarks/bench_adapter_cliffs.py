"""Parameter cliffs in every adapter: the same request stream at the defaults and at maximal
``obsWindow`` or ``poolKernel``, timed side by side.

SPEC.md §2.1 lets every parameter be as large as ``2^31 - 1``. Two naive implementations turn
that into a cliff: pooling that visits ``poolKernel`` neighbours per entry (O(kept^2) once the
kernel covers the cache), and sums that re-add every written ring column at each evict (a ring
of ``2^31 - 1`` slots never wraps, so the columns written grow with the run). This script runs
one decode stream (budget 1024, recentWindow 16, an ``evict`` after every step, float32
weights from a seeded generator) through each adapter three ways:

- ``defaults``: obsWindow 16, poolKernel 7;
- ``obsWindow max``: obsWindow 2^31 - 1, poolKernel 7;
- ``poolKernel max``: obsWindow 16, poolKernel 2^31 - 1.

The lines differ only in the ``new`` request. It prints, per adapter and setting, the median
adapter CPU seconds over the repeats (the adapter process's user + system time from
``wait4``, start-up included; steadier than wall time on a shared machine), and the ratio of
each maximal setting to the defaults. Repeats are interleaved across adapters and settings.
An adapter that is not built is reported as absent.

    python3 benchmarks/bench_adapter_cliffs.py [--steps 3000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
INT31_MAX = 2**31 - 1
SETTINGS = {
    "defaults": {"budget": 1024, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7},
    "obsWindow max": {"budget": 1024, "recentWindow": 16, "obsWindow": INT31_MAX, "poolKernel": 7},
    "poolKernel max": {
        "budget": 1024,
        "recentWindow": 16,
        "obsWindow": 16,
        "poolKernel": INT31_MAX,
    },
}
BUILT = {
    "c": ROOT / "adapters" / "c" / "build" / "snapkv-adapter",
    "rust": ROOT / "adapters" / "rust" / "target" / "release" / "snapkv-adapter",
    "go": ROOT / "adapters" / "go" / "build" / "snapkv-adapter",
    "typescript": ROOT / "adapters" / "typescript" / "build" / "snapkv-adapter",
}


def adapters() -> dict[str, list[str] | None]:
    found: dict[str, list[str] | None] = {
        "reference": [sys.executable, "-m", "conformance", "adapter"]
    }
    for name, path in BUILT.items():
        found[name] = [str(path)] if path.is_file() else None
    return found


def body(steps: int, seed: int) -> bytes:
    """The step and evict lines, shared by every setting (ids from 2 on)."""
    rng = np.random.default_rng(seed)
    lines = []
    budget = SETTINGS["defaults"]["budget"]
    kept = 0
    for pos in range(steps):
        weights = rng.random(kept, dtype=np.float32).astype(np.float64).tolist()
        attn = "[" + ",".join(map(repr, weights)) + "]"
        lines.append(f'{{"id":{2 * pos + 2},"op":"step","pos":{pos},"attn":{attn}}}')
        lines.append(f'{{"id":{2 * pos + 3},"op":"evict"}}')
        kept = min(kept + 1, budget)
    lines.append(f'{{"id":{2 * steps + 2},"op":"bye"}}')
    return ("\n".join(lines) + "\n").encode()


def head(params: dict[str, int]) -> bytes:
    new = {"id": 1, "op": "new", "params": params, "seed": 0}
    line = json.dumps(new, separators=(",", ":"))
    return ('{"id":0,"op":"hello","protocol":1}\n' + line + "\n").encode()


def run_once(argv: list[str], stream: bytes) -> tuple[float, bytes]:
    """Pipe ``stream`` through one adapter process; its CPU seconds and its answers."""
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
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
        raise SystemExit(f"{argv[0]} exited with status {process.returncode}")
    return usage.ru_utime + usage.ru_stime, answers


def victims(answers: bytes) -> list[object]:
    """The evict answers' victim lists (equal across settings only where the policy agrees)."""
    return [json.loads(line).get("victims") for line in answers.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    shared = body(options.steps, options.seed)
    found = adapters()
    times: dict[tuple[str, str], list[float]] = {}
    answers: dict[tuple[str, str], list[object]] = {}
    for _ in range(options.repeats):
        for name, argv in found.items():
            if argv is None:
                continue
            for setting, params in SETTINGS.items():
                seconds, raw = run_once(argv, head(params) + shared)
                times.setdefault((name, setting), []).append(seconds)
                answers.setdefault((name, setting), victims(raw))
    print(
        f"{options.steps} steps, budget 1024, recentWindow 16, evict after every step; "
        f"median adapter CPU seconds of {options.repeats} (load average "
        f"{os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'adapter':<12} {'defaults':>9} {'obsWindow max':>14} {'ratio':>6} "
        f"{'poolKernel max':>15} {'ratio':>6}"
    )
    for name, argv in found.items():
        if argv is None:
            print(f"{name:<12} not built")
            continue
        base = statistics.median(times[(name, "defaults")])
        obs = statistics.median(times[(name, "obsWindow max")])
        kernel = statistics.median(times[(name, "poolKernel max")])
        print(
            f"{name:<12} {base:9.2f} {obs:14.2f} {obs / base:5.2f}x {kernel:15.2f} "
            f"{kernel / base:5.2f}x"
        )
    for setting in SETTINGS:
        reference = answers[("reference", setting)]
        for name, argv in found.items():
            if argv is not None and answers[(name, setting)] != reference:
                raise SystemExit(f"{name} answered {setting} differently from the reference")
    print("every adapter answered each setting exactly as the reference did")


if __name__ == "__main__":
    main()
